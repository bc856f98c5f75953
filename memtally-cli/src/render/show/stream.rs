//! One process's regions printed as they are read (`--regions` tables and
//! CSV, and the JSON document, whose regions come first), so memory stays
//! bounded by one region however large the smaps.

use std::io::Write;

use memtally_core::analyze::categorize;
use memtally_core::analyze::show::ShowReport;
use memtally_core::model::{Flow, Named, Process, Region, RegionSink};

use memtally_core::model::region_json::{RegionRef, RegionWriter, ShowRegion};

use super::json::{summary, ProcessHead};
use super::{csv, csv_cell, figures, heading, table, COLUMNS, CSV_FIGURES};
use crate::render::blocks::{write_text, Block};
use crate::render::stream_doc::StreamDoc;
use crate::render::{Format, Screen};

/// Prints regions as they are read (`--regions` tables and CSV, and the
/// JSON document, whose regions come first), so memory stays bounded by
/// one region however large the smaps; [`RegionStream::finish`] prints
/// what needs every region (totals, rows, notes).
pub struct RegionStream {
    kind: StreamKind,
    started: bool,
    doc: StreamDoc,
    writer: RegionWriter<ShowRegion>,
    /// The output's width (tables are cut to it).
    width: Option<usize>,
    /// The figure columns (indices into `COLUMNS`) the `--regions` table
    /// shows: all of them, or at a narrow width those that leave
    /// CATEGORY and MAPPING room ([`shown_columns`]).
    shown: Vec<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StreamKind {
    /// The single-process JSON document.
    Json,
    /// `--regions --format csv`.
    Csv,
    /// `--regions` table, fixed widths (like `pmap -X`): its heading,
    /// column header, total and notes are blocks, but its rows are lines
    /// printed as each region is read. A [`Table`](crate::render::table::Table)
    /// sizes its columns to every row, so it would hold the whole smaps;
    /// fixed widths are what let a 100,000-mapping process stream.
    Table,
    /// Grouped table or CSV: nothing per region.
    Grouped(Format),
}

/// Column widths of the streamed regions table: wide enough for a
/// 48-bit address, and for `PRIV DIRTY` or `1023.9M` after a space (so no
/// header runs into the one before); a longer figure just pushes the row.
const ADDRESS_WIDTH: usize = 12;
const PERMS_WIDTH: usize = 5;
const FIGURE_WIDTH: usize = 11;
const CATEGORY_WIDTH: usize = 14;
/// Columns left to the mapping at least, when figures are dropped to fit.
const MAPPING_MIN: usize = 20;
/// The figure columns kept first when not all fit (indices into
/// `COLUMNS`): PSS, PRIV DIRTY, RSS, SWAP, then the rest.
const KEPT_FIRST: [usize; 7] = [3, 0, 2, 5, 1, 4, 6];

/// The figure columns of the `--regions` table at `width`: every one
/// where CATEGORY and MAPPING still fit beside them; else the first of
/// [`KEPT_FIRST`] that leave the two their room (at least one), in
/// their order. A row that does not fit then cuts its mapping's middle.
fn shown_columns(width: Option<usize>) -> Vec<usize> {
    let all = COLUMNS.len();
    let fixed = ADDRESS_WIDTH + 2 + PERMS_WIDTH + 2 + CATEGORY_WIDTH + 2 + MAPPING_MIN;
    let k = match width {
        Some(w) => (w.saturating_sub(fixed) / FIGURE_WIDTH).clamp(1, all),
        None => all,
    };
    let mut shown = KEPT_FIRST[..k].to_vec();
    shown.sort_unstable();
    shown
}

impl RegionStream {
    pub fn new(format: Format, regions: bool, screen: Screen) -> RegionStream {
        use Format;
        let kind = match (format, regions) {
            (Format::Json, _) => StreamKind::Json,
            (Format::Csv, true) => StreamKind::Csv,
            (Format::Table, true) => StreamKind::Table,
            (f, false) => StreamKind::Grouped(f),
        };
        let width = if format == Format::Table { screen.width } else { None };
        RegionStream {
            kind,
            started: false,
            doc: StreamDoc::default(),
            writer: RegionWriter::default(),
            width,
            shown: shown_columns(width),
        }
    }

    /// The stream as a sink of one process's regions, printing to `out`: a
    /// write that fails (the reader of the output went away) stops the
    /// read, and [`finish`](Self::finish) returns its error.
    pub fn to<'a>(&'a mut self, out: &'a mut dyn Write) -> Printing<'a> {
        Printing { stream: self, out, pid: 0 }
    }

    /// Prints one region of process `p`.
    pub fn region(&mut self, p: &Process, r: &Region, out: &mut dyn Write) -> std::io::Result<()> {
        if !self.started {
            self.start(std::slice::from_ref(p))?;
        }
        self.print(p.pid, r, out)
    }

    /// Prints one region of process `pid`, after [`start`](Self::start).
    fn print(&mut self, pid: u32, r: &Region, out: &mut dyn Write) -> std::io::Result<()> {
        match self.kind {
            StreamKind::Json => {
                let writer = &mut self.writer;
                let r = RegionRef::linux(r, categorize(r).key());
                self.doc.item(|buf| {
                    writer.write(&r, buf);
                    Ok(())
                })?;
            }
            StreamKind::Csv => {
                let mut rec = vec![
                    pid.to_string(),
                    csv_cell(r.start),
                    csv_cell(r.end),
                    r.perms.clone(),
                    categorize(r).key().to_string(),
                    crate::render::table::escape_controls(r.path.clone().unwrap_or_default()),
                ];
                rec.extend(CSV_FIGURES.iter().map(|&f| csv_cell(r.sizes.figure(f))));
                let mut w =
                    ::csv::WriterBuilder::new().has_headers(false).from_writer(self.doc.buf());
                w.write_record(&rec)?;
                w.flush()?;
            }
            StreamKind::Table => {
                let start = r.start.map_or_else(|| "-".into(), |s| format!("{s:012x}"));
                let mut line = format!("{start:<ADDRESS_WIDTH$}  {:<PERMS_WIDTH$}", r.perms);
                for cell in self.pick(figures(&r.sizes)) {
                    line.push_str(&format!("{cell:>FIGURE_WIDTH$}"));
                }
                let category = categorize(r).key();
                line.push_str(&format!("  {category:<CATEGORY_WIDTH$}  "));
                let mapping_at = crate::render::width::columns(&line);
                let path =
                    crate::render::table::escape_controls(r.path.clone().unwrap_or_default());
                let room = self.width.map(|w| w.saturating_sub(mapping_at));
                match room {
                    Some(room) if room >= MAPPING_MIN => {
                        line.push_str(&crate::render::width::cut_path(&path, room))
                    }
                    _ => line.push_str(&path),
                }
                let line = crate::render::table::escape_controls(line.trim_end().to_string());
                let n = self.shown.len();
                let buf = self.doc.buf();
                buf.extend_from_slice(fit_line(&line, self.width, n).as_bytes());
                buf.push(b'\n');
            }
            StreamKind::Grouped(_) => {}
        }
        self.doc.flush_if_full(out)
    }

    /// What comes before the first region; called by the first
    /// [`region`](Self::region) with its process when not called before.
    pub fn start(&mut self, processes: &[Process]) -> std::io::Result<()> {
        self.started = true;
        match self.kind {
            StreamKind::Json => {
                let head = match processes {
                    [p] => Some(ProcessHead::of(p)),
                    _ => None,
                };
                self.doc.open(&head, "regions")?;
            }
            StreamKind::Csv => {
                let mut header = vec!["pid", "start", "end", "perms", "category", "path"];
                header.extend(CSV_FIGURES.iter().map(|f| f.name()));
                let mut w = ::csv::Writer::from_writer(self.doc.buf());
                w.write_record(&header)?;
                w.flush()?;
            }
            StreamKind::Table => {
                let mut line = format!("{:<ADDRESS_WIDTH$}  {:<PERMS_WIDTH$}", "ADDRESS", "PERMS");
                for &i in &self.shown {
                    line.push_str(&format!("{:>FIGURE_WIDTH$}", COLUMNS[i].0));
                }
                line.push_str(&format!("  {:<CATEGORY_WIDTH$}  MAPPING", "CATEGORY"));
                let blocks = vec![
                    Block::Heading(heading(processes, self.width)),
                    Block::Line(fit_line(&line, self.width, self.shown.len()).into_owned()),
                ];
                write_text(blocks, self.width, self.doc.buf())?;
            }
            StreamKind::Grouped(_) => {}
        }
        Ok(())
    }

    /// Prints what needs every region, and flushes; or returns the error
    /// of the write that stopped the read.
    pub fn finish(mut self, report: &ShowReport, out: &mut dyn Write) -> std::io::Result<()> {
        if let Some(e) = self.doc.take_failed() {
            return Err(e);
        }
        if !self.started {
            self.start(&report.processes)?;
        }
        match self.kind {
            StreamKind::Json => self.doc.close(&summary(report))?,
            StreamKind::Csv => {}
            StreamKind::Table => {
                let mut blocks = Vec::new();
                let n = self.shown.len();
                if let Some(cells) = super::rounding_in(super::COLUMNS, report) {
                    let mut line = format!("{:<ADDRESS_WIDTH$}  {:<PERMS_WIDTH$}", "rounding", "");
                    for cell in self.pick(cells) {
                        line.push_str(&format!("{cell:>FIGURE_WIDTH$}"));
                    }
                    blocks.push(Block::Line(fit_line(&line, self.width, n).into_owned()));
                }
                let mut line = format!("{:<ADDRESS_WIDTH$}  {:<PERMS_WIDTH$}", "total", "");
                for cell in self.pick(figures(&report.totals)) {
                    line.push_str(&format!("{cell:>FIGURE_WIDTH$}"));
                }
                line.push_str(&format!("  {} regions", report.region_count));
                blocks.push(Block::Line(fit_line(&line, self.width, n).into_owned()));
                blocks.push(Block::Line(super::totals_line(report, self.width)));
                if n < COLUMNS.len() {
                    let left: Vec<&str> = (0..COLUMNS.len())
                        .filter(|i| !self.shown.contains(i))
                        .map(|i| COLUMNS[i].0)
                        .collect();
                    blocks.push(Block::Note(format!(
                        "{} left out to fit the width (COLUMNS=200, or --format csv, has every figure)",
                        left.join(", ")
                    )));
                }
                blocks.extend(
                    report.notes.iter().map(|n| Block::Note(crate::render::notes::word(n))),
                );
                write_text(blocks, self.width, self.doc.buf())?;
            }
            StreamKind::Grouped(Format::Csv) => {
                self.doc.write_out(out)?;
                return csv(report, false, out);
            }
            StreamKind::Grouped(_) => {
                self.doc.write_out(out)?;
                return table(report, self.width, out);
            }
        }
        self.doc.write_out(out)
    }
}

impl RegionStream {
    /// The cells of the figure columns shown.
    fn pick(&self, cells: Vec<String>) -> Vec<String> {
        self.shown.iter().filter_map(|&i| cells.get(i).cloned()).collect()
    }
}

/// A [`RegionStream`] printing one process's regions as they are read.
pub struct Printing<'a> {
    stream: &'a mut RegionStream,
    out: &'a mut dyn Write,
    pid: u32,
}

impl RegionSink for Printing<'_> {
    fn begin(&mut self, process: &Process) -> Flow {
        self.pid = process.pid;
        if self.stream.started {
            return Flow::Continue;
        }
        let started = self.stream.start(std::slice::from_ref(process));
        self.stream.doc.keep(started)
    }

    fn region(&mut self, _line: usize, region: &Region) -> Flow {
        let written = self.stream.print(self.pid, region, self.out);
        self.stream.doc.keep(written)
    }
}

/// Cuts a line to `width` (the output's), with `…` where it is cut: in
/// the path when every figure fits, else after the last figure that fits
/// whole (a figure is never cut).
fn fit_line(line: &str, width: Option<usize>, shown: usize) -> std::borrow::Cow<'_, str> {
    let lead = ADDRESS_WIDTH + 2 + PERMS_WIDTH;
    let figures_end = lead + shown * FIGURE_WIDTH;
    match width {
        Some(w) if w < figures_end && crate::render::width::columns(line) > w => {
            let k = w.saturating_sub(lead + 3) / FIGURE_WIDTH;
            let kept: String = line.chars().take(lead + k * FIGURE_WIDTH).collect();
            format!("{}  …", kept.trim_end()).into()
        }
        _ => crate::render::width::fit(line, width),
    }
}
