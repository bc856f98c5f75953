//! The streaming analyses over the selected regions of a vmmap report.

use std::collections::{BTreeMap, HashMap};

use super::{
    footprint_of, footprint_part, opt_add, owned_unmapped, pow2_bucket, purge_index, same_type,
    Bucket, CountMismatch, Footprint, Overcommit, PurgeCounts, TypeFilter,
};
use crate::model::vmmap::{Document, SplitSink, VRegion, VRegionSink, MAX_SAMPLES};
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
        opt_add(&mut self.vsize, o.vsize);
        opt_add(&mut self.resident, o.resident);
        opt_add(&mut self.dirty, o.dirty);
        opt_add(&mut self.swap, o.swap);
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

/// FNV-1a: region type names are short and few; SipHash's defence against
/// chosen keys is not needed for a table of them.
#[derive(Debug, Clone, Copy)]
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

type FnvMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<Fnv>>;

/// Exact virtual size -> counts per purge state, while reading: hashed
/// (foldhash's fast hash, one multiply for a `u64`) rather than a
/// `BTreeMap` searched and maybe split once a region; sorted once, at
/// [`Tally::finish`]. The keys are sizes read from the input, so the
/// hash is seeded at random, as std's is.
type ExactCounts = HashMap<u64, PurgeCounts, foldhash::fast::RandomState>;

/// Everything kept per region type while reading.
#[derive(Debug, Clone, Default)]
struct TypeStats {
    name: String,
    lines: u64,
    selected: bool,
    /// Whether the type is owned unmapped memory (its footprint is its
    /// resident bytes): asked once a type.
    owned_unmapped: bool,
    by_purge: [Acc; 4],
    exact: ExactCounts,
    /// Indexed by bit length of the bucket (0 for vsize 0).
    pow2: Vec<(PurgeCounts, u64)>,
    footprint: Footprint,
}

/// The streaming analyses over the selected regions. Feed regions with
/// [`Tally::add`], then call [`Tally::finish`] to fill the public maps.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    /// Which region types are selected.
    pub filter: TypeFilter,
    index: FnvMap<String, usize>,
    stats: Vec<TypeStats>,
    /// The type of the previous region: consecutive lines often share it.
    last: Option<usize>,
    /// Regions read, of every type.
    pub regions_read: u64,
    /// Regions of the selected types.
    pub selected: u64,
    /// By (region type, purge code), sorted as the seed sorts.
    pub breakdown: BTreeMap<(String, &'static str), Bucket>,
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
}

impl Tally {
    /// An empty tally of the types `filter` selects.
    pub fn new(filter: TypeFilter) -> Tally {
        Tally { filter, ..Default::default() }
    }

    /// Adds one region read from line `line`.
    pub fn add(&mut self, line: usize, r: &VRegion) {
        self.regions_read += 1;
        let cached = self.last.filter(|&i| self.stats[i].name == r.region_type);
        // A report has a few dozen types: comparing names is cheaper than
        // hashing one, for the first few.
        let scanned = || match self.stats.len() {
            0..=SCANNED_TYPES => self.stats.iter().position(|st| st.name == r.region_type),
            _ => self.index.get(r.region_type).copied(),
        };
        let i = match cached.or_else(scanned) {
            Some(i) => i,
            None => {
                let i = self.stats.len();
                self.stats.push(TypeStats {
                    name: r.region_type.to_string(),
                    selected: self.filter.matches(r.region_type),
                    owned_unmapped: owned_unmapped(r.region_type),
                    ..Default::default()
                });
                self.index.insert(r.region_type.to_string(), i);
                i
            }
        };
        self.last = Some(i);
        let st = &mut self.stats[i];
        let fp = footprint_of(r, st.owned_unmapped);
        opt_add(&mut self.whole_footprint, fp.map(|f| footprint_part(r.purge, f)));
        st.lines += 1;
        if !st.selected {
            return;
        }
        self.selected += 1;
        let vsize = r.vsize.unwrap_or(0);
        let p = purge_index(r.purge);
        st.by_purge[p].merge(&Acc::of(r));
        st.exact.entry(vsize).or_default()[p] += 1;
        if st.pow2.is_empty() {
            st.pow2.resize(65, ([0; 4], 0));
        }
        let bucket = pow2_bucket(vsize);
        let b = &mut st.pow2[(64 - bucket.leading_zeros()) as usize];
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
        for st in std::mem::take(&mut self.stats) {
            self.lines_per_type.insert(st.name.clone(), st.lines);
            if !st.selected {
                continue;
            }
            let mut all = Acc::default();
            for (p, acc) in st.by_purge.iter().enumerate() {
                if acc.regions == 0 {
                    continue;
                }
                let code =
                    [Purge::NonVolatile, Purge::Volatile, Purge::Empty, Purge::Unmarked][p].code();
                self.breakdown.insert((st.name.clone(), code), acc.bucket());
                all.merge(acc);
                total.merge(acc);
            }
            self.by_type.insert(st.name.clone(), all.bucket());
            self.exact.insert(st.name.clone(), st.exact.into_iter().collect());
            let pow2 = st
                .pow2
                .iter()
                .enumerate()
                .filter(|(_, b)| b.0.iter().any(|&n| n > 0))
                .map(|(bits, b)| (if bits == 0 { 0 } else { 1u64 << (bits - 1) }, *b))
                .collect();
            self.pow2.insert(st.name.clone(), pow2);
            self.footprint_total.add(&st.footprint);
            self.footprint.insert(st.name, st.footprint);
        }
        self.total = total.bucket();
        self.index.clear();
        self.last = None;
    }

    /// Types whose region-line count differs from the summary COUNT. Empty
    /// when the input lacks either region lines or a COUNT column. Names
    /// vmmap spells two ways (`unused __DATA` in the region list, `unused
    /// but dirty shlib __DATA` in the summary) are one type here.
    pub fn count_check(&self, doc: &Document) -> Vec<CountMismatch> {
        if self.regions_read == 0 || !doc.summary.iter().any(|s| s.count.is_some()) {
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

impl TypeStats {
    /// Adds the figures of the same type's later regions (saturating).
    fn merge(&mut self, o: TypeStats) {
        self.lines = self.lines.saturating_add(o.lines);
        for (a, b) in self.by_purge.iter_mut().zip(&o.by_purge) {
            a.merge(b);
        }
        for (vsize, counts) in o.exact {
            add_counts(self.exact.entry(vsize).or_default(), &counts);
        }
        if self.pow2.is_empty() {
            self.pow2 = o.pow2;
        } else {
            for (a, b) in self.pow2.iter_mut().zip(o.pow2) {
                add_counts(&mut a.0, &b.0);
                a.1 = a.1.saturating_add(b.1);
            }
        }
        self.footprint.add(&o.footprint);
    }
}

/// Types looked up by comparing names rather than by the index.
const SCANNED_TYPES: usize = 16;

/// Adds counts per purge state.
fn add_counts(to: &mut PurgeCounts, from: &PurgeCounts) {
    for (a, b) in to.iter_mut().zip(from) {
        *a = a.saturating_add(*b);
    }
}

/// Takes every region: the tally never stops a read.
impl VRegionSink for Tally {
    fn region(&mut self, line: usize, r: &VRegion<'_>) -> Flow {
        self.add(line, r);
        Flow::Continue
    }
}

impl SplitSink for Tally {
    /// Both tallies must be unfinished and have the same filter.
    fn absorb(&mut self, part: &mut Tally, line_offset: usize) -> Flow {
        let later = std::mem::replace(part, Tally::new(part.filter.clone()));
        self.regions_read += later.regions_read;
        self.selected += later.selected;
        opt_add(&mut self.whole_footprint, later.whole_footprint);
        for st in later.stats {
            match self.index.get(st.name.as_str()) {
                Some(&i) => self.stats[i].merge(st),
                None => {
                    self.index.insert(st.name.clone(), self.stats.len());
                    self.stats.push(st);
                }
            }
        }
        self.last = None;
        self.overcommits += later.overcommits;
        for mut o in later.overcommit_samples {
            if self.overcommit_samples.len() >= MAX_SAMPLES {
                break;
            }
            o.line += line_offset;
            self.overcommit_samples.push(o);
        }
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

    /// Two parts of a parse in parts, each with a huge region of the same
    /// type: merged, every sum stops at u64::MAX (it wrapped, or panicked
    /// with overflow checks on, when the merge added field by field).
    #[test]
    fn merging_huge_tallies_saturates() {
        let (mut first, mut second) = (Tally::default(), Tally::default());
        for t in [&mut first, &mut second] {
            t.add(1, &huge("IOSurface"));
            t.add(2, &huge("IOSurface"));
        }
        first.absorb(&mut second, 2);
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
