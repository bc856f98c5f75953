//! `vmmap`: a macOS vmmap report (a saved file, standard input, or
//! `vmmap -noCoalesce PID` run with a time limit) read once, streaming:
//! the tallies as it goes, the selected regions handed out as they are
//! read, kept only when asked; or the seed tool's view of it.

use std::io::Read;
use std::path::PathBuf;
use std::time::Duration;

use crate::analyze::group::{sort_groups, GroupSort};
use crate::analyze::vmmap::{
    footprint_check, summary_footprint, total_check, Footprint, FootprintFrom, SeedView, Tally,
    TypeFilter, VmmapBy, VmmapReport,
};
use crate::error::{Error, Result};
use crate::model::vmmap::{Document, DocumentNote, VRegion, VRegionSink, MAX_TYPES};
use crate::model::{Figure, Flow, Grouper, Region};
use crate::source::parse::vmmap::{self as parse, ParseOptions};
use crate::source::vmmap::runner;

pub use crate::source::vmmap::runner::VmmapForm;

/// Where the report comes from.
#[derive(Debug, Clone)]
pub enum VmmapInput {
    /// A saved report.
    File(PathBuf),
    /// Standard input.
    Stdin,
    /// Run `vmmap -noCoalesce PID` or `vmmap -summary PID` (found on
    /// PATH), waiting at most this long.
    Pid(u32, Duration, VmmapForm),
}

/// What to read and keep. Built from `default()` and the `with_*` setters.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct VmmapOptions {
    /// Region types whose name contains any of these; none selects all.
    pub types: Vec<String>,
    /// Group the selected regions by this key.
    pub by: Option<VmmapBy>,
    /// Keep the selected regions (a table that lists them needs them all).
    pub keep_regions: bool,
    /// The selected regions are wanted as they are read (streamed output).
    pub stream_regions: bool,
    /// Fail, listing line numbers, when any region or table row cannot be read.
    pub strict: bool,
    /// Parser settings (the page size for `-pages` output).
    pub parse: ParseOptions,
}

setters!(VmmapOptions {
    with_types: types: Vec<String>,
    with_by: by: Option<VmmapBy>,
    with_keep_regions: keep_regions: bool,
    with_stream_regions: stream_regions: bool,
    with_strict: strict: bool,
    with_parse: parse: ParseOptions,
});

/// Opens the input: its name for messages and a reader.
fn open(input: &VmmapInput) -> Result<(String, Box<dyn Read>)> {
    Ok(match input {
        VmmapInput::Pid(pid, timeout, form) => {
            let bytes = runner::run_vmmap(*pid, *timeout, *form)?;
            (format!("vmmap {} {pid}", form.flag()), Box::new(std::io::Cursor::new(bytes)))
        }
        VmmapInput::Stdin => ("standard input".to_string(), Box::new(std::io::stdin())),
        VmmapInput::File(p) => {
            // Streamed in bounded memory, so only its kind is checked:
            // a device or socket is refused, a FIFO never blocks the open.
            let f = crate::source::bounded::open_stream(p).map_err(|e| match e.kind() {
                std::io::ErrorKind::InvalidData => {
                    Error::Parse { path: p.clone(), message: e.to_string() }
                }
                _ => Error::io(p, e),
            })?;
            (p.display().to_string(), Box::new(f))
        }
    })
}

/// Reads the report; each selected region goes to `sink` as it is read
/// (borrowed from its line) when `stream_regions` is set, and a sink that
/// answers [`Flow::Stop`] ends the read there (the report then covers the
/// lines read).
pub fn read(
    input: &VmmapInput,
    opts: &VmmapOptions,
    sink: &mut impl VRegionSink,
) -> Result<VmmapReport> {
    let (source, reader) = open(input)?;
    let mut read = Selection {
        tally: Tally::new(TypeFilter::new(opts.types.clone())),
        kept: Vec::new(),
        grouping: opts.by.map(|by| (by, Grouper::new())),
        opts,
        sink,
    };
    let doc = parse::parse(reader, opts.parse.clone(), &mut read)
        .map_err(|e| Error::io(source.clone(), e))?;
    let Selection { tally, kept, grouping, .. } = read;
    report(source, doc, tally, kept, grouping, opts)
}

/// The report of what one read gathered.
fn report(
    source: String,
    mut doc: Document,
    mut tally: Tally,
    kept: Vec<(usize, Region)>,
    grouping: Option<(VmmapBy, Grouper)>,
    opts: &VmmapOptions,
) -> Result<VmmapReport> {
    tally.finish();
    if tally.folded > 0 {
        let note = DocumentNote::TypesFolded { kept: MAX_TYPES, regions: tally.folded };
        doc.diagnostics.note(note);
    }
    check(&source, &doc, opts.strict)?;
    let groups = grouping.map(|(by, g)| {
        let mut g = g.into_groups();
        sort_groups(&mut g, &[Figure::Dirty, Figure::Swap, Figure::Size].map(GroupSort::Figure));
        (crate::model::Named::name(by), g)
    });
    let mismatches = tally.count_check(&doc);
    let (footprint, footprint_from) = if tally.regions_read > 0 {
        (tally.footprint_total.clone(), FootprintFrom::Regions)
    } else if doc.summary.is_empty() {
        (Footprint::default(), FootprintFrom::None)
    } else {
        (summary_footprint(&doc, &tally.filter), FootprintFrom::Summary)
    };
    let total_check = total_check(&doc);
    let regions_fp = tally.whole_footprint.filter(|_| tally.regions_read > 0);
    let footprint_check = footprint_check(&doc, regions_fp);
    Ok(VmmapReport {
        source,
        doc,
        tally,
        regions: kept,
        groups,
        mismatches,
        footprint,
        footprint_from,
        total_check,
        footprint_check,
    })
}

/// What one read fills: the tally of every region; of the selected ones,
/// the groups, the kept list and the caller's sink, as `opts` asks.
struct Selection<'a, S> {
    tally: Tally,
    kept: Vec<(usize, Region)>,
    grouping: Option<(VmmapBy, Grouper)>,
    opts: &'a VmmapOptions,
    sink: &'a mut S,
}

impl<S: VRegionSink> VRegionSink for Selection<'_, S> {
    fn region(&mut self, n: usize, r: &VRegion<'_>) -> Flow {
        self.tally.add(n, r);
        if !self.tally.filter.matches(r.region_type) {
            return Flow::Continue;
        }
        if self.opts.keep_regions || self.grouping.is_some() {
            let region = r.to_region();
            if let Some((by, groups)) = self.grouping.as_mut() {
                groups.add_region(&by.key(&region), &region);
            }
            if self.opts.keep_regions {
                self.kept.push((n, region));
            }
        }
        if self.opts.stream_regions {
            self.sink.region(n, r)
        } else {
            Flow::Continue
        }
    }
}

/// The seed tool's view of the report (`types` empty: the seed's defaults).
pub fn seed_view(input: &VmmapInput, types: &[String], opts: &VmmapOptions) -> Result<SeedView> {
    let (source, reader) = open(input)?;
    let mut view = SeedView::new(types.to_vec());
    let doc = parse::parse(reader, opts.parse.clone(), &mut view)
        .map_err(|e| Error::io(source.clone(), e))?;
    check(&source, &doc, opts.strict)?;
    Ok(view)
}

/// Refuses input that is not vmmap output, and unreadable lines under `strict`.
fn check(source: &str, doc: &Document, strict: bool) -> Result<()> {
    if doc.regions == 0 && doc.summary.is_empty() && doc.summary_totals.is_empty() {
        let d = &doc.diagnostics;
        let why = match d.unreadable_samples.first() {
            Some(p) => format!(" (line {}: {})", p.line, p.reason),
            None => String::new(),
        };
        return Err(Error::Parse {
            path: source.into(),
            message: format!(
                "no vmmap region lines or summary table found in {} line(s){why}: is this `vmmap` output?",
                d.lines
            ),
        });
    }
    let d = &doc.diagnostics;
    if strict && d.unreadable > 0 {
        let list: Vec<String> = d
            .unreadable_samples
            .iter()
            .take(10)
            .map(|p| format!("line {}: {}", p.line, p.reason))
            .collect();
        return Err(Error::UnreadableLines {
            path: source.into(),
            count: d.unreadable,
            samples: list,
        });
    }
    Ok(())
}
