//! The streaming analyses over the selected regions of a vmmap report.

use std::collections::BTreeMap;

use super::{
    footprint_of, footprint_part, pow2_bucket, purge_index, same_type, Bucket, CountMismatch,
    Footprint, Overcommit, PurgeCounts, TypeFilter,
};
use crate::model::sizes::add_opt;
use crate::model::vmmap::{Document, VRegion, VRegionSink, MAX_SAMPLES, MAX_TYPES, OTHER_TYPES};
use crate::model::{Flow, Purge, Sizes};

/// Running sums of one (type, purge) cell.
#[derive(Debug, Clone, Copy, Default)]
struct Acc {
    regions: u64,
    vsize: Option<u64>,
    resident: Option<u64>,
    dirty: Option<u64>,
    swap: Option<u64>,
}

impl Acc {
    /// The cell of one region.
    fn of(r: &VRegion) -> Acc {
        Acc { regions: 1, vsize: r.vsize, resident: r.resident, dirty: r.dirty, swap: r.swap }
    }

    /// Adds another cell's sums; saturating, as every sum of crafted sizes must be.
    fn merge(&mut self, o: &Acc) {
        self.regions = self.regions.saturating_add(o.regions);
        add_opt(&mut self.vsize, o.vsize);
        add_opt(&mut self.resident, o.resident);
        add_opt(&mut self.dirty, o.dirty);
        add_opt(&mut self.swap, o.swap);
    }

    fn bucket(&self) -> Bucket {
        Bucket {
            regions: self.regions,
            sizes: Sizes {
                size: self.vsize,
                rss: self.resident,
                dirty: self.dirty,
                swap: self.swap,
                ..Default::default()
            },
        }
    }
}

/// Everything kept per region type while reading.
#[derive(Debug, Clone, Default)]
struct TypeStats {
    lines: u64,
    selected: bool,
    by_purge: [Acc; 4],
    exact: BTreeMap<u64, PurgeCounts>,
    pow2: BTreeMap<u64, (PurgeCounts, u64)>,
    footprint: Footprint,
}

/// The streaming analyses over the selected regions. Feed regions with
/// [`Tally::add`], then call [`Tally::finish`] to fill the public maps.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    /// Which region types are selected.
    pub filter: TypeFilter,
    stats: BTreeMap<String, TypeStats>,
    /// Regions read, of every type.
    pub regions_read: u64,
    /// Regions of the selected types.
    pub selected: u64,
    /// By (region type, purge state), sorted as the seed sorts.
    pub breakdown: BTreeMap<(String, Purge), Bucket>,
    /// By region type.
    pub by_type: BTreeMap<String, Bucket>,
    /// Per type: exact virtual size -> counts per purge state.
    pub exact: BTreeMap<String, BTreeMap<u64, PurgeCounts>>,
    /// Per type: power-of-two bucket (smallest 2^k >= vsize) -> counts, bytes.
    pub pow2: BTreeMap<String, BTreeMap<u64, (PurgeCounts, u64)>>,
    /// Per type: the footprint and what purgeable state makes reclaimable.
    pub footprint: BTreeMap<String, Footprint>,
    /// The footprints of every selected type added up.
    pub footprint_total: Footprint,
    /// The footprint of every region read, whatever types are selected:
    /// what vmmap's `Physical footprint:` is compared with.
    pub whole_footprint: Option<u64>,
    /// Region lines per type, every type (for the summary check).
    pub lines_per_type: BTreeMap<String, u64>,
    /// Regions whose dirty + swap exceeds their virtual size.
    pub overcommits: u64,
    /// The first 50 of them.
    pub overcommit_samples: Vec<Overcommit>,
    /// Every selected region added up.
    pub total: Bucket,
    /// Regions of the types past the first [`MAX_TYPES`], tallied as one
    /// type, [`OTHER_TYPES`] (0: every type is its own).
    pub folded: u64,
}

impl Tally {
    /// An empty tally of the types `filter` selects.
    pub fn new(filter: TypeFilter) -> Tally {
        Tally { filter, ..Default::default() }
    }

    /// Adds one region read from line `line`.
    pub fn add(&mut self, line: usize, r: &VRegion) {
        self.regions_read += 1;
        let fp = footprint_of(r);
        add_opt(&mut self.whole_footprint, fp.map(|f| footprint_part(r.purge, f)));
        let mut name = r.region_type;
        if !self.stats.contains_key(name) {
            // Past MAX_TYPES types, one more: the rest of them, whichever
            // are selected (a folded region is tallied when its own
            // type is).
            if self.stats.len() >= MAX_TYPES {
                name = OTHER_TYPES;
                self.folded += 1;
            }
            if !self.stats.contains_key(name) {
                let selected = name == OTHER_TYPES || self.filter.matches(name);
                self.stats.insert(name.to_string(), TypeStats { selected, ..Default::default() });
            }
        }
        let Some(st) = self.stats.get_mut(name) else { return };
        st.lines += 1;
        if !st.selected || (name != r.region_type && !self.filter.matches(r.region_type)) {
            return;
        }
        self.selected += 1;
        let vsize = r.vsize.unwrap_or(0);
        let p = purge_index(r.purge);
        st.by_purge[p].merge(&Acc::of(r));
        st.exact.entry(vsize).or_default()[p] += 1;
        let b = st.pow2.entry(pow2_bucket(vsize)).or_default();
        b.0[p] += 1;
        b.1 = b.1.saturating_add(vsize);
        st.footprint.add(&Footprint::of(r, fp));
        if let Some(fp) = fp {
            if fp > vsize {
                self.overcommits += 1;
                if self.overcommit_samples.len() < MAX_SAMPLES {
                    self.overcommit_samples.push(Overcommit {
                        line,
                        region_type: r.region_type.to_string(),
                        start: r.start,
                        vsize,
                        dirty: r.dirty.unwrap_or(0),
                        swap: r.swap.unwrap_or(0),
                    });
                }
            }
        }
    }

    /// Fills the public maps from what was added.
    pub fn finish(&mut self) {
        let mut total = Acc::default();
        for (name, st) in std::mem::take(&mut self.stats) {
            self.lines_per_type.insert(name.clone(), st.lines);
            if !st.selected {
                continue;
            }
            let mut all = Acc::default();
            for (p, acc) in st.by_purge.iter().enumerate() {
                if acc.regions == 0 {
                    continue;
                }
                let purge = [Purge::NonVolatile, Purge::Volatile, Purge::Empty, Purge::Unmarked][p];
                self.breakdown.insert((name.clone(), purge), acc.bucket());
                all.merge(acc);
                total.merge(acc);
            }
            self.by_type.insert(name.clone(), all.bucket());
            self.exact.insert(name.clone(), st.exact);
            self.pow2.insert(name.clone(), st.pow2);
            self.footprint_total.add(&st.footprint);
            self.footprint.insert(name, st.footprint);
        }
        self.total = total.bucket();
    }

    /// Types whose region-line count differs from the summary COUNT. Empty
    /// when the input lacks either region lines or a COUNT column. Names
    /// vmmap spells two ways (`unused __DATA` in the region list, `unused
    /// but dirty shlib __DATA` in the summary) are one type here. Empty too
    /// when types were folded (the one row sums types the summary names
    /// apart).
    pub fn count_check(&self, doc: &Document) -> Vec<CountMismatch> {
        if self.regions_read == 0 || self.folded > 0 {
            return Vec::new();
        }
        if !doc.summary.iter().any(|s| s.count.is_some()) {
            return Vec::new();
        }
        let mut out = Vec::new();
        // Canonical name -> (name as the summary prints it, count).
        let mut summary: BTreeMap<&str, (&str, u64)> = BTreeMap::new();
        for s in &doc.summary {
            if let Some(c) = s.count {
                let e = summary.entry(same_type(&s.region_type)).or_insert((&s.region_type, 0));
                e.1 += c;
            }
        }
        let mut lines: BTreeMap<&str, (&str, u64)> = BTreeMap::new();
        for (t, &n) in &self.lines_per_type {
            lines.entry(same_type(t)).or_insert((t, 0)).1 += n;
        }
        for (key, &(name, c)) in &summary {
            if !self.filter.matches(name) {
                continue;
            }
            let n = lines.get(key).map_or(0, |l| l.1);
            if n != c {
                out.push(CountMismatch {
                    region_type: name.to_string(),
                    summary_count: c,
                    region_lines: n,
                });
            }
        }
        for (key, &(name, n)) in &lines {
            if self.filter.matches(name) && !summary.contains_key(key) {
                out.push(CountMismatch {
                    region_type: name.to_string(),
                    summary_count: 0,
                    region_lines: n,
                });
            }
        }
        out
    }
}

/// Takes every region: the tally never stops a read.
impl VRegionSink for Tally {
    fn region(&mut self, line: usize, r: &VRegion<'_>) -> Flow {
        self.add(line, r);
        Flow::Continue
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A volatile region of 8 EiB (`8388608T`), as a crafted report has.
    fn huge(region_type: &str) -> VRegion<'_> {
        VRegion {
            region_type,
            start: None,
            end: None,
            vsize: Some(1 << 63),
            resident: Some(1 << 63),
            dirty: Some(1 << 63),
            swap: Some(0),
            prot: "rw-",
            max_prot: None,
            share_mode: None,
            purge: Purge::Volatile,
            detail: None,
        }
    }

    /// Four huge regions of one type: every sum stops at u64::MAX (none
    /// wraps, nor panics with overflow checks on).
    #[test]
    fn huge_regions_saturate_every_sum() {
        let mut first = Tally::default();
        for line in 1..=4 {
            first.add(line, &huge("IOSurface"));
        }
        first.finish();
        let f = &first.footprint["IOSurface"];
        assert_eq!((f.regions, f.volatile_vsize, f.reclaimable), (4, u64::MAX, Some(u64::MAX)));
        assert_eq!(f.footprint, Some(0), "volatile: reclaimable, not footprint");
        let b = &first.by_type["IOSurface"];
        assert_eq!((b.regions, b.sizes.size, b.sizes.dirty), (4, Some(u64::MAX), Some(u64::MAX)));
        assert_eq!(first.pow2["IOSurface"][&(1 << 63)].1, u64::MAX);
        assert_eq!(first.footprint_total.volatile_vsize, u64::MAX);
    }
}
