//! A macOS `vmmap` report as read: the header facts, the summary and
//! MALLOC ZONE tables, what could not be read, and the region lines as
//! they stream past (borrowed, so the parser allocates nothing per line).

use serde::{Deserialize, Serialize};

use super::region::{Backing, Purge, Region};
use super::sink::Flow;

/// How many sample lines each diagnostic keeps (the counts are exact).
pub(crate) const MAX_SAMPLES: usize = 50;

/// The most region types a vmmap report is tallied by, and the most rows
/// of its summary and MALLOC ZONE tables kept: a real report has a few
/// dozen types and zones; a crafted one may have a type on every line.
/// The region types past this many are summed in one row named
/// [`OTHER_TYPES`] (the summary's rows likewise), and a note says so.
pub const MAX_TYPES: usize = 1000;

/// The row the region types past [`MAX_TYPES`] are summed in.
pub const OTHER_TYPES: &str = "other types";

/// One unit of the last digit of a size as printed, in bytes: `15.8G` is
/// 0.1G, `2437K` 1K, `0.20` (pages) a hundredth of `bare`. What rounding
/// to that digit can hide; 0 for a token that is not a size.
pub(crate) fn printed_step(t: &str, bare: u64) -> u64 {
    let b = t.as_bytes();
    let (digits, mult) = match b.last() {
        Some(b'B') => (&t[..t.len() - 1], 1u64),
        Some(b'K') => (&t[..t.len() - 1], 1 << 10),
        Some(b'M') => (&t[..t.len() - 1], 1 << 20),
        Some(b'G') => (&t[..t.len() - 1], 1 << 30),
        Some(b'T') => (&t[..t.len() - 1], 1 << 40),
        Some(_) => (t, bare),
        None => return 0,
    };
    let decimals = digits.find('.').map_or(0, |at| digits.len() - at - 1);
    let tens = 10u64.checked_pow(u32::try_from(decimals).unwrap_or(u32::MAX)).unwrap_or(u64::MAX);
    (mult / tens).max(1)
}

/// One `Key: value` line of the header or footer, as printed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Fact {
    /// The key, as printed (`Physical footprint`).
    pub key: String,
    /// The value, as printed (`5.4M`).
    pub value: String,
}

/// What the report says about the process and the tool.
// Read back from `vmmap --format json` as it is written there.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Header {
    /// The process name (`Process: NAME [PID]`).
    pub process: Option<String>,
    /// The PID (`Process: NAME [PID]`).
    pub pid: Option<u32>,
    /// The executable (`Path:`).
    pub path: Option<String>,
    /// `OS Version:` (`macOS 14.5 (23F79)`).
    pub os_version: Option<String>,
    /// `Code Type:` (`ARM64`, `X86-64`).
    pub code_type: Option<String>,
    /// `Output report format:` (`2.4`).
    pub report_format: Option<String>,
    /// `Physical footprint:` in bytes.
    pub physical_footprint: Option<u64>,
    /// `Physical footprint (peak):` in bytes.
    pub physical_footprint_peak: Option<u64>,
    /// `VM page size:` in bytes.
    pub page_size: Option<u64>,
    /// Bytes per page used to convert `-pages` counts (`None` when the
    /// sizes were not page counts).
    pub page_size_used: Option<u64>,
    /// True when the page size was neither given nor stated and was assumed.
    pub page_size_assumed: bool,
    /// Region sizes were page counts (`vmmap -pages`).
    pub pages: bool,
    /// The command line the publisher showed (`vmmap -pages 2771`).
    pub command: Option<String>,
    /// The input is a crash report's `VM Region Summary`.
    pub crash_report: bool,
    /// Every `Key: value` line outside the tables, in order (capped at 64).
    pub facts: Vec<Fact>,
}

/// A summary-table row; a figure the table does not have is `None`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SummaryRow {
    /// The REGION TYPE (`MALLOC_SMALL`), or `TOTAL` for a total row.
    pub region_type: String,
    /// VIRTUAL: address space, bytes.
    #[serde(rename = "virtual")]
    pub virtual_size: Option<u64>,
    /// RESIDENT: bytes in memory.
    pub resident: Option<u64>,
    /// DIRTY: bytes written (in memory or swapped).
    pub dirty: Option<u64>,
    /// SWAPPED: bytes in the compressor or swapped out.
    pub swapped: Option<u64>,
    /// VOLATILE: purgeable bytes the system may discard.
    pub volatile: Option<u64>,
    /// NONVOL: purgeable bytes marked non-volatile (kept).
    pub nonvol: Option<u64>,
    /// EMPTY: purgeable bytes already discarded.
    pub empty: Option<u64>,
    /// REGION COUNT: how many regions of the type.
    pub count: Option<u64>,
    /// Text after the figures (`see MALLOC ZONE table below`).
    pub note: Option<String>,
    /// 1-based line number in the input.
    pub line: usize,
    /// A `TOTAL` row.
    #[serde(skip)]
    pub total: bool,
    /// For each size column (VIRTUAL to EMPTY, in that order), one unit of
    /// the last digit vmmap printed (`15.8G`: 0.1G; `2437K`: 1K; `824`:
    /// 1 byte): how far the printed figure can be from the true one. 0
    /// where the column is absent.
    #[serde(skip)]
    pub steps: [u64; 7],
}

impl SummaryRow {
    /// Adds `row`'s figures to this row's (saturating): the row that sums
    /// the types past [`MAX_TYPES`]. A sum of printed figures is off by at
    /// most the sum of their steps.
    pub(crate) fn add(&mut self, row: &SummaryRow) {
        for (slot, v) in [
            (&mut self.virtual_size, row.virtual_size),
            (&mut self.resident, row.resident),
            (&mut self.dirty, row.dirty),
            (&mut self.swapped, row.swapped),
            (&mut self.volatile, row.volatile),
            (&mut self.nonvol, row.nonvol),
            (&mut self.empty, row.empty),
            (&mut self.count, row.count),
        ] {
            super::sizes::add_opt(slot, v);
        }
        for (s, r) in self.steps.iter_mut().zip(row.steps) {
            *s = s.saturating_add(r);
        }
    }
}

/// A MALLOC ZONE table row, kept apart from the summary; figures as printed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MallocZoneRow {
    /// The zone name (`DefaultMallocZone_0x100a08000`), or `TOTAL`.
    pub zone: String,
    /// The figures, as printed, in column order.
    pub values: Vec<String>,
    /// 1-based line number in the input.
    pub line: usize,
    /// A `TOTAL` row.
    #[serde(skip)]
    pub total: bool,
}

/// A region line as read, borrowing its text from the line. Sizes are
/// bytes; a size the line does not give is `None`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VRegion<'a> {
    /// The REGION TYPE (`MALLOC_SMALL`, `__TEXT`).
    pub region_type: &'a str,
    /// First address; `None` for placeholder ranges (`kernel-kernel`) or an
    /// unreadable range.
    pub start: Option<u64>,
    /// One past the last address; `None` as for `start`.
    pub end: Option<u64>,
    /// VSIZE, bytes.
    pub vsize: Option<u64>,
    /// RSDNT, bytes (the two- and four-figure layouts).
    pub resident: Option<u64>,
    /// DIRTY, bytes (the four-figure layout only).
    pub dirty: Option<u64>,
    /// SWAP, bytes (the four-figure layout only).
    pub swap: Option<u64>,
    /// Current protection (`rw-`).
    pub prot: &'a str,
    /// Maximum protection (`rwx`), when readable.
    pub max_prot: Option<&'a str>,
    /// Share mode without its `SM=` (`COW`, `PRV`, `SHM`).
    pub share_mode: Option<&'a str>,
    /// The `PURGE=` state; `Unmarked` when the line has none.
    pub purge: Purge,
    /// REGION DETAIL (a path, a zone, a thread); `None` when empty.
    pub detail: Option<&'a str>,
}

impl<'a> VRegion<'a> {
    /// A region kept as the model's [`Region`] (by `to_region`),
    /// borrowed again; a region without a type has `""`.
    pub fn of(r: &'a Region) -> VRegion<'a> {
        VRegion {
            region_type: r.region_type.as_deref().unwrap_or_default(),
            start: r.start,
            end: r.end,
            vsize: r.sizes.size,
            resident: r.sizes.rss,
            dirty: r.sizes.dirty,
            swap: r.sizes.swap,
            prot: &r.perms,
            max_prot: r.max_perms.as_deref(),
            share_mode: r.share_mode.as_deref(),
            purge: r.purge,
            detail: r.path.as_deref(),
        }
    }

    /// The owned model [`Region`].
    pub(crate) fn to_region(&self) -> Region {
        let mut r = Region::new(Backing::Unknown);
        r.region_type = Some(self.region_type.to_string());
        r.start = self.start;
        r.end = self.end;
        r.perms = self.prot.to_string();
        r.max_perms = self.max_prot.map(str::to_string);
        r.share_mode = self.share_mode.map(str::to_string);
        r.purge = self.purge;
        r.path = self.detail.map(str::to_string);
        r.sizes.size = self.vsize;
        r.sizes.rss = self.resident;
        r.sizes.dirty = self.dirty;
        r.sizes.swap = self.swap;
        r
    }
}

/// What one line was read as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record<'a> {
    /// A region line.
    Region(VRegion<'a>),
    /// A row of the summary table (a `TOTAL` row too).
    Summary(SummaryRow),
    /// A row of the MALLOC ZONE table.
    MallocZone(MallocZoneRow),
}

/// A line that could not be read, or was read with damage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Problem {
    /// 1-based line number in the input.
    pub line: usize,
    /// What was wrong.
    pub reason: String,
    /// The line (cut to 200 bytes).
    pub text: String,
}

/// Counts of what was not read, with samples.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Diagnostics {
    /// Lines read in all.
    pub lines: u64,
    /// Lines that look like region or summary rows but could not be read.
    pub unreadable: u64,
    /// The first 50 of them.
    pub unreadable_samples: Vec<Problem>,
    /// Region lines read whose non-size fields were damaged (sizes intact).
    pub damaged: u64,
    /// The first 50 of them.
    pub damaged_samples: Vec<Problem>,
    /// Elision lines (`...`) the publisher left: the input is incomplete.
    pub elisions: u64,
    /// Other lines that are neither header, table nor region (prose,
    /// annotations, legend): not figures, so not counted as losses.
    pub other_lines: u64,
    /// Notes about the input as a whole (assumed page size, inferred columns).
    pub notes: Vec<DocumentNote>,
}

/// A remark on a vmmap document as a whole, as data: whoever prints it
/// words it (and names its own way to change what was assumed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "note", rename_all = "snake_case")]
pub enum DocumentNote {
    /// Sizes are page counts and the input states no VM page size: this
    /// one was assumed.
    PageSizeAssumed {
        /// The page size assumed, in bytes.
        bytes: u64,
    },
    /// The summary table's first header row was missing (or not
    /// understood): its columns were inferred from the second row.
    ColumnsInferred {
        /// The line of the header row read.
        line: usize,
        /// Whether a first row was there at all (then it was not understood).
        first_row_seen: bool,
    },
    /// The summary table's header was not understood: its rows are
    /// counted as unreadable.
    SummaryHeaderUnknown {
        /// The line of the header.
        line: usize,
    },
    /// The region lines name more than [`MAX_TYPES`] types: the regions of
    /// the types after the first `kept` are summed in one row,
    /// [`OTHER_TYPES`].
    TypesFolded {
        /// The types kept apart.
        kept: usize,
        /// The regions summed in the one row.
        regions: u64,
    },
    /// The summary table has more than [`MAX_TYPES`] rows: those after the
    /// first `kept` are summed in one row, [`OTHER_TYPES`].
    SummaryRowsFolded {
        /// The rows kept apart.
        kept: usize,
        /// The rows summed in the one row.
        rows: u64,
    },
    /// The MALLOC ZONE table has more than [`MAX_TYPES`] rows: those after
    /// the first `kept` are left out.
    MallocZonesCut {
        /// The rows kept.
        kept: usize,
        /// The rows left out.
        rows: u64,
    },
    /// A second report begins (its `Process:` line) after a first: the
    /// input holds several reports, read as one (their regions and tables
    /// added together, the first one's header kept).
    SeveralReports {
        /// The line where the second report's header begins.
        line: usize,
        /// The second report's process, as its `Process:` line names it.
        process: String,
    },
}

impl Diagnostics {
    pub(crate) fn unreadable(&mut self, line: usize, text: &str, reason: impl Into<String>) {
        self.unreadable += 1;
        if self.unreadable_samples.len() < MAX_SAMPLES {
            self.unreadable_samples.push(Problem { line, reason: reason.into(), text: clip(text) });
        }
    }

    pub(crate) fn damaged(&mut self, line: usize, text: &str, reason: impl Into<String>) {
        self.damaged += 1;
        if self.damaged_samples.len() < MAX_SAMPLES {
            self.damaged_samples.push(Problem { line, reason: reason.into(), text: clip(text) });
        }
    }

    pub(crate) fn note(&mut self, note: DocumentNote) {
        if !self.notes.contains(&note) && self.notes.len() < MAX_SAMPLES {
            self.notes.push(note);
        }
    }
}

fn clip(text: &str) -> String {
    const MAX: usize = 200;
    if text.len() <= MAX {
        return text.to_string();
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}

/// Everything but the region lines, which go to the callback.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Document {
    /// The header facts.
    pub header: Header,
    /// Column names of the summary table as read (`virtual`, `resident`, ...).
    pub summary_columns: Vec<String>,
    /// The summary table's rows, `TOTAL` rows apart (in `summary_totals`).
    pub summary: Vec<SummaryRow>,
    /// `TOTAL` and `TOTAL, minus reserved VM space`.
    pub summary_totals: Vec<SummaryRow>,
    /// Column names of the MALLOC ZONE table as read.
    pub malloc_zone_columns: Vec<String>,
    /// The MALLOC ZONE table's rows, `TOTAL` included.
    pub malloc_zones: Vec<MallocZoneRow>,
    /// Region lines read.
    pub regions: u64,
    /// What could not be read, and notes about the input.
    pub diagnostics: Diagnostics,
}

/// Where the vmmap reader hands what it reads, as a
/// [`RegionSink`](crate::model::RegionSink) is for smaps: each region line
/// as it is read and, for a sink that follows the raw text (the seed's
/// view), every line. An answer of [`Flow::Stop`] ends the read there.
/// A sink that wants only regions implements [`region`](Self::region); one
/// that follows every line implements [`line`](Self::line).
pub trait VRegionSink {
    /// One region read from line `line`.
    fn region(&mut self, _line: usize, _r: &VRegion<'_>) -> Flow {
        Flow::Continue
    }

    /// Line `line` (without its line ending), with the record read from
    /// it if any. By default a region goes to [`region`](Self::region) and
    /// any other line is passed over.
    fn line(&mut self, line: usize, _raw: &str, record: Option<&Record<'_>>) -> Flow {
        match record {
            Some(Record::Region(r)) => self.region(line, r),
            _ => Flow::Continue,
        }
    }
}

/// Takes nothing: a read for its report alone.
impl VRegionSink for () {}

/// Keeps every region, as the model's [`Region`].
impl VRegionSink for Vec<Region> {
    fn region(&mut self, _line: usize, r: &VRegion<'_>) -> Flow {
        self.push(r.to_region());
        Flow::Continue
    }
}

/// Keeps every region with the number of the line it was read from.
impl VRegionSink for Vec<(usize, Region)> {
    fn region(&mut self, line: usize, r: &VRegion<'_>) -> Flow {
        self.push((line, r.to_region()));
        Flow::Continue
    }
}

/// A sink borrowed is a sink.
impl<S: VRegionSink + ?Sized> VRegionSink for &mut S {
    fn region(&mut self, line: usize, r: &VRegion<'_>) -> Flow {
        (**self).region(line, r)
    }

    fn line(&mut self, line: usize, raw: &str, record: Option<&Record<'_>>) -> Flow {
        (**self).line(line, raw, record)
    }
}
