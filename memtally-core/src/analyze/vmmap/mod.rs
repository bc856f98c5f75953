//! vmmap analyses, fed one line at a time so memory stays flat: the
//! (region type, purge state) breakdown, histograms by virtual size (exact
//! and power-of-two buckets), a footprint line per type, dirty + swap above
//! virtual size warnings, and the summary-table-versus-regions count check.
//! [`SeedView`] reproduces the seed's three reports from memtally's parse.

mod footprint_check;
mod footprint_diff;
mod seed_view;
mod summary;
mod tally;

pub use footprint_check::{footprint_check, FootprintCheck, FootprintFrom};
pub(crate) use footprint_diff::{footprint_diff, footprint_diff_of};
pub use footprint_diff::{Delta, FootprintDiff, PurgeableDelta, TypeSides};

pub use seed_view::{SeedSummary, SeedView};
pub use summary::{
    row_footprint, row_reclaimable, summary_footprint, total_check, total_footprint, TotalCheck,
    GPU_TYPES,
};
pub use tally::Tally;

use serde::Serialize;

use crate::model::sizes::add_opt;
use crate::model::vmmap::{Document, VRegion};
use crate::model::{Group, Purge, Region, Sizes};

crate::model::named::named! {
    /// What the vmmap view groups the selected regions by.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum VmmapBy {
        Type => "type", "the REGION TYPE column";
        Purge => "purge", "purge state: N, V, E or -";
        Detail => "detail", "the region detail (path, zone, thread)";
        ShareMode => "share-mode", "the SM= share mode";
    }
}

impl VmmapBy {
    /// The key of a region under this grouping.
    pub(crate) fn key(self, r: &Region) -> String {
        match self {
            VmmapBy::Type => r.region_type.clone().unwrap_or_default(),
            VmmapBy::Purge => r.purge.label().to_string(),
            VmmapBy::Detail => r.path.clone().unwrap_or_else(|| "(none)".into()),
            VmmapBy::ShareMode => r.share_mode.clone().unwrap_or_else(|| "(none)".into()),
        }
    }
}

/// Index of a purge state in `[N, V, E, -]` arrays.
pub(crate) fn purge_index(p: Purge) -> usize {
    match p {
        Purge::NonVolatile => 0,
        Purge::Volatile => 1,
        Purge::Empty => 2,
        Purge::Unmarked => 3,
    }
}

/// Selects the region types asked for by substring, as the seed does; no
/// types selects every type.
#[derive(Debug, Clone, Default)]
pub struct TypeFilter {
    types: Vec<String>,
}

impl TypeFilter {
    /// A filter for region types containing any of `types` (none: every type).
    pub fn new(types: Vec<String>) -> TypeFilter {
        TypeFilter { types }
    }

    /// Whether `region_type` is selected.
    pub fn matches(&self, region_type: &str) -> bool {
        self.types.is_empty() || self.types.iter().any(|t| region_type.contains(t.as_str()))
    }

    /// The substrings given.
    pub fn types(&self) -> &[String] {
        &self.types
    }
}

/// A sum of regions.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Bucket {
    /// How many regions.
    pub regions: u64,
    /// Their sizes added up: `size`, `rss`, `dirty` and `swap`, in bytes.
    pub sizes: Sizes,
}

/// The footprint of a region type, as Apple counts a process's physical
/// footprint (`phys_footprint`): dirty + swapped (compressed) bytes, except
/// in regions marked volatile purgeable (`V`), which the system may discard
/// at any time; those are *reclaimable* instead. Empty purgeable regions
/// (`E`) were discarded already and hold nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Footprint {
    /// How many regions of the type were selected.
    pub regions: u64,
    /// Dirty + swap of the regions not marked `V` or `E`; `None` when the input
    /// has no dirty or swap figures.
    pub footprint: Option<u64>,
    /// Resident bytes of the regions marked `V` (volatile) or `E` (empty,
    /// normally none): what the system may take back without asking the
    /// process, and not part of the footprint. `None` without resident figures.
    pub reclaimable: Option<u64>,
    /// Virtual bytes of regions marked volatile (`V`).
    pub volatile_vsize: u64,
    /// Virtual bytes of regions marked empty (`E`).
    pub empty_vsize: u64,
    /// Virtual bytes of regions marked non-volatile (`N`).
    pub nonvol_vsize: u64,
}

impl Footprint {
    /// The figures of one region, whose dirty + swap is `dirty_and_swap`
    /// ([`footprint_of`]).
    pub(crate) fn of(r: &VRegion, dirty_and_swap: Option<u64>) -> Footprint {
        let vsize = r.vsize.unwrap_or(0);
        let of_state = |state: Purge| if r.purge == state { vsize } else { 0 };
        Footprint {
            regions: 1,
            // Some(0) for a region of V or E: known, and zero.
            footprint: dirty_and_swap.map(|fp| footprint_part(r.purge, fp)),
            reclaimable: r.resident.map(|rss| reclaimable_part(r.purge, rss)),
            volatile_vsize: of_state(Purge::Volatile),
            empty_vsize: of_state(Purge::Empty),
            nonvol_vsize: of_state(Purge::NonVolatile),
        }
    }

    /// Adds another type's (or region's) figures.
    pub fn add(&mut self, o: &Footprint) {
        // Saturating, as every sum of crafted sizes (8388608T twice) must be.
        self.regions = self.regions.saturating_add(o.regions);
        add_opt(&mut self.footprint, o.footprint);
        add_opt(&mut self.reclaimable, o.reclaimable);
        self.volatile_vsize = self.volatile_vsize.saturating_add(o.volatile_vsize);
        self.empty_vsize = self.empty_vsize.saturating_add(o.empty_vsize);
        self.nonvol_vsize = self.nonvol_vsize.saturating_add(o.nonvol_vsize);
    }
}

/// The part of `dirty_and_swap` bytes in a region of purge state `purge`
/// that counts in the footprint: all of it, but none for volatile regions
/// (reclaimable) or empty ones (discarded: normally nothing is left, and
/// what vmmap shows there is counted as reclaimable, never twice).
pub(crate) fn footprint_part(purge: Purge, dirty_and_swap: u64) -> u64 {
    if matches!(purge, Purge::Volatile | Purge::Empty) {
        0
    } else {
        dirty_and_swap
    }
}

/// The reclaimable part of `resident` bytes in a region of purge state
/// `purge`: all of it for volatile (and empty) regions, none otherwise.
pub(crate) fn reclaimable_part(purge: Purge, resident: u64) -> u64 {
    if matches!(purge, Purge::Volatile | Purge::Empty) {
        resident
    } else {
        0
    }
}

/// Whether a region type is the graphics memory the process owns without
/// mapping it (`owned unmapped (graphics)`, macOS 26: GPU buffers charged
/// to the task's ledger). vmmap prints it RESIDENT, never DIRTY, as no
/// page of it is mapped to be written; xnu's `phys_footprint` counts it
/// all. Only the graphics kind: xnu charges the other `owned unmapped`
/// types (by their dirty bytes) as any other memory, and counting them
/// resident put memtally above the header (922M against 919.0M on a
/// macOS 26 report; the graphics-only rule gives 919.0M).
pub(crate) fn owned_unmapped(region_type: &str) -> bool {
    region_type.trim() == "owned unmapped (graphics)"
}

/// The bytes of a region (or sum of regions) of `region_type` that xnu
/// charges to the footprint before purgeable state and swap: its dirty
/// bytes, or for owned unmapped memory its resident ones.
pub(crate) fn charged(region_type: &str, dirty: Option<u64>, resident: Option<u64>) -> Option<u64> {
    if owned_unmapped(region_type) {
        match (dirty, resident) {
            (None, None) => None,
            (d, r) => Some(d.unwrap_or(0).max(r.unwrap_or(0))),
        }
    } else {
        dirty
    }
}

/// The footprint of a (type, purge) cell of the breakdown.
pub fn bucket_footprint(region_type: &str, purge: Purge, b: &Bucket) -> Option<u64> {
    let fp = match (charged(region_type, b.sizes.dirty, b.sizes.rss), b.sizes.swap) {
        (None, None) => return None,
        (d, s) => d.unwrap_or(0).saturating_add(s.unwrap_or(0)),
    };
    Some(footprint_part(purge, fp))
}

/// A region's box on the page's treemap: its footprint as `memtally
/// vmmap` counts it (`region_type` its type, else its category), and
/// the dirty bytes of that (none of a volatile region's).
pub fn region_box(region_type: &str, purge: Purge, sizes: &Sizes) -> (u64, Option<u64>) {
    let b = Bucket { regions: 1, sizes: sizes.clone() };
    let value = bucket_footprint(region_type, purge, &b).unwrap_or(0);
    (value, sizes.dirty().map(|d| footprint_part(purge, d)))
}

/// The reclaimable bytes of a (type, purge) cell of the breakdown.
pub fn bucket_reclaimable(purge: Purge, b: &Bucket) -> Option<u64> {
    b.sizes.rss.map(|rss| reclaimable_part(purge, rss))
}

/// The name under which a region type is compared with the summary
/// table: the region list names the unused parts of the shared cache's
/// libraries by segment (`unused __DATA`, `unused shlib __DATA_DIRTY`,
/// `unused __AUTH`, `unused __TEXT`, ...) and the summary adds them all
/// up in one row, `unused but dirty shlib __DATA`.
pub(crate) fn same_type(region_type: &str) -> &str {
    let t = region_type.trim();
    let segment = t.rsplit(' ').next().unwrap_or("");
    if t.starts_with("unused ") && segment.starts_with("__") {
        "unused but dirty shlib __DATA"
    } else {
        t
    }
}

/// A region whose dirty + swap exceeds its virtual size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Overcommit {
    /// 1-based line number in the input.
    pub line: usize,
    /// The region's type.
    pub region_type: String,
    /// Its first address, when known.
    pub start: Option<u64>,
    /// Its virtual size, bytes.
    pub vsize: u64,
    /// Its dirty bytes (0 when not given).
    pub dirty: u64,
    /// Its swapped bytes (0 when not given).
    pub swap: u64,
}

/// A type whose region-line count differs from its summary-table COUNT.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CountMismatch {
    /// The region type.
    pub region_type: String,
    /// The summary table's COUNT (0 when the table does not list the type).
    pub summary_count: u64,
    /// Region lines of the type read.
    pub region_lines: u64,
}

/// Histogram counts per `[N, V, E, -]`.
pub(crate) type PurgeCounts = [u64; 4];

/// dirty + swap (for owned unmapped memory resident + swap), when either
/// is known.
pub(crate) fn footprint_of(r: &VRegion) -> Option<u64> {
    match (charged(r.region_type, r.dirty, r.resident), r.swap) {
        (None, None) => None,
        (d, s) => Some(d.unwrap_or(0).saturating_add(s.unwrap_or(0))),
    }
}

/// The smallest power of two at or above `v` (0 for 0).
pub(crate) fn pow2_bucket(v: u64) -> u64 {
    if v == 0 {
        0
    } else {
        v.checked_next_power_of_two().unwrap_or(1 << 63)
    }
}

/// Everything read from one report.
#[derive(Debug)]
#[non_exhaustive]
pub struct VmmapReport {
    /// What was read, for messages (`saved.txt`, `standard input`).
    pub source: String,
    /// The report's header, tables and diagnostics.
    pub doc: Document,
    /// The analyses over the selected regions.
    pub tally: Tally,
    /// The selected regions with their line numbers, when kept.
    pub regions: Vec<(usize, Region)>,
    /// With `by`: its name and the groups, largest dirty first.
    pub groups: Option<(&'static str, Vec<Group>)>,
    /// Types whose region-line count differs from the summary COUNT.
    pub mismatches: Vec<CountMismatch>,
    /// The footprint of the selected types: from the region lines, or from
    /// the summary table when the input has none (`vmmap -summary`).
    pub footprint: Footprint,
    /// Where `footprint` comes from.
    pub footprint_from: FootprintFrom,
    /// The summary table's `TOTAL` row checked against the sum of its rows.
    pub total_check: Option<TotalCheck>,
    /// The header's `Physical footprint:` beside memtally's footprint of
    /// every type (xnu's definition), when the header states one.
    pub footprint_check: Option<FootprintCheck>,
}

impl VmmapReport {
    /// True when something in the input could not be read or was elided.
    pub fn partial(&self) -> bool {
        let d = &self.doc.diagnostics;
        d.unreadable > 0 || d.elisions > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::vmmap::{Record, VRegionSink};
    use crate::source::parse::vmmap::{parse, ParseOptions};

    const SAMPLE: &str = "\
REGION TYPE                    START - END         [ VSIZE  RSDNT  DIRTY   SWAP] PRT/MAX SHRMOD PURGE    REGION DETAIL
IOSurface                   100000000-100010000    [   64K    64K    64K     0K] rw-/rw- SM=SHM PURGE=V
IOSurface                   100010000-100020000    [   64K    16K    16K    64K] rw-/rw- SM=SHM PURGE=N
IOSurface                   100020000-100028000    [   32K     0K     0K     0K] rw-/rw- SM=SHM
IOAccelerator               100028000-100030000    [   32K    32K    32K     0K] rw-/rw- SM=SHM PURGE=E
MALLOC_TINY                 100030000-100130000    [ 1024K    16K    16K     0K] rw-/rwx SM=PRV
";

    #[test]
    fn vmmap_reclaimable_is_volatile_and_empty_resident() {
        let parts = [
            (Purge::Volatile, 100),
            (Purge::Empty, 0),
            (Purge::NonVolatile, 50),
            (Purge::Unmarked, 7),
        ];
        let sum: u64 = parts.iter().map(|&(purge, rss)| reclaimable_part(purge, rss)).sum();
        assert_eq!(sum, 100);
    }

    fn tally(types: &[&str]) -> Tally {
        let mut t = Tally::new(TypeFilter::new(types.iter().map(|s| s.to_string()).collect()));
        parse(SAMPLE.as_bytes(), ParseOptions::default(), &mut t).unwrap();
        t.finish();
        t
    }

    #[test]
    fn breakdown_and_footprint_by_type_and_purge() {
        let t = tally(&["IOSurface", "IOAccelerator"]);
        assert_eq!(t.regions_read, 5);
        assert_eq!(t.selected, 4);
        let v = &t.breakdown[&("IOSurface".to_string(), Purge::Volatile)];
        assert_eq!((v.regions, v.sizes.size, v.sizes.dirty), (1, Some(65536), Some(65536)));
        let f = &t.footprint["IOSurface"];
        // The volatile region's 64K dirty is reclaimable, not footprint.
        assert_eq!(f.footprint, Some(16384 + 65536));
        assert_eq!(f.reclaimable, Some(65536));
        assert_eq!(f.volatile_vsize, 65536);
        // Empty, yet 32K resident here: reclaimable, never also footprint.
        assert_eq!(t.footprint["IOAccelerator"].reclaimable, Some(32768));
        assert_eq!(t.footprint["IOAccelerator"].footprint, Some(0));
        assert_eq!(t.footprint_total.footprint, Some(16384 + 65536));
        // 16K dirty + 64K swap over a 64K region.
        assert_eq!(t.overcommits, 1);
        assert_eq!(t.overcommit_samples[0].line, 3);
        assert_eq!(t.exact["IOSurface"][&65536], [1, 1, 0, 0]);
        assert_eq!(t.pow2["IOSurface"][&32768].0, [0, 0, 0, 1]);
    }

    #[test]
    fn no_types_selects_every_type() {
        let t = tally(&[]);
        assert_eq!(t.selected, 5);
        assert!(t.by_type.contains_key("MALLOC_TINY"));
    }

    #[test]
    fn every_unused_segment_is_the_summary_s_unused_row() {
        for t in [
            "unused __DATA",
            "unused shlib __DATA",
            "unused __DATA_DIRTY",
            "unused __AUTH",
            "unused __TEXT",
            "unused but dirty shlib __DATA",
        ] {
            assert_eq!(same_type(t), "unused but dirty shlib __DATA", "{t}");
        }
        assert_eq!(same_type("__DATA_DIRTY"), "__DATA_DIRTY");
        assert_eq!(same_type("unused space"), "unused space");
    }

    #[test]
    fn pow2_buckets_round_up() {
        assert_eq!(pow2_bucket(0), 0);
        assert_eq!(pow2_bucket(1), 1);
        assert_eq!(pow2_bucket(16384), 16384);
        assert_eq!(pow2_bucket(16385), 32768);
        assert_eq!(pow2_bucket(u64::MAX), 1 << 63);
    }

    #[test]
    fn seed_view_skips_inactive_unmarked_regions() {
        let mut s = SeedView::new(Vec::new());
        parse(SAMPLE.as_bytes(), ParseOptions::default(), &mut s).unwrap();
        assert!(s.mismatches.is_empty(), "{:?}", s.mismatches);
        // The 32K unmarked IOSurface with nothing resident is dropped.
        assert_eq!(s.entries, 3);
        assert_eq!(
            s.breakdown[&("IOSurface".to_string(), Purge::NonVolatile)],
            [1, 65536, 16384 + 65536, 16384]
        );
    }

    #[test]
    fn seed_view_reports_lines_memtally_read_differently() {
        let line = "IOSurface  100000000-100010000 [ 64K 64K 64K 0K] rw-/rw- SM=SHM PURGE=V";
        let mut s = SeedView::new(Vec::new());
        assert_eq!(s.line(7, line, None), crate::model::Flow::Continue);
        assert_eq!(s.mismatches, vec!["line 7: the seed reads a region here; memtally did not"]);
        let mut s = SeedView::new(Vec::new());
        let mut p = crate::source::parse::vmmap::Parser::new(ParseOptions::default());
        let rec = p.line(1, line);
        let Some(Record::Region(mut r)) = rec else { panic!("not a region") };
        r.purge = Purge::Empty;
        assert_eq!(s.line(1, line, Some(&Record::Region(r))), crate::model::Flow::Continue);
        assert_eq!(s.mismatches, vec!["line 1: purge E, the seed reads V"]);
    }
}
