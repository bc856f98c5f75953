//! One mapping of an address space: a Linux `/proc/PID/smaps` entry or a
//! macOS `vmmap` region line. Both systems share this shape so grouping,
//! histograms, JSON and diffs are written once.

use serde::{Deserialize, Serialize};

use super::sizes::Sizes;

/// What a region's pages come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Backing {
    /// A regular file (shared library, executable, mapped data file).
    File,
    /// Anonymous memory: heap, stacks, `mmap(MAP_ANONYMOUS)`.
    Anonymous,
    /// Shared memory objects: `/dev/shm`, `memfd:`, SysV segments.
    SharedMemory,
    /// A device node: GPU (`/dev/dri`, `/dev/nvidia*`) and others.
    Device,
    /// hugetlbfs pages: a file on a hugetlbfs mount (`/dev/hugepages`,
    /// any mount of that type) or `MAP_HUGETLB` memory (`/anon_hugepage`).
    HugePages,
    /// Pages the kernel provides: `[vdso]`, `[vvar]`, `[vsyscall]`.
    Kernel,
    /// The source does not say (vmmap regions).
    Unknown,
}

/// macOS purgeable state of a region (vmmap's `PURGE=` column), in JSON
/// its code; read back strictly (a document that says something other
/// than `N`, `V`, `E` or `-` is not one memtally wrote). Ordered as the
/// codes sort (`-`, `E`, `N`, `V`), as the seed's tables list them.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize,
)]
pub enum Purge {
    /// `-`: not marked (not purgeable memory, or the source does not say).
    #[default]
    #[serde(rename = "-")]
    Unmarked,
    /// `E`: empty, already discarded.
    #[serde(rename = "E")]
    Empty,
    /// `N`: non-volatile, the contents must be kept.
    #[serde(rename = "N")]
    NonVolatile,
    /// `V`: volatile, the system may discard the contents under pressure.
    #[serde(rename = "V")]
    Volatile,
}

impl Purge {
    /// The one-letter code vmmap prints (`N`, `V`, `E`) or `-`.
    pub fn code(self) -> &'static str {
        match self {
            Purge::NonVolatile => "N",
            Purge::Volatile => "V",
            Purge::Empty => "E",
            Purge::Unmarked => "-",
        }
    }

    /// Reads a `PURGE=` code; anything else is unmarked.
    pub fn from_code(code: &str) -> Purge {
        match code {
            "N" => Purge::NonVolatile,
            "V" => Purge::Volatile,
            "E" => Purge::Empty,
            _ => Purge::Unmarked,
        }
    }

    /// A label for people: `N (Non-Volatile)` and so on.
    pub fn label(self) -> &'static str {
        match self {
            Purge::NonVolatile => "N (Non-Volatile)",
            Purge::Volatile => "V (Volatile/Purgeable)",
            Purge::Empty => "E (Empty/Purged)",
            Purge::Unmarked => "- (Unmarked)",
        }
    }
}

/// The schema of a purge code: one of the four [`Purge::code`]s.
#[cfg(feature = "schema")]
impl schemars::JsonSchema for Purge {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Purge".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let codes: Vec<&str> = [Purge::NonVolatile, Purge::Volatile, Purge::Empty, Purge::Unmarked]
            .iter()
            .map(|p| p.code())
            .collect();
        schemars::json_schema!({ "type": "string", "enum": codes })
    }
}

/// One mapping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    /// First address; `None` for placeholder ranges (vmmap `kernel-kernel`).
    pub start: Option<u64>,
    /// One past the last address; `None` for placeholder ranges.
    pub end: Option<u64>,
    /// Permissions as the source prints them: Linux `rw-p`, vmmap `rw-`.
    pub perms: String,
    /// vmmap's maximum protection (`rwx`); `None` on Linux.
    pub max_perms: Option<String>,
    /// Linux: file offset of the mapping.
    pub offset: Option<u64>,
    /// Linux: `major:minor` of the backing device (`00:00` when anonymous).
    pub device: Option<String>,
    /// Linux: inode of the backing file (0 when anonymous).
    pub inode: Option<u64>,
    /// Linux pathname (`/usr/lib/libc.so.6`, `[heap]`, `[anon:NAME]`);
    /// vmmap region detail. `None` when the source gives none. Bytes that
    /// are not UTF-8 are shown as U+FFFD.
    pub path: Option<String>,
    /// vmmap's REGION TYPE (`IOSurface`, `MALLOC_SMALL`); `None` on Linux.
    pub region_type: Option<String>,
    /// What the pages come from.
    pub backing: Backing,
    /// Purgeable state (macOS); `Unmarked` on Linux.
    pub purge: Purge,
    /// vmmap's share mode (`COW`, `PRV`, `SHM`, ...).
    pub share_mode: Option<String>,
    /// Linux `VmFlags` (`rd wr mr mw me ac`).
    pub vm_flags: Option<String>,
    /// Keys of the source that are not sizes (`THPeligible`, `ProtectionKey`).
    pub attributes: Vec<(String, String)>,
    /// Byte counts.
    pub sizes: Sizes,
}

impl Region {
    /// An empty region of the given backing; parsers fill in the rest.
    pub fn new(backing: Backing) -> Region {
        Region {
            start: None,
            end: None,
            perms: String::new(),
            max_perms: None,
            offset: None,
            device: None,
            inode: None,
            path: None,
            region_type: None,
            backing,
            purge: Purge::Unmarked,
            share_mode: None,
            vm_flags: None,
            attributes: Vec::new(),
            sizes: Sizes::default(),
        }
    }

    /// Virtual size in bytes: the `size` figure, or `end - start`.
    pub(crate) fn vsize(&self) -> Option<u64> {
        self.sizes.size.or(match (self.start, self.end) {
            (Some(s), Some(e)) if e >= s => Some(e - s),
            _ => None,
        })
    }
}

/// Sums of regions (`Sizes` knows no region: a region holds its sizes).
impl Sizes {
    /// Adds a region's sizes, taking its virtual size from its address
    /// range when the source gave no `size`.
    pub(crate) fn add_region(&mut self, region: &Region) {
        if region.sizes.size.is_none() {
            if let Some(v) = region.vsize() {
                self.size = Some(self.size.unwrap_or(0).saturating_add(v));
            }
        }
        self.add(&region.sizes);
    }

    /// The sum over every region, each region's virtual size taken from
    /// its address range when the source gave no `size`.
    pub fn total<'a>(regions: impl IntoIterator<Item = &'a Region>) -> Sizes {
        let mut sum = Sizes::default();
        for r in regions {
            sum.add_region(r);
        }
        sum
    }
}
