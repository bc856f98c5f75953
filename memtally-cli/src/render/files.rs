//! `memtally files`: one row per file (or named kind of memory) with its
//! figures summed over the processes that map it; with `--pids`, under
//! each, the processes as librank lists them.

use std::io::Write;

use serde::Serialize;

use memtally_core::analyze::files::Files;
use memtally_core::analyze::files::{FileRow, Mapper};
use memtally_core::model::{Backing, Figure, Named};

use crate::render::blocks::{write_text, Block};
use crate::render::notes::{word, words};
use crate::render::table::{csv_text, Align, Cut, Table};
use crate::render::units::{human_opt, plural};
use crate::render::{json, Screen};
use crate::render::{width, Printer};

/// The view and how much of it the table shows.
pub struct FilesTable<'a> {
    pub view: &'a Files,
    /// Each file's processes under it.
    pub pids: bool,
    /// On a terminal this many lines high: as many rows as fit.
    pub lines: Option<usize>,
}

/// The figures each file row carries in JSON and CSV, in this order
/// (`rss` only where one process maps the file: it does not add up).
const FIGURES: &[Figure] = &[
    Figure::Pss,
    Figure::Uss,
    Figure::SwapPss,
    Figure::PssDirty,
    Figure::PrivateClean,
    Figure::PrivateDirty,
    Figure::Rss,
];

impl Printer for FilesTable<'_> {
    fn table(&self, out: &mut dyn Write, screen: Screen) -> std::io::Result<()> {
        let width = screen.width;
        write_text(blocks(self.view, self.pids, self.lines, width), width, out)
    }

    fn json(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let r = &self.view.report;
        let doc = FilesJson {
            files: r.rows.iter().map(|row| FileJson::of(row, self.view)).collect(),
            files_omitted: r.omitted,
            files_total: r.files,
            processes: r.processes,
            totals: json::Figures { sizes: &r.totals, figures: FIGURES },
            partial: self.view.partial,
            notes: words(&self.view.notes),
        };
        json::line(out, &doc)
    }

    fn csv(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let mut w = csv::Writer::from_writer(out);
        let mut header = vec!["path", "backing", "processes", "regions"];
        header.extend(FIGURES.iter().map(|f| f.name()));
        header.push("pids");
        w.write_record(&header)?;
        for row in &self.view.report.rows {
            let mut rec = vec![
                csv_text(row.key.clone()),
                backing(row.backing).to_string(),
                row.mappers.len().to_string(),
                row.regions.to_string(),
            ];
            rec.extend(
                FIGURES
                    .iter()
                    .map(|&f| row.sizes.figure(f).map_or(String::new(), |v| v.to_string())),
            );
            let pids: Vec<String> = row.mappers.iter().map(|m| m.pid.to_string()).collect();
            rec.push(pids.join(" "));
            w.write_record(&rec)?;
        }
        w.flush()
    }
}

/// The backing's JSON name (`file`, `anonymous`, `shared_memory`, ...).
fn backing(b: Backing) -> String {
    serde_json::to_value(b).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default()
}

/// The fewest rows a screen shows, however many notes there are.
const SCREEN_MIN_ROWS: usize = 5;

/// The heading, the table, what was left out, the notes; on a screen of
/// `lines` lines (one left for the prompt), as many rows as fit.
fn blocks(view: &Files, pids: bool, lines: Option<usize>, width: Option<usize>) -> Vec<Block> {
    let r = &view.report;
    let (mut shown, mut omitted) = (r.rows.len(), r.omitted);
    if let Some(lines) = lines {
        let tall = |text: &str| width::wrap("note: ", text, width).lines().count();
        let notes: usize = view.notes.iter().map(|n| tall(&word(n))).sum();
        // Heading (two lines at most), header, rule, total, the rows-left-out
        // line, the prompt.
        let room = lines.saturating_sub(2 + 4 + 1 + notes).max(SCREEN_MIN_ROWS);
        if shown > room {
            omitted += shown - room;
            shown = room;
        }
    }
    let files = match view.files_only {
        true => plural(r.files, "file", "files"),
        false => plural(r.files, "file or kind", "files and kinds"),
    };
    let mut blocks = vec![Block::Heading(format!(
        "{files} in {}; each one's figures summed over its processes",
        plural(r.processes, "process", "processes"),
    ))];
    blocks.push(Block::Table(table(view, pids, shown)));
    if r.processes == 0 {
        blocks.push(Block::Line("(no process was read: no mapping to list)".into()));
    }
    if omitted > 0 {
        blocks.push(Block::Line(format!(
            "({omitted} more not shown; totals include them. --top N, --all or --min to change.)"
        )));
    }
    blocks.extend(view.notes.iter().map(|n| Block::Note(word(n))));
    blocks
}

/// The first `shown` rows; with `pids`, each file's processes under it and an RSS
/// column for theirs.
fn table(view: &Files, pids: bool, shown: usize) -> Table {
    let mut headers =
        vec![("PSS", Align::Right), ("USS", Align::Right), ("SWAP PSS", Align::Right)];
    if pids {
        headers.push(("RSS", Align::Right));
    }
    headers.extend([("PROCS", Align::Right), ("FILE", Align::Left)]);
    let file = headers.len() - 1;
    let mut t = Table::new(&headers);
    // Paths differ at their end: cut in the middle, keep the file name.
    t.cut_as(file, Cut::Path);
    let figures = |pss: Option<u64>, uss: Option<u64>, swap: Option<u64>| {
        vec![human_opt(pss), human_opt(uss), human_opt(swap)]
    };
    for row in view.report.rows.iter().take(shown) {
        let s = &row.sizes;
        let mut cells = figures(s.pss, s.uss(), s.swap_pss);
        if pids {
            cells.push(human_opt(s.rss));
        }
        cells.extend([row.mappers.len().to_string(), row.key.clone()]);
        t.row(cells);
        if pids {
            let commands: Vec<String> = row.mappers.iter().map(|m| command(view, m)).collect();
            let apart = width::distinguishing(&commands);
            for ((m, c), d) in row.mappers.iter().zip(&commands).zip(&apart) {
                let mut cells = figures(m.pss, m.uss, m.swap_pss);
                cells.extend([human_opt(m.rss), String::new(), format!("  {} {c}", m.pid)]);
                let label = format!("  {} {}", m.pid, width::command_label(c, d.as_deref()));
                t.row_with_compact(cells, file, label);
                t.cut_last_row_as(file, Cut::End);
            }
        }
    }
    let r = &view.report;
    let mut footer = figures(r.totals.pss, r.totals.uss(), r.totals.swap_pss);
    if pids {
        footer.push(String::new());
    }
    footer.extend([r.processes.to_string(), "total".to_string()]);
    t.footer(footer);
    t
}

/// A process's command line, from the read.
fn command(view: &Files, m: &Mapper) -> String {
    view.commands.get(&m.pid).cloned().unwrap_or_default()
}

/// The documented JSON document (docs/json.md, "files").
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(crate) struct FilesJson<'a> {
    files: Vec<FileJson<'a>>,
    files_omitted: usize,
    files_total: usize,
    processes: usize,
    totals: json::Figures<'a>,
    partial: bool,
    notes: Vec<String>,
}

/// One file's row.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct FileJson<'a> {
    path: &'a str,
    backing: String,
    processes: usize,
    regions: usize,
    #[serde(flatten)]
    figures: json::Figures<'a>,
    mappers: Vec<MapperJson<'a>>,
}

impl<'a> FileJson<'a> {
    fn of(row: &'a FileRow, view: &'a Files) -> FileJson<'a> {
        FileJson {
            path: &row.key,
            backing: backing(row.backing),
            processes: row.mappers.len(),
            regions: row.regions,
            figures: json::Figures { sizes: &row.sizes, figures: FIGURES },
            mappers: row
                .mappers
                .iter()
                .map(|m| MapperJson {
                    pid: m.pid,
                    command: view.commands.get(&m.pid).map_or("", String::as_str),
                    regions: m.regions,
                    pss: m.pss,
                    rss: m.rss,
                    uss: m.uss,
                    swap_pss: m.swap_pss,
                })
                .collect(),
        }
    }
}

/// One process's part of a file.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct MapperJson<'a> {
    pid: u32,
    command: &'a str,
    regions: usize,
    pss: Option<u64>,
    rss: Option<u64>,
    uss: Option<u64>,
    swap_pss: Option<u64>,
}
