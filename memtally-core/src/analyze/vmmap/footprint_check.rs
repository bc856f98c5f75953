//! vmmap's `Physical footprint:` header beside memtally's footprint of the
//! same report. xnu's `phys_footprint` (osfmk/kern/task.c, the task
//! ledger) is internal (dirty anonymous) memory, compressed memory, IOKit
//! memory mapped into the task, non-volatile purgeable memory and page
//! tables; since macOS 26 also the graphics memory the task owns without
//! mapping it, which vmmap prints as `owned unmapped (graphics)` (resident,
//! never dirty). memtally's footprint follows that definition: dirty +
//! swapped, less volatile purgeable, with owned unmapped memory counted
//! resident, and the `page table in kernel` row in (its DIRTY). Where the
//! two differ by more than the rounding of the figures vmmap printed,
//! something is missing from the input (a region list cut short) or
//! counted differently, and a report says by how much.

use serde::Serialize;

use super::summary::row_footprint;
use super::{owned_unmapped, TypeFilter};
use crate::model::vmmap::{printed_step, Document};

/// The header's footprint and memtally's, over every region type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FootprintCheck {
    /// `Physical footprint:` as vmmap printed it, in bytes.
    pub vmmap: u64,
    /// memtally's footprint of every type of the report, in bytes.
    pub memtally: u64,
    /// Where memtally's comes from: the region lines or the summary table.
    pub from: FootprintFrom,
    /// `vmmap` - `memtally`, bytes: positive when the report holds less
    /// than the header counts.
    pub difference: i64,
    /// How far apart the rounding of the printed figures can put them:
    /// half a unit of the header's last digit and, from the summary
    /// table, of each figure added up (region lines: the header's alone).
    pub rounding: u64,
    /// Whether the difference is within `rounding`.
    pub agrees: bool,
}

/// Where a vmmap report's footprint comes from; its JSON name is the
/// snake_case of the variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum FootprintFrom {
    /// The region lines (every region read, whatever the selection).
    Regions,
    /// The summary table (a `vmmap -summary` run, or regions cut away).
    Summary,
    /// Neither: the input has no sizes to make one of.
    None,
}

impl FootprintFrom {
    /// The stable name (JSON, the report page).
    pub fn name(self) -> &'static str {
        match self {
            FootprintFrom::Regions => "regions",
            FootprintFrom::Summary => "summary",
            FootprintFrom::None => "none",
        }
    }
}

/// The check, when the header states a footprint and memtally has one:
/// from the region lines (`regions`, every region read, whatever the
/// selection) or else from the summary table.
pub fn footprint_check(doc: &Document, regions: Option<u64>) -> Option<FootprintCheck> {
    let vmmap = doc.header.physical_footprint?;
    let printed = doc.header.facts.iter().find(|f| f.key == "Physical footprint");
    let mut halves = printed.map_or(0, |f| printed_step(&f.value, 1));
    let (memtally, from) = match regions {
        Some(fp) => (fp, FootprintFrom::Regions),
        None => {
            let every = TypeFilter::default();
            let fp = super::summary_footprint(doc, &every).footprint?;
            for s in doc.summary.iter().filter(|s| row_footprint(s).is_some()) {
                // DIRTY (RESIDENT for owned unmapped), SWAPPED, VOLATILE.
                let charged = if owned_unmapped(&s.region_type) { s.steps[1] } else { s.steps[2] };
                for step in [charged, s.steps[3], s.steps[4]] {
                    halves = halves.saturating_add(step);
                }
            }
            (fp, FootprintFrom::Summary)
        }
    };
    let difference = i128::from(vmmap) - i128::from(memtally);
    let rounding = halves / 2;
    Some(FootprintCheck {
        vmmap,
        memtally,
        from,
        difference: crate::analyze::signed::clamp(difference),
        rounding,
        agrees: difference.unsigned_abs() <= u128::from(rounding),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::parse::vmmap::{parse_all, ParseOptions};

    /// A macOS 26 summary whose footprint is dirty + swapped + the owned
    /// unmapped graphics memory: 512M + 64M + 256M = 832M.
    const OWNED: &str = "\
Physical footprint:         832.0M
Physical footprint (peak):  900.0M

                                VIRTUAL RESIDENT    DIRTY  SWAPPED VOLATILE   NONVOL    EMPTY   REGION 
REGION TYPE                        SIZE     SIZE     SIZE     SIZE     SIZE     SIZE     SIZE    COUNT (non-coalesced) 
===========                     ======= ========    =====  ======= ========   ======    =====  ======= 
MALLOC_LARGE                     1024.0M   512.0M   512.0M    64.0M       0K       0K       0K        4 
owned unmapped (graphics)         256.0M   256.0M       0K       0K       0K       0K       0K        2 
===========                     ======= ========    =====  ======= ========   ======    =====  ======= 
TOTAL                             1.3G   768.0M   512.0M    64.0M       0K       0K       0K        6 
";

    #[test]
    fn owned_unmapped_graphics_memory_is_in_the_footprint() {
        let (doc, _) = parse_all(OWNED.as_bytes(), ParseOptions::default()).unwrap();
        let c = footprint_check(&doc, None).expect("a header footprint");
        assert_eq!((c.vmmap, c.memtally, c.from), (832 << 20, 832 << 20, FootprintFrom::Summary));
        assert!(c.agrees && c.difference == 0, "{c:?}");
        // A region list that holds 100M less than the header says.
        let c = footprint_check(&doc, Some(732 << 20)).unwrap();
        assert_eq!(c.difference, 100 << 20);
        assert!(!c.agrees, "{c:?}");
    }

    /// Issue 37, item 11: only `owned unmapped (graphics)` is charged at
    /// its resident size; another owned unmapped type is charged as any
    /// memory is (its dirty bytes: none). The TOTAL row's footprint
    /// counts the graphics memory too, as the headline does.
    #[test]
    fn only_the_graphics_kind_of_owned_unmapped_memory_is_charged_resident() {
        let doc = OWNED.replace(
            "owned unmapped (graphics)         256.0M   256.0M       0K       0K       0K       0K       0K        2 \n",
            "owned unmapped (graphics)         256.0M   256.0M       0K       0K       0K       0K       0K        2 \nowned unmapped memory              64.0M    64.0M       0K       0K       0K       0K       0K        1 \n",
        );
        assert!(doc.contains("owned unmapped memory"));
        let (doc, _) = parse_all(doc.as_bytes(), ParseOptions::default()).unwrap();
        let c = footprint_check(&doc, None).unwrap();
        assert_eq!(c.memtally, 832 << 20, "not 896M: {c:?}");
        assert!(c.agrees);
        assert!(
            !owned_unmapped("owned unmapped memory")
                && owned_unmapped(" owned unmapped (graphics)")
        );
        let total = &doc.summary_totals[0];
        assert_eq!(row_footprint(total), Some(576 << 20), "the TOTAL's own columns");
        assert_eq!(super::super::total_footprint(&doc), Some(832 << 20));
    }
}
