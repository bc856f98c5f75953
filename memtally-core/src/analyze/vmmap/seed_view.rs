//! The seed tool's view of a vmmap report, from memtally's parse: the
//! lines its regular expressions accept, with memtally's figures for them.

use std::collections::BTreeMap;

use regex::Regex;

use super::{purge_index, PurgeCounts};
use crate::model::vmmap::{Record, VRegionSink, MAX_SAMPLES};
use crate::model::{Flow, Purge};

/// One summary row as the seed reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedSummary {
    /// The REGION TYPE.
    pub region_type: String,
    /// VIRTUAL, RESIDENT, DIRTY, SWAPPED, VOLATILE, NONVOL, EMPTY, in bytes.
    pub figures: [u64; 7],
    /// REGION COUNT.
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
    /// Summary rows of the selected types, in input order.
    pub summaries: Vec<SeedSummary>,
    /// (type, purge state) -> [count, vsize, rsdnt + swap, dirty].
    pub breakdown: BTreeMap<(String, Purge), [u64; 4]>,
    /// type -> vsize -> counts per [N, V, E, -].
    pub hist: BTreeMap<String, BTreeMap<u64, PurgeCounts>>,
    /// Region lines of the selected types the seed counts (those with any
    /// resident, dirty or swapped bytes, or a purge state).
    pub entries: u64,
    /// Lines the seed reads that memtally read differently, as `line N: what`
    /// (the first 50).
    pub mismatches: Vec<String>,
}

/// The `type` and `purge` groups of the seed's region expression on a line
/// it matches.
fn seed_groups(line: &str) -> (&str, Purge) {
    let lb = line.find('[').unwrap_or(line.len());
    let before = line[..lb].trim_end();
    let cut = before.rfind(char::is_whitespace).unwrap_or(0);
    let seed_type = before[..cut].trim();
    let rb = line[lb..].find(']').map_or(line.len(), |i| lb + i + 1);
    let mut rest = line[rb..].trim_start();
    for _ in 0..2 {
        rest = rest.trim_start_matches(|c: char| !c.is_whitespace()).trim_start();
    }
    let purge = rest
        .strip_prefix("PURGE=")
        .and_then(|p| p.get(..1))
        .map_or(Purge::Unmarked, Purge::from_code);
    (seed_type, purge)
}

/// The region types the seed asks for when none are given.
const SEED_DEFAULT_TYPES: [&str; 2] = ["IOAccelerator", "IOSurface"];

impl SeedView {
    pub(crate) fn new(types: Vec<String>) -> SeedView {
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

    /// The types selected (the seed's defaults when none were given).
    pub fn types(&self) -> &[String] {
        &self.types
    }

    fn any_type(&self, s: &str) -> bool {
        self.types.iter().any(|t| s.contains(t.as_str()))
    }

    /// Follows the seed's loop for one raw line.
    fn follow(&mut self, line_no: usize, line: &str, rec: Option<&Record<'_>>) {
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
        if seed_purge != r.purge {
            let (ours, seed) = (r.purge.code(), seed_purge.code());
            self.mismatch(line_no, &format!("purge {ours}, the seed reads {seed}"));
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
        let b = self.breakdown.entry((r.region_type.to_string(), r.purge)).or_default();
        // Saturating: crafted sizes (8388608T twice) must not wrap.
        b[0] += 1;
        b[1] = b[1].saturating_add(vsize);
        b[2] = b[2].saturating_add(rsdnt.saturating_add(swap));
        b[3] = b[3].saturating_add(dirty);
    }

    fn mismatch(&mut self, line_no: usize, what: &str) {
        if self.mismatches.len() < MAX_SAMPLES {
            self.mismatches.push(format!("line {line_no}: {what}"));
        }
    }
}

/// Follows every line, the raw text as the seed reads it beside the
/// record memtally read; never stops the read.
impl VRegionSink for SeedView {
    fn line(&mut self, line_no: usize, raw: &str, record: Option<&Record<'_>>) -> Flow {
        self.follow(line_no, raw, record);
        Flow::Continue
    }
}
