//! vmmap analyses, fed one line at a time so memory stays flat: the
//! (region type, purge state) breakdown, histograms by virtual size (exact
//! and power-of-two buckets), a footprint line per type, dirty + swap above
//! virtual size warnings, and the summary-table-versus-regions count check.
//! [`SeedView`] reproduces the seed's three reports from memtally's parse.

use std::collections::{BTreeMap, HashMap};

use regex::Regex;
use serde::Serialize;

use crate::model::{Purge, Sizes};
use crate::source::vmmap::split::RegionSink;
use crate::source::vmmap::{Document, Record, VRegion, MAX_SAMPLES};

/// Index of a purge state in `[N, V, E, -]` arrays.
pub fn purge_index(p: Purge) -> usize {
    match p {
        Purge::NonVolatile => 0,
        Purge::Volatile => 1,
        Purge::Empty => 2,
        Purge::Unmarked => 3,
    }
}

/// Selects region types by substring, as the seed's `--types` does; no
/// types selects every type.
#[derive(Debug, Clone, Default)]
pub struct TypeFilter {
    types: Vec<String>,
}

impl TypeFilter {
    pub fn new(types: Vec<String>) -> TypeFilter {
        TypeFilter { types }
    }

    pub fn matches(&self, region_type: &str) -> bool {
        self.types.is_empty() || self.types.iter().any(|t| region_type.contains(t.as_str()))
    }

    pub fn types(&self) -> &[String] {
        &self.types
    }
}

/// A sum of regions.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Bucket {
    pub regions: u64,
    pub sizes: Sizes,
}

/// Dirty + swapped per type, and the part that purgeable state makes reclaimable.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Footprint {
    pub regions: u64,
    /// Dirty + swap; `None` when the input has no dirty or swap figures.
    pub footprint: Option<u64>,
    /// Footprint of regions marked volatile (`V`) or empty (`E`).
    pub reclaimable: Option<u64>,
    pub volatile_vsize: u64,
    pub empty_vsize: u64,
    pub nonvol_vsize: u64,
}

/// A region whose dirty + swap exceeds its virtual size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Overcommit {
    pub line: usize,
    pub region_type: String,
    pub start: Option<u64>,
    pub vsize: u64,
    pub dirty: u64,
    pub swap: u64,
}

/// A type whose region-line count differs from its summary-table COUNT.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CountMismatch {
    pub region_type: String,
    pub summary_count: u64,
    pub region_lines: u64,
}

/// Histogram counts per `[N, V, E, -]`.
pub type PurgeCounts = [u64; 4];

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
    fn add(&mut self, r: &VRegion) {
        self.regions += 1;
        opt_add(&mut self.vsize, r.vsize);
        opt_add(&mut self.resident, r.resident);
        opt_add(&mut self.dirty, r.dirty);
        opt_add(&mut self.swap, r.swap);
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
pub struct Fnv(u64);

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

/// Everything kept per region type while reading.
#[derive(Debug, Clone, Default)]
struct TypeStats {
    name: String,
    lines: u64,
    selected: bool,
    by_purge: [Acc; 4],
    exact: BTreeMap<u64, PurgeCounts>,
    /// Indexed by bit length of the bucket (0 for vsize 0).
    pow2: Vec<(PurgeCounts, u64)>,
    footprint: Footprint,
}

/// The streaming analyses over the selected regions. Feed regions with
/// [`Tally::add`], then call [`Tally::finish`] to fill the public maps.
#[derive(Debug, Clone, Default)]
pub struct Tally {
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
    pub by_type: BTreeMap<String, Bucket>,
    /// Per type: exact virtual size -> counts per purge state.
    pub exact: BTreeMap<String, BTreeMap<u64, PurgeCounts>>,
    /// Per type: power-of-two bucket (smallest 2^k >= vsize) -> counts, bytes.
    pub pow2: BTreeMap<String, BTreeMap<u64, (PurgeCounts, u64)>>,
    pub footprint: BTreeMap<String, Footprint>,
    /// Region lines per type, every type (for the summary check).
    pub lines_per_type: BTreeMap<String, u64>,
    pub overcommits: u64,
    pub overcommit_samples: Vec<Overcommit>,
    pub total: Bucket,
}

fn opt_add(slot: &mut Option<u64>, v: Option<u64>) {
    if let Some(v) = v {
        *slot = Some(slot.unwrap_or(0).saturating_add(v));
    }
}

/// dirty + swap, when either is known.
pub fn footprint_of(r: &VRegion) -> Option<u64> {
    match (r.dirty, r.swap) {
        (None, None) => None,
        (d, s) => Some(d.unwrap_or(0).saturating_add(s.unwrap_or(0))),
    }
}

/// The smallest power of two at or above `v` (0 for 0).
pub fn pow2_bucket(v: u64) -> u64 {
    if v == 0 {
        0
    } else {
        v.checked_next_power_of_two().unwrap_or(1 << 63)
    }
}

impl Tally {
    pub fn new(filter: TypeFilter) -> Tally {
        Tally { filter, ..Default::default() }
    }

    /// Adds one region read from line `line`.
    pub fn add(&mut self, line: usize, r: &VRegion) {
        self.regions_read += 1;
        let cached = self.last.filter(|&i| self.stats[i].name == r.region_type);
        let i = match cached.or_else(|| self.index.get(r.region_type).copied()) {
            Some(i) => i,
            None => {
                let i = self.stats.len();
                self.stats.push(TypeStats {
                    name: r.region_type.to_string(),
                    selected: self.filter.matches(r.region_type),
                    ..Default::default()
                });
                self.index.insert(r.region_type.to_string(), i);
                i
            }
        };
        self.last = Some(i);
        let st = &mut self.stats[i];
        st.lines += 1;
        if !st.selected {
            return;
        }
        self.selected += 1;
        let vsize = r.vsize.unwrap_or(0);
        let p = purge_index(r.purge);
        st.by_purge[p].add(r);
        st.exact.entry(vsize).or_default()[p] += 1;
        if st.pow2.is_empty() {
            st.pow2.resize(65, ([0; 4], 0));
        }
        let bucket = pow2_bucket(vsize);
        let b = &mut st.pow2[(64 - bucket.leading_zeros()) as usize];
        b.0[p] += 1;
        b.1 = b.1.saturating_add(vsize);
        let fp = footprint_of(r);
        let f = &mut st.footprint;
        f.regions += 1;
        opt_add(&mut f.footprint, fp);
        match r.purge {
            Purge::Volatile => f.volatile_vsize += vsize,
            Purge::Empty => f.empty_vsize += vsize,
            Purge::NonVolatile => f.nonvol_vsize += vsize,
            Purge::Unmarked => {}
        }
        if matches!(r.purge, Purge::Volatile | Purge::Empty) {
            opt_add(&mut f.reclaimable, fp);
        } else if fp.is_some() && f.reclaimable.is_none() {
            f.reclaimable = Some(0);
        }
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
                for a in [&mut all, &mut total] {
                    a.regions += acc.regions;
                    opt_add(&mut a.vsize, acc.vsize);
                    opt_add(&mut a.resident, acc.resident);
                    opt_add(&mut a.dirty, acc.dirty);
                    opt_add(&mut a.swap, acc.swap);
                }
            }
            self.by_type.insert(st.name.clone(), all.bucket());
            self.exact.insert(st.name.clone(), st.exact);
            let pow2 = st
                .pow2
                .iter()
                .enumerate()
                .filter(|(_, b)| b.0.iter().any(|&n| n > 0))
                .map(|(bits, b)| (if bits == 0 { 0 } else { 1u64 << (bits - 1) }, *b))
                .collect();
            self.pow2.insert(st.name.clone(), pow2);
            self.footprint.insert(st.name, st.footprint);
        }
        self.total = total.bucket();
        self.index.clear();
        self.last = None;
    }

    /// Types whose region-line count differs from the summary COUNT. Empty
    /// when the input lacks either region lines or a COUNT column.
    pub fn count_check(&self, doc: &Document) -> Vec<CountMismatch> {
        if self.regions_read == 0 || !doc.summary.iter().any(|s| s.count.is_some()) {
            return Vec::new();
        }
        let mut out = Vec::new();
        let mut summary: BTreeMap<&str, u64> = BTreeMap::new();
        for s in &doc.summary {
            if let Some(c) = s.count {
                *summary.entry(s.region_type.as_str()).or_default() += c;
            }
        }
        for (t, &c) in &summary {
            if !self.filter.matches(t) {
                continue;
            }
            let lines = self.lines_per_type.get(*t).copied().unwrap_or(0);
            if lines != c {
                out.push(CountMismatch {
                    region_type: t.to_string(),
                    summary_count: c,
                    region_lines: lines,
                });
            }
        }
        for (t, &n) in &self.lines_per_type {
            if self.filter.matches(t) && !summary.contains_key(t.as_str()) {
                out.push(CountMismatch {
                    region_type: t.clone(),
                    summary_count: 0,
                    region_lines: n,
                });
            }
        }
        out
    }
}

impl Acc {
    fn merge(&mut self, o: &Acc) {
        self.regions += o.regions;
        opt_add(&mut self.vsize, o.vsize);
        opt_add(&mut self.resident, o.resident);
        opt_add(&mut self.dirty, o.dirty);
        opt_add(&mut self.swap, o.swap);
    }
}

impl TypeStats {
    /// Adds the figures of the same type's later regions.
    fn merge(&mut self, o: TypeStats) {
        self.lines += o.lines;
        for (a, b) in self.by_purge.iter_mut().zip(&o.by_purge) {
            a.merge(b);
        }
        for (vsize, counts) in o.exact {
            let e = self.exact.entry(vsize).or_default();
            for (a, b) in e.iter_mut().zip(counts) {
                *a += b;
            }
        }
        if self.pow2.is_empty() {
            self.pow2 = o.pow2;
        } else {
            for (a, b) in self.pow2.iter_mut().zip(o.pow2) {
                for (x, y) in a.0.iter_mut().zip(b.0) {
                    *x += y;
                }
                a.1 = a.1.saturating_add(b.1);
            }
        }
        let (f, g) = (&mut self.footprint, o.footprint);
        f.regions += g.regions;
        opt_add(&mut f.footprint, g.footprint);
        // Some iff a region had a footprint: the sum of the V and E ones.
        opt_add(&mut f.reclaimable, g.reclaimable);
        f.volatile_vsize += g.volatile_vsize;
        f.empty_vsize += g.empty_vsize;
        f.nonvol_vsize += g.nonvol_vsize;
    }
}

impl RegionSink for Tally {
    fn region(&mut self, line: usize, r: &VRegion<'_>) {
        self.add(line, r);
    }

    /// Both tallies must be unfinished and have the same filter.
    fn absorb(&mut self, later: Tally, line_offset: usize) {
        self.regions_read += later.regions_read;
        self.selected += later.selected;
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
    }
}

/// One summary row as the seed reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedSummary {
    pub region_type: String,
    pub figures: [u64; 7],
    pub count: u64,
}

/// The seed's view of the input: the lines its regular expressions accept,
/// with memtally's figures for them. Its output must match the seed's
/// byte for byte; a line the seed reads that memtally read differently is
/// listed in `mismatches` (and printed, so a comparison fails).
#[derive(Debug)]
pub struct SeedView {
    types: Vec<String>,
    region_re: Regex,
    summary_re: Regex,
    in_summary: bool,
    pub summaries: Vec<SeedSummary>,
    /// (type, purge code) -> [count, vsize, rsdnt + swap, dirty].
    pub breakdown: BTreeMap<(String, &'static str), [u64; 4]>,
    /// type -> vsize -> counts per [N, V, E, -].
    pub hist: BTreeMap<String, BTreeMap<u64, PurgeCounts>>,
    pub entries: u64,
    pub mismatches: Vec<String>,
}

/// The `type` and `purge` groups of the seed's region expression on a line
/// it matches.
fn seed_groups(line: &str) -> (&str, &'static str) {
    let lb = line.find('[').unwrap_or(line.len());
    let before = line[..lb].trim_end();
    let cut = before.rfind(char::is_whitespace).unwrap_or(0);
    let seed_type = before[..cut].trim();
    let rb = line[lb..].find(']').map_or(line.len(), |i| lb + i + 1);
    let mut rest = line[rb..].trim_start();
    for _ in 0..2 {
        rest = rest.trim_start_matches(|c: char| !c.is_whitespace()).trim_start();
    }
    let purge = match rest.strip_prefix("PURGE=").and_then(|p| p.chars().next()) {
        Some('N') => "N",
        Some('V') => "V",
        Some('E') => "E",
        _ => "-",
    };
    (seed_type, purge)
}

/// The seed's default `--types`.
pub const SEED_DEFAULT_TYPES: [&str; 2] = ["IOAccelerator", "IOSurface"];

impl SeedView {
    pub fn new(types: Vec<String>) -> SeedView {
        // The seed's expressions, verbatim.
        let region_re = Regex::new(concat!(
            r"^(?P<type>[A-Za-z0-9_ ()]+?)\s+",
            r"[0-9a-fA-F]+-[0-9a-fA-F]+\s+",
            r"\[\s*(?P<vsize>[0-9.BKMG]+)\s+",
            r"(?P<rsdnt>[0-9.BKMG]+)\s+",
            r"(?P<dirty>[0-9.BKMG]+)\s+",
            r"(?P<swap>[0-9.BKMG]+)\]\s+",
            r"\S+\s+\S+\s*",
            r"(?:PURGE=(?P<purge>[NVE]))?\s*",
            r".*$"
        ))
        .expect("seed region expression");
        let summary_re = Regex::new(concat!(
            r"^(?P<type>[A-Za-z0-9_ ()]+?)\s+",
            r"(?P<virtual>[0-9.BKMG]+)\s+",
            r"(?P<resident>[0-9.BKMG]+)\s+",
            r"(?P<dirty>[0-9.BKMG]+)\s+",
            r"(?P<swapped>[0-9.BKMG]+)\s+",
            r"(?P<volatile>[0-9.BKMG]+)\s+",
            r"(?P<nonvol>[0-9.BKMG]+)\s+",
            r"(?P<empty>[0-9.BKMG]+)\s+",
            r"(?P<count>[0-9]+)(?:\s+.*)?$"
        ))
        .expect("seed summary expression");
        let types = if types.is_empty() {
            SEED_DEFAULT_TYPES.iter().map(|s| s.to_string()).collect()
        } else {
            types
        };
        SeedView {
            types,
            region_re,
            summary_re,
            in_summary: false,
            summaries: Vec::new(),
            breakdown: BTreeMap::new(),
            hist: BTreeMap::new(),
            entries: 0,
            mismatches: Vec::new(),
        }
    }

    pub fn types(&self) -> &[String] {
        &self.types
    }

    fn any_type(&self, s: &str) -> bool {
        self.types.iter().any(|t| s.contains(t.as_str()))
    }

    /// Follows the seed's loop for one raw line.
    pub fn line(&mut self, line_no: usize, line: &str, rec: Option<&Record<'_>>) {
        if line.contains("VIRTUAL") && line.contains("VOLATILE") && line.contains("NONVOL") {
            self.in_summary = true;
            return;
        }
        if self.in_summary {
            if line.starts_with("REGION TYPE")
                || line.starts_with("===========")
                || line.trim().is_empty()
            {
                return;
            }
            if line.starts_with("TOTAL") {
                self.in_summary = false;
                return;
            }
            let Some(m) = self.summary_re.captures(line) else { return };
            if !self.any_type(&m["type"]) {
                return;
            }
            let seed_type = m["type"].trim();
            match rec {
                Some(Record::Summary(s)) => {
                    let figs = [
                        s.virtual_size,
                        s.resident,
                        s.dirty,
                        s.swapped,
                        s.volatile,
                        s.nonvol,
                        s.empty,
                    ];
                    if figs.iter().any(Option::is_none) || s.count.is_none() {
                        self.mismatch(line_no, "summary row lacks a figure the seed reads");
                        return;
                    }
                    if s.region_type != seed_type {
                        self.mismatch(
                            line_no,
                            &format!("type {:?}, the seed reads {seed_type:?}", s.region_type),
                        );
                    }
                    self.summaries.push(SeedSummary {
                        region_type: s.region_type.clone(),
                        figures: figs.map(|f| f.unwrap_or(0)),
                        count: s.count.unwrap_or(0),
                    });
                }
                _ => self.mismatch(line_no, "the seed reads a summary row here; memtally did not"),
            }
            return;
        }
        if !self.any_type(line) {
            return;
        }
        if !self.region_re.is_match(line) {
            return;
        }
        // What the expression's groups hold when it matches (without the
        // cost of captures): the type is the text before the address range
        // before the first `[`; PURGE= is read after two tokens past `]`.
        let (seed_type, seed_purge) = seed_groups(line);
        if !self.any_type(seed_type) {
            return;
        }
        let Some(Record::Region(r)) = rec else {
            self.mismatch(line_no, "the seed reads a region here; memtally did not");
            return;
        };
        let (Some(vsize), Some(rsdnt), Some(dirty), Some(swap)) =
            (r.vsize, r.resident, r.dirty, r.swap)
        else {
            self.mismatch(line_no, "region lacks a figure the seed reads");
            return;
        };
        if r.region_type != seed_type {
            self.mismatch(
                line_no,
                &format!("type {:?}, the seed reads {seed_type:?}", r.region_type),
            );
        }
        if seed_purge != r.purge.code() {
            self.mismatch(
                line_no,
                &format!("purge {}, the seed reads {seed_purge}", r.purge.code()),
            );
        }
        if rsdnt == 0 && dirty == 0 && swap == 0 && r.purge == Purge::Unmarked {
            return;
        }
        self.entries += 1;
        let i = purge_index(r.purge);
        if let Some(h) = self.hist.get_mut(r.region_type) {
            h.entry(vsize).or_default()[i] += 1;
        } else {
            self.hist.entry(r.region_type.to_string()).or_default().entry(vsize).or_default()[i] +=
                1;
        }
        let b = self.breakdown.entry((r.region_type.to_string(), r.purge.code())).or_default();
        b[0] += 1;
        b[1] += vsize;
        b[2] += rsdnt + swap;
        b[3] += dirty;
    }

    fn mismatch(&mut self, line_no: usize, what: &str) {
        if self.mismatches.len() < MAX_SAMPLES {
            self.mismatches.push(format!("line {line_no}: {what}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::vmmap::{parse, ParseOptions};

    const SAMPLE: &str = "\
REGION TYPE                    START - END         [ VSIZE  RSDNT  DIRTY   SWAP] PRT/MAX SHRMOD PURGE    REGION DETAIL
IOSurface                   100000000-100010000    [   64K    64K    64K     0K] rw-/rw- SM=SHM PURGE=V
IOSurface                   100010000-100020000    [   64K    16K    16K    64K] rw-/rw- SM=SHM PURGE=N
IOSurface                   100020000-100028000    [   32K     0K     0K     0K] rw-/rw- SM=SHM
IOAccelerator               100028000-100030000    [   32K    32K    32K     0K] rw-/rw- SM=SHM PURGE=E
MALLOC_TINY                 100030000-100130000    [ 1024K    16K    16K     0K] rw-/rwx SM=PRV
";

    fn tally(types: &[&str]) -> Tally {
        let mut t = Tally::new(TypeFilter::new(types.iter().map(|s| s.to_string()).collect()));
        parse(SAMPLE.as_bytes(), ParseOptions::default(), |n, _, rec| {
            if let Some(Record::Region(r)) = rec {
                t.add(n, r);
            }
        })
        .unwrap();
        t.finish();
        t
    }

    #[test]
    fn breakdown_and_footprint_by_type_and_purge() {
        let t = tally(&["IOSurface", "IOAccelerator"]);
        assert_eq!(t.regions_read, 5);
        assert_eq!(t.selected, 4);
        let v = &t.breakdown[&("IOSurface".to_string(), "V")];
        assert_eq!((v.regions, v.sizes.size, v.sizes.dirty), (1, Some(65536), Some(65536)));
        let f = &t.footprint["IOSurface"];
        assert_eq!(f.footprint, Some(65536 + 16384 + 65536));
        assert_eq!(f.reclaimable, Some(65536));
        assert_eq!(f.volatile_vsize, 65536);
        assert_eq!(t.footprint["IOAccelerator"].reclaimable, Some(32768));
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
        parse(SAMPLE.as_bytes(), ParseOptions::default(), |n, raw, rec| s.line(n, raw, rec))
            .unwrap();
        assert!(s.mismatches.is_empty(), "{:?}", s.mismatches);
        // The 32K unmarked IOSurface with nothing resident is dropped.
        assert_eq!(s.entries, 3);
        assert_eq!(s.breakdown[&("IOSurface".to_string(), "N")], [1, 65536, 16384 + 65536, 16384]);
    }

    #[test]
    fn seed_view_reports_lines_memtally_read_differently() {
        let line = "IOSurface  100000000-100010000 [ 64K 64K 64K 0K] rw-/rw- SM=SHM PURGE=V";
        let mut s = SeedView::new(Vec::new());
        s.line(7, line, None);
        assert_eq!(s.mismatches, vec!["line 7: the seed reads a region here; memtally did not"]);
        let mut s = SeedView::new(Vec::new());
        let mut p = crate::source::vmmap::Parser::new(ParseOptions::default());
        let rec = p.line(1, line);
        let Some(Record::Region(mut r)) = rec else { panic!("not a region") };
        r.purge = Purge::Empty;
        s.line(1, line, Some(&Record::Region(r)));
        assert_eq!(s.mismatches, vec!["line 1: purge E, the seed reads V"]);
    }
}
