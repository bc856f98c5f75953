//! What two vmmap reports of one process say about its footprint and its
//! reclaimable memory, before and after. A region that goes from `N` to
//! `V` leaves the footprint for reclaimable memory while its dirty bytes
//! stay: the per-region dirty delta reads 0 where the footprint halves.
//! Summary-only reports (`vmmap -summary`) carry no purge state per
//! region, so their VOLATILE, NONVOL and EMPTY columns are compared.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{charged, footprint_part, reclaimable_part};
use crate::analyze::signed::clamp;
use crate::model::sizes::add_opt;
use crate::model::snapshot::SnapProcess;
use crate::model::{Purge, Sizes};

/// A figure before and after, and the difference (after - before).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Delta {
    /// Before, bytes; `None` when the first report lacks the figure.
    pub before: Option<u64>,
    /// After, bytes; `None` when the second report lacks it.
    pub after: Option<u64>,
    /// After - before, signed bytes; `None` unless both have it.
    pub delta: Option<i64>,
}

impl Delta {
    fn of(before: Option<u64>, after: Option<u64>) -> Delta {
        let delta = before.zip(after).map(|(b, a)| clamp(i128::from(a) - i128::from(b)));
        Delta { before, after, delta }
    }

    /// Whether the figure moved (or is on one side only).
    pub fn changed(&self) -> bool {
        self.delta.map_or(self.before != self.after, |d| d != 0)
    }
}

/// The figures of one region type (or of the whole report), one side.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Side {
    footprint: Option<u64>,
    reclaimable: Option<u64>,
    volatile: Option<u64>,
    nonvol: Option<u64>,
    empty: Option<u64>,
}

impl Side {
    fn add(&mut self, o: &Side) {
        for (slot, v) in [
            (&mut self.footprint, o.footprint),
            (&mut self.reclaimable, o.reclaimable),
            (&mut self.volatile, o.volatile),
            (&mut self.nonvol, o.nonvol),
            (&mut self.empty, o.empty),
        ] {
            add_opt(slot, v);
        }
    }
}

/// The footprint and purgeable figures of one region type, or of all.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PurgeableDelta {
    /// The region type; `None` for the whole report.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region_type: Option<String>,
    /// Footprint (docs/vmmap-json.md): dirty + swapped, less volatile.
    pub footprint: Delta,
    /// Reclaimable: resident volatile (and empty) purgeable bytes.
    pub reclaimable: Delta,
    /// The summary's VOLATILE column (summary-only reports).
    pub volatile: Delta,
    /// The summary's NONVOL column (summary-only reports).
    pub nonvol: Delta,
    /// The summary's EMPTY column (summary-only reports).
    pub empty: Delta,
}

impl PurgeableDelta {
    fn of(region_type: Option<String>, b: Side, a: Side) -> PurgeableDelta {
        PurgeableDelta {
            region_type,
            footprint: Delta::of(b.footprint, a.footprint),
            reclaimable: Delta::of(b.reclaimable, a.reclaimable),
            volatile: Delta::of(b.volatile, a.volatile),
            nonvol: Delta::of(b.nonvol, a.nonvol),
            empty: Delta::of(b.empty, a.empty),
        }
    }

    fn changed(&self) -> bool {
        [self.footprint, self.reclaimable, self.volatile, self.nonvol, self.empty]
            .iter()
            .any(Delta::changed)
    }
}

/// Two vmmap reports' footprints compared.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FootprintDiff {
    /// Every type together.
    pub total: PurgeableDelta,
    /// vmmap's own `Physical footprint:` of each report.
    pub physical_footprint: Delta,
    /// The types whose figures moved, largest footprint change first.
    pub types: Vec<PurgeableDelta>,
}

/// Each region type's figures of one report (by category: a type past the
/// first [`MAX_TYPES`](crate::model::vmmap::MAX_TYPES) is in the one it is
/// summed in), added up one region at a time: `diff` of saved vmmap text
/// folds them as it reads, keeping no region.
#[derive(Debug, Clone, Default)]
pub struct TypeSides(BTreeMap<String, Side>);

impl TypeSides {
    /// Adds one region of this category and type (they differ where the
    /// type is summed in another), purge state and sizes.
    pub(crate) fn add_region(
        &mut self,
        category: &str,
        region_type: Option<&str>,
        purge: Option<Purge>,
        sizes: &Sizes,
    ) {
        let purge = purge.unwrap_or(Purge::Unmarked);
        let t = region_type.unwrap_or(category);
        let fp = match (charged(t, sizes.dirty, sizes.rss), sizes.swap) {
            (None, None) => None,
            (d, s) => Some(footprint_part(purge, d.unwrap_or(0).saturating_add(s.unwrap_or(0)))),
        };
        let one = Side {
            footprint: fp,
            reclaimable: sizes.rss.map(|rss| reclaimable_part(purge, rss)),
            ..Side::default()
        };
        match self.0.get_mut(category) {
            Some(side) => side.add(&one),
            None => {
                self.0.insert(category.to_string(), one);
            }
        }
    }

    /// A report's figures: from its regions (purge state per region), or,
    /// without region lines, from its summary rows.
    pub fn of(p: &SnapProcess) -> TypeSides {
        let mut sides = TypeSides::default();
        if !p.regions.is_empty() {
            for r in &p.regions {
                sides.add_region(&r.category, r.region_type.as_deref(), r.purge, &r.sizes);
            }
            return sides;
        }
        for c in &p.categories {
            let pg = p.purgeable.iter().find(|s| s.region_type == c.key);
            let volatile = pg.and_then(|s| s.volatile);
            let s = &c.sizes;
            let fp = match (charged(&c.key, s.dirty, s.rss), s.swap) {
                (None, None) => None,
                (d, w) => Some(
                    d.unwrap_or(0)
                        .saturating_add(w.unwrap_or(0))
                        .saturating_sub(volatile.unwrap_or(0)),
                ),
            };
            let one = Side {
                footprint: fp,
                reclaimable: volatile,
                volatile,
                nonvol: pg.and_then(|s| s.nonvol),
                empty: pg.and_then(|s| s.empty),
            };
            sides.0.entry(c.key.clone()).or_default().add(&one);
        }
        sides
    }
}

/// The footprint, reclaimable and purgeable figures of `before` and
/// `after` (one process each, vmmap snapshots), overall and per type.
pub(crate) fn footprint_diff(before: &SnapProcess, after: &SnapProcess) -> FootprintDiff {
    let (b, a) = (TypeSides::of(before), TypeSides::of(after));
    footprint_diff_of((&b, before.physical_footprint), (&a, after.physical_footprint))
}

/// [`footprint_diff`] of two reports' figures by type, each with its
/// `Physical footprint:` header.
pub(crate) fn footprint_diff_of(
    before: (&TypeSides, Option<u64>),
    after: (&TypeSides, Option<u64>),
) -> FootprintDiff {
    let (b, a) = (&before.0 .0, &after.0 .0);
    let (mut tb, mut ta) = (Side::default(), Side::default());
    b.values().for_each(|s| tb.add(s));
    a.values().for_each(|s| ta.add(s));
    let mut names: Vec<&String> = b.keys().chain(a.keys()).collect();
    names.sort();
    names.dedup();
    let mut types: Vec<PurgeableDelta> = names
        .into_iter()
        .map(|t| {
            let side = |m: &BTreeMap<String, Side>| m.get(t).copied().unwrap_or_default();
            PurgeableDelta::of(Some(t.clone()), side(b), side(a))
        })
        .filter(PurgeableDelta::changed)
        .collect();
    types.sort_by_key(|t| std::cmp::Reverse(t.footprint.delta.map_or(0, i64::unsigned_abs)));
    FootprintDiff {
        total: PurgeableDelta::of(None, tb, ta),
        physical_footprint: Delta::of(before.1, after.1),
        types,
    }
}
