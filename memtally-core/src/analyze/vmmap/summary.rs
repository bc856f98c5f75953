//! What the summary table alone says: footprint and reclaimable bytes per
//! row (for `-summary` output, which has no region list), and its `TOTAL`
//! row checked against the sum of the rows above it.

use serde::Serialize;

use super::{Footprint, TypeFilter};
use crate::model::vmmap::{Document, SummaryRow};

/// The region types the default GPU view shows: the seed's
/// (IOAccelerator, IOSurface; those it asks for when none are given),
/// and the graphics memory a process owns without mapping it (macOS 26),
/// which its footprint counts.
pub const GPU_TYPES: [&str; 3] = ["IOAccelerator", "IOSurface", "owned unmapped (graphics)"];

/// A summary row's footprint: DIRTY + SWAPPED less VOLATILE (volatile
/// purgeable bytes are reclaimable, not footprint; EMPTY ones hold
/// nothing); for owned unmapped memory RESIDENT in place of DIRTY
/// (`owned_unmapped`). `None` when the table has
/// neither DIRTY nor SWAPPED. The table's figures are rounded as vmmap
/// printed them.
pub fn row_footprint(s: &SummaryRow) -> Option<u64> {
    if s.dirty.is_none() && s.swapped.is_none() {
        return None;
    }
    let charged = super::charged(&s.region_type, s.dirty, s.resident);
    let fp = charged.unwrap_or(0).saturating_add(s.swapped.unwrap_or(0));
    Some(fp.saturating_sub(s.volatile.unwrap_or(0)))
}

/// The footprint of the summary's `TOTAL` row: the rows' footprints
/// added up, as the headline adds them. vmmap's TOTAL has the owned
/// unmapped graphics memory in RESIDENT only (it is never DIRTY), so a
/// footprint of the TOTAL's own columns left it out (535M beside a
/// headline of 922M on a macOS 26 report).
pub fn total_footprint(doc: &Document) -> Option<u64> {
    summary_footprint(doc, &TypeFilter::default()).footprint
}

/// A summary row's reclaimable bytes: its VOLATILE column.
pub fn row_reclaimable(s: &SummaryRow) -> Option<u64> {
    s.volatile
}

/// The footprint of the summary rows of the types `filter` selects, for
/// input without region lines (`vmmap -summary`): `regions` from COUNT,
/// `footprint` and `reclaimable` as [`row_footprint`] and
/// [`row_reclaimable`], the purgeable sizes from VOLATILE, EMPTY, NONVOL.
pub fn summary_footprint(doc: &Document, filter: &TypeFilter) -> Footprint {
    let mut f = Footprint::default();
    for s in doc.summary.iter().filter(|s| filter.matches(&s.region_type)) {
        let row = Footprint {
            regions: s.count.unwrap_or(0),
            footprint: row_footprint(s),
            reclaimable: row_reclaimable(s),
            volatile_vsize: s.volatile.unwrap_or(0),
            empty_vsize: s.empty.unwrap_or(0),
            nonvol_vsize: s.nonvol.unwrap_or(0),
        };
        f.add(&row);
    }
    f
}

/// The summary's `TOTAL` row beside the sum of the rows above it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TotalCheck {
    /// The `TOTAL` row as vmmap printed it.
    pub total: SummaryRow,
    /// The rows added up, column by column (a column no row has is `None`).
    pub sum: SummaryRow,
    /// Columns where the two differ by more than the rounding of the
    /// printed figures allows: COUNT must agree exactly; a size column by
    /// at most half a unit of the last printed digit of the TOTAL and of
    /// every row (vmmap rounds each to its digits: `15.8G` is 15.75G to
    /// 15.85G).
    pub differences: Vec<String>,
}

/// The figures of a row, by column name, in table order.
fn columns(s: &SummaryRow) -> [(&'static str, Option<u64>); 8] {
    [
        ("virtual", s.virtual_size),
        ("resident", s.resident),
        ("dirty", s.dirty),
        ("swapped", s.swapped),
        ("volatile", s.volatile),
        ("nonvol", s.nonvol),
        ("empty", s.empty),
        ("count", s.count),
    ]
}

/// The `TOTAL` row (not `TOTAL, minus reserved VM space`) checked against
/// the sum of every summary row; `None` when the table has no such row.
pub fn total_check(doc: &Document) -> Option<TotalCheck> {
    let total = doc.summary_totals.iter().find(|t| t.region_type.trim() == "TOTAL")?.clone();
    let mut sum = SummaryRow { region_type: "sum of the rows".into(), ..Default::default() };
    for s in &doc.summary {
        sum.add(s);
    }
    // What the printed figures' rounding can hide, per size column: half
    // a step of the TOTAL and of each row (in halves, to stay whole).
    let mut halves = total.steps;
    for (h, step) in halves.iter_mut().zip(sum.steps) {
        *h = h.saturating_add(step);
    }
    let mut differences = Vec::new();
    for (i, ((name, t), (_, s))) in columns(&total).into_iter().zip(columns(&sum)).enumerate() {
        let (Some(t), Some(s)) = (t, s) else { continue };
        let agree = match halves.get(i) {
            // 1 byte more: the step of a fraction of a page may be uneven.
            Some(&h) => t.abs_diff(s) <= h / 2 + 1,
            None => t == s, // COUNT
        };
        if !agree {
            differences.push(format!("{name}: TOTAL {t}, rows {s}"));
        }
    }
    Some(TotalCheck { total, sum, differences })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::parse::vmmap::{parse_all, ParseOptions};

    const TABLE: &str = "\
                                VIRTUAL RESIDENT    DIRTY  SWAPPED VOLATILE   NONVOL    EMPTY   REGION 
REGION TYPE                        SIZE     SIZE     SIZE     SIZE     SIZE     SIZE     SIZE    COUNT (non-coalesced) 
===========                     ======= ========    =====  ======= ========   ======    =====  ======= 
IOAccelerator (graphics)          1664K    1408K    1344K      64K    1280K     128K     256K        5 
MALLOC_SMALL                      8192K     512K     512K     128K       0K       0K       0K        1 
===========                     ======= ========    =====  ======= ========   ======    =====  ======= 
TOTAL                             9856K    1920K    1856K     192K    1280K     128K     256K        7 
";

    #[test]
    fn footprint_leaves_volatile_out_and_total_is_checked() {
        let (doc, _) = parse_all(TABLE.as_bytes(), ParseOptions::default()).unwrap();
        let g = &doc.summary[0];
        assert_eq!(row_footprint(g), Some((1344 + 64 - 1280) * 1024));
        assert_eq!(row_reclaimable(g), Some(1280 * 1024));
        let f = summary_footprint(&doc, &TypeFilter::new(vec!["IOAccelerator".into()]));
        assert_eq!((f.regions, f.footprint), (5, Some(128 * 1024)));
        assert_eq!((f.empty_vsize, f.nonvol_vsize), (256 * 1024, 128 * 1024));
        let c = total_check(&doc).expect("a TOTAL row");
        assert_eq!(c.sum.count, Some(6));
        assert_eq!(c.differences, vec!["count: TOTAL 7, rows 6".to_string()]);
    }

    /// Rows of G and M whose exact sum is 4.2% off the TOTAL's printed
    /// 1.2G, well inside what printing each to one decimal hides.
    const ROUNDED: &str = "\
                                VIRTUAL RESIDENT    DIRTY  SWAPPED VOLATILE   NONVOL    EMPTY   REGION 
REGION TYPE                        SIZE     SIZE     SIZE     SIZE     SIZE     SIZE     SIZE    COUNT (non-coalesced) 
===========                     ======= ========    =====  ======= ========   ======    =====  ======= 
MALLOC_LARGE                       1.1G     1.1G     1.1G       0K       0K       0K       0K        2 
VM_ALLOCATE                       48.4M    48.4M    48.4M       0K       0K       0K       0K        1 
===========                     ======= ========    =====  ======= ========   ======    =====  ======= 
TOTAL                              1.2G     1.2G     1.2G       0K       0K       0K       0K        3 
";

    #[test]
    fn the_total_is_checked_within_the_rounding_vmmap_printed() {
        let (doc, _) = parse_all(ROUNDED.as_bytes(), ParseOptions::default()).unwrap();
        let c = total_check(&doc).expect("a TOTAL row");
        assert!(c.differences.is_empty(), "{:?}", c.differences);
        // 1.0G of rows against 1.2G: beyond any rounding.
        let off = ROUNDED.replace("    1.1G     1.1G     1.1G", "    1.0G     1.1G     1.1G");
        let off = off.replace("48.4M    48.4M", " 8.4M    48.4M");
        let (doc, _) = parse_all(off.as_bytes(), ParseOptions::default()).unwrap();
        let c = total_check(&doc).unwrap();
        assert_eq!(c.differences.len(), 1, "{:?}", c.differences);
        assert!(c.differences[0].starts_with("virtual: "), "{:?}", c.differences);
    }
}
