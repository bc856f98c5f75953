//! Byte counts of one region (or a sum of regions).
//!
//! Every field is an `Option`: a figure the source does not give is `None`,
//! never a made-up zero. A maps-only reading has a `size` and nothing else;
//! vmmap has no PSS; smaps has no single "dirty" figure (it splits it into
//! shared and private), so `dirty` is only filled from vmmap and
//! [`Sizes::dirty`] derives it for Linux.

use serde::ser::{Serialize, SerializeMap, Serializer};

use super::named::Named;

/// Declares the known size keys once: the smaps key (if the kernel prints
/// one), the field name (also the JSON name) and a short column label.
macro_rules! known_sizes {
    (
        known {
            $( $(#[$doc:meta])* $field:ident / $variant:ident = $smaps:literal, $label:literal, $help:literal; )*
        }
        derived {
            $( $(#[$ddoc:meta])* $dvariant:ident = $dname:literal, $dhelp:literal; )*
        }
    ) => {
        /// A figure: every known size key (in [`KNOWN_KEYS`] order), then
        /// the ones derived from them. Its [`Named`] name is the JSON key.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Figure {
            $( $(#[$doc])* $variant, )*
            $( $(#[$ddoc])* $dvariant, )*
        }

        impl Named for Figure {
            const ALL: &'static [Figure] = &[ $( Figure::$variant, )* $( Figure::$dvariant, )* ];

            fn name(self) -> &'static str {
                match self {
                    $( Figure::$variant => stringify!($field), )*
                    $( Figure::$dvariant => $dname, )*
                }
            }

            fn help(self) -> &'static str {
                match self {
                    $( Figure::$variant => $help, )*
                    $( Figure::$dvariant => $dhelp, )*
                }
            }
        }

        /// Sizes in bytes, one field per known key; unknown smaps keys that
        /// carry a size (newer kernels, Android) are kept in `extra`.
        #[derive(Debug, Clone, Default, PartialEq, Eq)]
        pub struct Sizes {
            $( $(#[$doc])* pub $field: Option<u64>, )*
            /// Size keys this build does not know, as (snake_case name, bytes).
            pub extra: Vec<(String, u64)>,
        }

        /// Every known size key, in the order smaps prints them.
        pub const KNOWN_KEYS: &[SizeKey] = &[
            $( SizeKey { name: stringify!($field), smaps: $smaps, label: $label }, )*
        ];

        impl Sizes {
            /// The field of a known key as the source gave it; `None` for
            /// a derived figure (see [`Sizes::figure`]).
            pub fn field(&self, figure: Figure) -> Option<u64> {
                match figure {
                    $( Figure::$variant => self.$field, )*
                    _ => None,
                }
            }

            /// The slot of a known key; `None` for a derived figure.
            pub(crate) fn field_mut(&mut self, figure: Figure) -> Option<&mut Option<u64>> {
                match figure {
                    $( Figure::$variant => Some(&mut self.$field), )*
                    _ => None,
                }
            }

            /// Sets a figure by its snake_case name, as a document from
            /// outside names it (an unknown name goes to `extra`).
            pub(crate) fn set(&mut self, name: &str, value: u64) {
                match name {
                    $( stringify!($field) => self.$field = Some(value), )*
                    _ => {
                        if let Some(slot) = self.extra_slot(name) {
                            *slot = value;
                        }
                    }
                }
            }

            /// The slot of the known key at `index` in [`KNOWN_KEYS`].
            #[inline]
            pub(crate) fn slot_at(&mut self, index: usize) -> Option<&mut Option<u64>> {
                let mut i = 0usize;
                $( if i == index { return Some(&mut self.$field); } i += 1; )*
                let _ = i;
                None
            }

            /// Every known figure, in [`KNOWN_KEYS`] order.
            #[inline]
            pub fn known(&self) -> [Option<u64>; KNOWN_KEYS.len()] {
                [ $( self.$field, )* ]
            }

            /// Adds every figure of `other` into `self`. A figure that
            /// `other` lacks leaves the sum as it was; the sum only becomes
            /// known once some part knows it. Sums saturate at `u64::MAX`
            /// (16 EiB, more than any machine has): crafted input can make
            /// a total too big, never wrap it round to a small one.
            pub fn add(&mut self, other: &Sizes) {
                $( if let Some(v) = other.$field {
                    if !PER_MAPPING.contains(&Figure::$variant) {
                        self.$field = Some(self.$field.unwrap_or(0).saturating_add(v));
                    }
                } )*
                for (name, v) in &other.extra {
                    if let Some(slot) = self.extra_slot(name) {
                        *slot = slot.saturating_add(*v);
                    }
                }
            }

            /// (name, value) of every known figure that is present, then the extras.
            pub fn present(&self) -> Vec<(&str, u64)> {
                let mut out: Vec<(&str, u64)> = Vec::new();
                $( if let Some(v) = self.$field { out.push((stringify!($field), v)); } )*
                out.extend(self.extra.iter().map(|(n, v)| (n.as_str(), *v)));
                out
            }
        }
    };
}

/// The most unknown size keys one [`Sizes`] keeps. A kernel adds a key
/// or two at a time; the smaps reader refuses a file with more than this
/// many distinct unknown keys (so one process's sums are whole), and a sum
/// over many crafted processes keeps the first this many: its search per
/// key stays bounded, where one slot per distinct name made `add` linear
/// in the keys seen so far (80,000 mappings, each with its own key: 30 s).
pub(crate) const MAX_EXTRA: usize = 64;

/// Figures that describe a mapping rather than count its bytes (a page
/// size): a sum of them means nothing, so sums leave them out.
const PER_MAPPING: &[Figure] = &[Figure::KernelPageSize, Figure::MmuPageSize];

impl Figure {
    /// Whether the figure counts bytes that add up over mappings (every
    /// figure but a page size).
    pub fn counts_bytes(self) -> bool {
        !PER_MAPPING.contains(&self)
    }
}

/// The proportional figures: `smaps` rounds each mapping's down to a kB
/// where `smaps_rollup` sums them exactly, so a process's total from its
/// mappings may fall short of the rollup's by up to 1 KiB a mapping.
pub(crate) const ROUNDED_PER_MAPPING: &[Figure] = &[
    Figure::Pss,
    Figure::PssDirty,
    Figure::PssAnon,
    Figure::PssFile,
    Figure::PssShmem,
    Figure::SwapPss,
];

/// The index in [`KNOWN_KEYS`] of a smaps key, trying `hint` first.
///
/// smaps prints its keys in the same order for every mapping, so a parser
/// that passes the index after the previous key's finds almost every key at
/// the first comparison instead of searching the list.
#[inline]
pub(crate) fn smaps_key_index(key: &[u8], hint: usize) -> Option<usize> {
    if let Some(k) = KNOWN_KEYS.get(hint) {
        if k.smaps.as_bytes() == key && !key.is_empty() {
            return Some(hint);
        }
    }
    if key.is_empty() {
        return None;
    }
    KNOWN_KEYS.iter().position(|k| k.smaps.as_bytes() == key)
}

/// Describes one known size key.
#[derive(Debug, Clone, Copy)]
pub struct SizeKey {
    /// snake_case name: the Rust field and the JSON key.
    pub name: &'static str,
    /// The key as `/proc/PID/smaps` prints it; empty when smaps has none.
    pub smaps: &'static str,
    /// Short column label for tables.
    pub label: &'static str,
}

known_sizes! {
    known {
    /// Virtual size: smaps `Size` (else the address range), vmmap VSIZE.
    size / Size = "Size", "Size", "virtual size";
    /// `KernelPageSize`: the page size the kernel backs the mapping with.
    /// Describes the mapping, so sums leave it out.
    kernel_page_size / KernelPageSize = "KernelPageSize", "KPageSize", "the page size the kernel backs the mapping with";
    /// `MMUPageSize`: the page size the MMU maps it with. Not summed.
    mmu_page_size / MmuPageSize = "MMUPageSize", "MMUPageSize", "the page size the MMU maps it with";
    /// Resident: smaps `Rss`, vmmap RSDNT (RESIDENT in the summary).
    rss / Rss = "Rss", "RSS", "resident bytes";
    /// `Pss`: resident bytes with each page divided by the number of
    /// processes that map it, so it adds up across processes.
    pss / Pss = "Pss", "PSS", "resident bytes, each page divided among the processes that map it";
    /// `Pss_Dirty`: the dirty part of `pss` (kernels since 6.0).
    pss_dirty / PssDirty = "Pss_Dirty", "PSSDirty", "the dirty part of pss (Linux 6.0 and later)";
    /// `Pss_Anon`: the anonymous part of `pss` (`smaps_rollup` only).
    pss_anon / PssAnon = "Pss_Anon", "PSSAnon", "the anonymous part of pss";
    /// `Pss_File`: the file-backed part of `pss` (`smaps_rollup` only).
    pss_file / PssFile = "Pss_File", "PSSFile", "the file-backed part of pss";
    /// `Pss_Shmem`: the shared-memory part of `pss` (`smaps_rollup` only).
    pss_shmem / PssShmem = "Pss_Shmem", "PSSShmem", "the shared-memory part of pss";
    /// `Shared_Clean`: resident, unmodified, and mapped by other processes too.
    shared_clean / SharedClean = "Shared_Clean", "SharedClean", "resident, unmodified, mapped by other processes too";
    /// `Shared_Dirty`: resident, written, and mapped by other processes too.
    shared_dirty / SharedDirty = "Shared_Dirty", "SharedDirty", "resident, written, mapped by other processes too";
    /// `Private_Clean`: resident, unmodified, mapped by this process only.
    private_clean / PrivateClean = "Private_Clean", "PrivClean", "resident, unmodified, mapped by this process only";
    /// `Private_Dirty`: resident, written, mapped by this process only.
    private_dirty / PrivateDirty = "Private_Dirty", "PrivDirty", "resident, written, mapped by this process only";
    /// `Referenced`: resident bytes currently marked referenced (accessed).
    referenced / Referenced = "Referenced", "Referenced", "resident bytes marked referenced";
    /// `Anonymous`: resident pages that belong to no file (including
    /// private copies of file pages).
    anonymous / Anonymous = "Anonymous", "Anonymous", "resident pages that belong to no file";
    /// `KSM`: pages shared by kernel same-page merging.
    ksm / Ksm = "KSM", "KSM", "pages shared by kernel same-page merging";
    /// `LazyFree`: pages freed with `MADV_FREE` that the kernel has not
    /// taken back yet.
    lazy_free / LazyFree = "LazyFree", "LazyFree", "pages freed with MADV_FREE, not yet taken back";
    /// `AnonHugePages`: anonymous memory in transparent huge pages.
    anon_huge_pages / AnonHugePages = "AnonHugePages", "AnonHuge", "anonymous memory in transparent huge pages";
    /// `ShmemPmdMapped`: shared memory mapped with huge pages.
    shmem_pmd_mapped / ShmemPmdMapped = "ShmemPmdMapped", "ShmemPmd", "shared memory mapped with huge pages";
    /// `FilePmdMapped`: file pages mapped with huge pages.
    file_pmd_mapped / FilePmdMapped = "FilePmdMapped", "FilePmd", "file pages mapped with huge pages";
    /// `Shared_Hugetlb`: hugetlbfs pages shared with other processes (not in `rss`).
    shared_hugetlb / SharedHugetlb = "Shared_Hugetlb", "SharedHugetlb", "hugetlbfs pages shared with other processes";
    /// `Private_Hugetlb`: hugetlbfs pages of this process only (not in `rss`).
    private_hugetlb / PrivateHugetlb = "Private_Hugetlb", "PrivHugetlb", "hugetlbfs pages of this process only";
    /// Swapped out: smaps `Swap`, vmmap SWAP (SWAPPED in the summary).
    swap / Swap = "Swap", "Swap", "swapped out";
    /// `SwapPss`: `swap` with each page divided among the processes sharing it.
    swap_pss / SwapPss = "SwapPss", "SwapPSS", "swap, each page divided among the processes sharing it";
    /// `Locked`: pages locked in memory (`mlock`).
    locked / Locked = "Locked", "Locked", "pages locked in memory (mlock)";
    /// Dirty bytes as vmmap gives them (DIRTY). smaps has no such key, so
    /// it is never filled from Linux; [`Sizes::dirty`] adds shared and
    /// private dirty there instead.
    dirty / Dirty = "", "Dirty", "dirty bytes: vmmap DIRTY, or shared + private dirty";
    /// GPU memory a process holds (DRM fdinfo, dma-buf, nvidia-smi), its
    /// shares counted once across processes (docs/gpu-json.md). No source
    /// of regions gives it: `top` adds it to a process's totals.
    gpu / Gpu = "", "GPU", "GPU memory, shares counted once across processes";
    /// Swapped shared memory (tmpfs, `/dev/shm`, memfd, SysV, shared
    /// anonymous), which the kernel's `SwapPss` leaves out: this process's
    /// share, each object counted once across the selection read
    /// (`analyze::shmem_swap`). Summable; no smaps key.
    shmem_swap / ShmemSwap = "", "ShmemSwap", "swapped shared memory (tmpfs, /dev/shm, memfd, SysV) that SwapPss leaves out, each object counted once across the selection";
    /// Chromium's Linux "private memory footprint": `status` RssAnon +
    /// VmSwap, per process (readable where smaps is denied). Counts
    /// anonymous pages a process shares (after fork) in full, so it does
    /// not add up across processes; `footprint_pss` does.
    footprint / Footprint = "", "FOOTPRINT", "Chromium's private memory footprint: status RssAnon + VmSwap, per process (not summable)";
    /// The most the footprint has been over the process's life: macOS
    /// `ri_lifetime_max_phys_footprint` (libproc). Per process; Linux
    /// has no such figure.
    footprint_peak / FootprintPeak = "", "FootprintPeak", "macOS: the most the physical footprint has been over the process's life (libproc), per process";
    /// The most resident the process has been over its life: Linux
    /// `status` VmHWM (RSS's high-water mark). Per process, read with the
    /// rollup by `top`, `serve` and `export`; not summable.
    rss_peak / RssPeak = "", "RssPeak", "Linux: the most resident the process has been over its life (status VmHWM), per process (not summable)";
    /// Resident bytes touched during a `wss` interval: smaps `Referenced`
    /// read after the referenced bits were reset. Only `wss` gives it.
    touched / Touched = "", "Touched", "resident bytes touched during the interval (wss)";
    /// The 2004 mail's working set: every dirty byte plus the clean
    /// file-backed bytes touched during a `wss` interval.
    working_set / WorkingSet = "", "WorkingSet", "dirty bytes plus clean file bytes touched during the interval (wss)";
    /// Resident bytes not touched during a `wss` interval: `rss - touched`.
    cold / Cold = "", "Cold", "resident bytes not touched during the interval (wss)";
    }
    derived {
        /// Clean resident bytes: shared + private clean (Linux only).
        Clean = "clean", "clean resident bytes: shared + private clean";
        /// Unique set size: private clean + private dirty.
        Uss = "uss", "unique set size: private clean + private dirty";
        /// Transparent huge pages mapped: anonymous, shmem and file.
        Thp = "thp", "transparent huge pages mapped: anonymous, shmem and file";
        /// hugetlbfs pages: shared + private.
        Hugetlb = "hugetlb", "hugetlbfs pages: shared + private";
        /// The footprint in a form that adds up across processes:
        /// Pss_Anon + SwapPss.
        FootprintPss = "footprint_pss", "the footprint that adds up across processes: Pss_Anon + SwapPss";
        /// The summable footprint with the process's share of swapped
        /// shared memory: Pss_Anon + SwapPss + shmem_swap.
        FootprintPssShmem = "footprint_pss_shmem", "footprint_pss with the process's share of swapped shared memory: Pss_Anon + SwapPss + shmem_swap";
        /// Every swapped byte once across the selection: SwapPss + shmem_swap.
        SwapCounted = "swap_counted", "swapped bytes, each counted once across the selection: swap_pss + shmem_swap";
    }
}

impl Sizes {
    /// Dirty bytes: vmmap's DIRTY column, or on Linux shared + private
    /// dirty. `None` when the source says nothing about dirtiness.
    pub fn dirty(&self) -> Option<u64> {
        self.dirty.or_else(|| Some(self.shared_dirty?.saturating_add(self.private_dirty?)))
    }

    /// Clean resident bytes: shared + private clean (Linux only).
    pub(crate) fn clean(&self) -> Option<u64> {
        Some(self.shared_clean?.saturating_add(self.private_clean?))
    }

    /// The summable footprint: Pss_Anon + SwapPss, both needed (a
    /// kernel without Pss_Anon, or vmmap, has none).
    pub fn footprint_pss(&self) -> Option<u64> {
        Some(self.pss_anon?.saturating_add(self.swap_pss?))
    }

    /// Unique set size (private clean + private dirty): what freeing this
    /// alone would give back.
    pub fn uss(&self) -> Option<u64> {
        Some(self.private_clean?.saturating_add(self.private_dirty?))
    }

    /// A figure: a known key's field, or one derived from them. `dirty`
    /// is [`Sizes::dirty`] (vmmap's DIRTY, else shared + private dirty).
    pub fn figure(&self, figure: Figure) -> Option<u64> {
        let sum = |parts: &[Option<u64>]| -> Option<u64> {
            parts.iter().any(Option::is_some).then(|| parts.iter().flatten().sum())
        };
        match figure {
            Figure::Thp => {
                sum(&[self.anon_huge_pages, self.shmem_pmd_mapped, self.file_pmd_mapped])
            }
            // Both parts: a sum over processes keeps only the private
            // one (see model::summable), and half of the pool is no total.
            Figure::Hugetlb => Some(self.shared_hugetlb?.saturating_add(self.private_hugetlb?)),
            Figure::FootprintPss => self.footprint_pss(),
            Figure::SwapCounted => sum(&[self.swap_pss, self.shmem_swap]),
            Figure::FootprintPssShmem => {
                Some(self.footprint_pss()?.saturating_add(self.shmem_swap.unwrap_or(0)))
            }
            Figure::Dirty => self.dirty(),
            Figure::Clean => self.clean(),
            Figure::Uss => self.uss(),
            known => self.field(known),
        }
    }

    /// The slot of a size key this build does not know, by its snake_case
    /// name: added (zero) where the name is new and fewer than
    /// [`MAX_EXTRA`] are kept, else `None`.
    fn extra_slot(&mut self, name: &str) -> Option<&mut u64> {
        let at = match self.extra.iter().position(|(n, _)| n == name) {
            Some(at) => at,
            None if self.extra.len() < MAX_EXTRA => {
                self.extra.push((name.to_string(), 0));
                self.extra.len() - 1
            }
            None => return None,
        };
        Some(&mut self.extra[at].1)
    }

    /// The bytes of a size key this build does not know, by its
    /// snake_case name (as the source or a JSON document named it).
    pub fn extra_named(&self, name: &str) -> Option<u64> {
        self.extra.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
    }
}

/// Adds `v` to `slot`, saturating: a figure known on either side stays
/// known, and a sum becomes known once some part is.
pub(crate) fn add_opt(slot: &mut Option<u64>, v: Option<u64>) {
    if let Some(v) = v {
        *slot = Some(slot.unwrap_or(0).saturating_add(v));
    }
}

/// Serializes as a flat map of the present figures (absent ones are left out).
impl Serialize for Sizes {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let present = self.present();
        let mut map = serializer.serialize_map(Some(present.len()))?;
        for (k, v) in present {
            map.serialize_entry(k, &v)?;
        }
        map.end()
    }
}

/// The schema of that flat map: every known key a byte count, and any
/// other name one too (a size key of a kernel this build does not know
/// keeps its snake_case name, [`Sizes::extra`]).
#[cfg(feature = "schema")]
impl schemars::JsonSchema for Sizes {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Sizes".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let bytes = || serde_json::json!({ "type": "integer", "minimum": 0 });
        let properties: serde_json::Map<String, serde_json::Value> =
            KNOWN_KEYS.iter().map(|k| (k.name.to_string(), bytes())).collect();
        schemars::json_schema!({
            "description": "Byte counts by size key; a figure the source does not give is left out.",
            "type": "object",
            "properties": properties,
            "additionalProperties": bytes(),
        })
    }
}

// `Deserialize` for `Sizes` streams the object: see `sizes_de`.

/// Turns a smaps key (`Shared_Clean`, `AnonHugePages`, `THPeligible`) into
/// the snake_case name used in JSON (`shared_clean`, `anon_huge_pages`,
/// `thp_eligible`), so a key this build does not know still gets a stable,
/// predictable name.
pub fn snake_case(key: &str) -> String {
    // The kernel's one name that no casing rule splits right.
    if key == "THPeligible" {
        return "thp_eligible".to_string();
    }
    let chars: Vec<char> = key.chars().collect();
    let mut out = String::with_capacity(key.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c == '_' || c == '-' || c == ' ' {
            if !out.ends_with('_') && !out.is_empty() {
                out.push('_');
            }
            continue;
        }
        if c.is_ascii_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            let boundary = prev.is_ascii_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_ascii_uppercase() && next_lower);
            if boundary && !out.ends_with('_') {
                out.push('_');
            }
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 80,000 mappings, each with its own unknown key: the sum keeps at
    /// most MAX_EXTRA of them, so each add searches a bounded list (one
    /// slot per name made the sum quadratic: 30.6 s).
    #[test]
    fn distinct_unknown_keys_keep_a_sum_bounded() {
        let mut sum = Sizes::default();
        for i in 0..80_000u64 {
            let part =
                Sizes { rss: Some(1), extra: vec![(format!("k{i}"), 1)], ..Default::default() };
            sum.add(&part);
        }
        assert_eq!(sum.rss, Some(80_000));
        assert_eq!(sum.extra.len(), MAX_EXTRA);
        assert_eq!(sum.extra[0], ("k0".to_string(), 1));
        // The usual case, one key in every part, still sums whole.
        let mut sum = Sizes::default();
        for _ in 0..1000 {
            let mut part = Sizes::default();
            part.set("new_key", 2);
            part.set("other", 1);
            sum.add(&part);
        }
        assert_eq!(sum.extra_named("new_key"), Some(2000));
        assert_eq!(sum.extra_named("other"), Some(1000));
    }

    #[test]
    fn sums_saturate_instead_of_wrapping() {
        let huge = Sizes {
            rss: Some(1 << 63),
            private_clean: Some(1 << 63),
            private_dirty: Some(1 << 63),
            ..Default::default()
        };
        let mut sum = Sizes::default();
        sum.add(&huge);
        sum.add(&huge);
        sum.add(&Sizes { rss: Some(4096), ..Default::default() });
        assert_eq!(sum.rss, Some(u64::MAX));
        assert_eq!(sum.uss(), Some(u64::MAX));
    }

    #[test]
    fn snake_case_matches_every_known_smaps_key() {
        for k in KNOWN_KEYS.iter().filter(|k| !k.smaps.is_empty()) {
            assert_eq!(snake_case(k.smaps), k.name, "smaps key {}", k.smaps);
        }
        assert_eq!(snake_case("THPeligible"), "thp_eligible");
        assert_eq!(snake_case("ProtectionKey"), "protection_key");
    }

    #[test]
    fn key_index_finds_every_key_with_any_hint() {
        for (i, k) in KNOWN_KEYS.iter().enumerate().filter(|(_, k)| !k.smaps.is_empty()) {
            for hint in [0, i, i + 1, KNOWN_KEYS.len() + 3] {
                assert_eq!(smaps_key_index(k.smaps.as_bytes(), hint), Some(i), "{}", k.smaps);
            }
            let mut s = Sizes::default();
            *s.slot_at(i).unwrap() = Some(42);
            assert_eq!(s.field(Figure::from_name(k.name).unwrap()), Some(42));
            assert_eq!(s.known()[i], Some(42));
        }
        assert_eq!(smaps_key_index(b"", 0), None);
        assert_eq!(smaps_key_index(b"Dirty", 0), None, "vmmap-only figure has no smaps key");
        assert_eq!(smaps_key_index(b"NoSuchKey", 3), None);
        assert!(Sizes::default().slot_at(KNOWN_KEYS.len()).is_none());
    }

    #[test]
    fn sum_keeps_absent_figures_absent() {
        let mut total = Sizes::default();
        let part = Sizes { size: Some(4096), ..Default::default() };
        total.add(&part);
        total.add(&part);
        assert_eq!(total.size, Some(8192));
        assert_eq!(total.rss, None);
        assert_eq!(total.dirty(), None);
    }

    #[test]
    fn dirty_prefers_the_reported_figure_then_linux_split() {
        let linux = Sizes { shared_dirty: Some(1), private_dirty: Some(2), ..Default::default() };
        assert_eq!(linux.dirty(), Some(3));
        let mac = Sizes { dirty: Some(7), ..Default::default() };
        assert_eq!(mac.dirty(), Some(7));
    }

    #[test]
    fn extras_are_summed_by_name_and_serialized() {
        let mut a = Sizes::default();
        a.extra.push(("new_key".into(), 5));
        let mut t = Sizes::default();
        t.add(&a);
        t.add(&a);
        assert_eq!(t.extra_named("new_key"), Some(10));
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(json, r#"{"new_key":10}"#);
    }

    /// Every known key is a figure of the same name, and every figure's
    /// name reads back as it: JSON keys, sort fields and figures are
    /// one vocabulary.
    #[test]
    fn every_known_key_is_a_figure_and_names_round_trip() {
        for (i, k) in KNOWN_KEYS.iter().enumerate() {
            let f = Figure::from_name(k.name).unwrap_or_else(|| panic!("{} is no figure", k.name));
            assert_eq!(f.name(), k.name);
            assert_eq!(Figure::ALL[i], f, "figures list the known keys in their order");
            let mut s = Sizes::default();
            *s.field_mut(f).unwrap() = Some(7);
            assert_eq!(s.known()[i], Some(7));
        }
        for f in Figure::ALL {
            assert_eq!(Figure::from_name(f.name()), Some(*f));
            assert!(!f.help().is_empty() && !f.help().contains('\n'), "{f:?}");
        }
        for derived in [
            Figure::Clean,
            Figure::Uss,
            Figure::Thp,
            Figure::Hugetlb,
            Figure::FootprintPss,
            Figure::SwapCounted,
            Figure::FootprintPssShmem,
        ] {
            assert!(!KNOWN_KEYS.iter().any(|k| k.name == derived.name()));
            assert_eq!(Sizes::default().field_mut(derived), None);
        }
        assert_eq!(Figure::from_name("active"), None);
    }

    #[test]
    fn derived_figures_are_computed_from_their_parts() {
        let s = Sizes {
            shared_clean: Some(1),
            private_clean: Some(2),
            shared_dirty: Some(4),
            private_dirty: Some(8),
            anon_huge_pages: Some(16),
            file_pmd_mapped: Some(32),
            shared_hugetlb: Some(0),
            private_hugetlb: Some(64),
            gpu: Some(128),
            ..Default::default()
        };
        assert_eq!(s.figure(Figure::Clean), Some(3));
        assert_eq!(s.figure(Figure::Uss), Some(10));
        assert_eq!(s.figure(Figure::Dirty), Some(12));
        assert_eq!(s.field(Figure::Dirty), None, "no DIRTY column was read");
        assert_eq!(s.figure(Figure::Thp), Some(48));
        assert_eq!(s.figure(Figure::Hugetlb), Some(64));
        assert_eq!(s.figure(Figure::Gpu), Some(128));
        assert_eq!(s.figure(Figure::Rss), None);
        let none = Sizes::default();
        for f in Figure::ALL {
            assert_eq!(none.figure(*f), None, "{f:?} of nothing");
        }
    }
}
