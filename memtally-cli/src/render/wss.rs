//! Prints `wss`: per process and per category, resident, touched during
//! the interval, the 2004 mail's working set and cold; one sample as a
//! table, JSON or CSV, and a series as a line, a JSON line or CSV rows
//! per sample (docs/json.md, "wss").

use std::io::Write;

use serde::Serialize;

use memtally_core::analyze::wss::{WssCategory, WssProcess, WssReport};
use memtally_core::model::wss::{IdleTracking, WssMethod};
use memtally_core::model::{Named, Sizes};

use crate::render::blocks::{write_text, Block};
use crate::render::notes::words;
use crate::render::table::{csv_text, escape_controls, Align, Table};
use crate::render::units::{human_opt, plural};
use crate::render::{json, Printer, Screen};

/// One sample: the report, which sample it is and when it was read.
pub struct WssView<'a> {
    pub report: &'a WssReport,
    /// 0 for the first sample.
    pub index: usize,
    /// Seconds since the first reset.
    pub elapsed_s: f64,
}

/// The words for the method line.
pub fn method_line(method: WssMethod, idle_tracking: IdleTracking) -> String {
    let how = match method {
        WssMethod::ClearRefs => "reset the referenced bits through /proc/PID/clear_refs, read smaps Referenced after the interval",
        WssMethod::IdlePages => "marked the frames of the resident pages idle in /sys/kernel/mm/page_idle/bitmap, read it back after the interval",
    };
    let idle = match idle_tracking {
        IdleTracking::Absent => {
            "; idle page tracking is unavailable (this kernel has no /sys/kernel/mm/page_idle/bitmap)"
        }
        IdleTracking::PresentUnused => "; idle page tracking is present but was not used (--method referenced, or not root)",
        IdleTracking::Used => "",
    };
    format!("method: {} ({how}){idle}", method.name())
}

/// The stderr notice, once before anything is reset or marked.
pub fn notice(method: WssMethod, processes: &str) -> String {
    match method {
        WssMethod::ClearRefs => format!("memtally: wss resets the referenced bits of {processes} (/proc/PID/clear_refs): the kernel's page reclaim may choose differently for a while; no other process is touched"),
        WssMethod::IdlePages => format!("memtally: wss marks the pages of {processes} idle (idle page tracking): reclaim is not affected; no other process is touched"),
    }
}

/// What the columns mean, once under the table.
const LEGEND: &str = "TOUCHED: resident bytes referenced during the interval. WORKING SET: the 2004 mail's working set, dirty pages plus clean file-backed pages touched during the interval. COLD: resident bytes not touched (RSS - TOUCHED). A page shared with other processes (a file page such as the C library's, a KSM page) counts as touched when any of them touched it: the kernel keeps one referenced flag per page.";

/// Over several processes, the sums keep PSS and PSS DIRTY only.
const SUMMED: &str = "Over several processes the totals and the categories add up PSS and PSS DIRTY only: RSS, DIRTY, TOUCHED, WORKING SET and COLD count a page shared by N processes N times, so they stand per process (`-` in the total).";

/// A figure column: its header and its cell.
type Column = (&'static str, fn(&Sizes) -> Option<u64>);

/// The figure columns of one process's table.
const FIGURES: [Column; 5] = [
    ("RSS", |s| s.rss),
    ("DIRTY", Sizes::dirty),
    ("TOUCHED", |s| s.touched),
    ("WORKING SET", |s| s.working_set),
    ("COLD", |s| s.cold),
];

/// The figure columns of the process table of several: each process
/// whole, the proportional figures first (the only ones the total has).
const PROCESS_FIGURES: [Column; 7] = [
    ("PSS", |s| s.pss),
    ("PSS DIRTY", |s| s.pss_dirty),
    ("RSS", |s| s.rss),
    ("DIRTY", Sizes::dirty),
    ("TOUCHED", |s| s.touched),
    ("WORKING SET", |s| s.working_set),
    ("COLD", |s| s.cold),
];

/// The figure columns of the categories of several processes added up.
const SUMMED_FIGURES: [Column; 2] = [("PSS", |s| s.pss), ("PSS DIRTY", |s| s.pss_dirty)];

fn figure_cells(columns: &[Column], s: &Sizes) -> Vec<String> {
    columns.iter().map(|(_, cell)| human_opt(cell(s))).collect()
}

fn category_table(columns: &[Column], categories: &[WssCategory], totals: &Sizes) -> Table {
    let mut headers = vec![("CATEGORY", Align::Left)];
    headers.extend(columns.iter().map(|(h, _)| (*h, Align::Right)));
    headers.push(("REGIONS", Align::Right));
    let mut t = Table::new(&headers);
    let mut regions = 0;
    for c in categories {
        let mut cells = vec![c.category.label().to_string()];
        cells.extend(figure_cells(columns, &c.sizes));
        cells.push(c.regions.to_string());
        regions += c.regions;
        t.row(cells);
    }
    let mut foot = vec!["total".to_string()];
    foot.extend(figure_cells(columns, totals));
    foot.push(regions.to_string());
    t.footer(foot);
    t
}

fn process_table(processes: &[WssProcess], totals: &Sizes) -> Table {
    let mut headers = vec![("PID", Align::Right)];
    headers.extend(PROCESS_FIGURES.iter().map(|(h, _)| (*h, Align::Right)));
    headers.push(("COMMAND", Align::Left));
    let mut t = Table::new(&headers);
    let command = headers.len() - 1;
    t.narrow_first(command);
    for p in processes {
        let mut cells = vec![p.pid.to_string()];
        cells.extend(figure_cells(&PROCESS_FIGURES, &p.totals));
        cells.push(escape_controls(p.command.clone()));
        t.row(cells);
    }
    let mut foot = vec!["total".to_string()];
    foot.extend(figure_cells(&PROCESS_FIGURES, totals));
    foot.push(String::new());
    t.footer(foot);
    t
}

/// The table view of one sample.
pub fn blocks(report: &WssReport) -> Vec<Block> {
    let n = report.processes.len();
    let mut blocks = Vec::new();
    match &report.processes[..] {
        [] => blocks.push(Block::Heading(format!(
            "working set over {:.2}s: no process left to report",
            report.interval_s
        ))),
        [p] => {
            blocks.push(Block::Heading(format!(
                "pid {}  {}  working set over {:.2}s (measured {:.3}s)",
                p.pid,
                escape_controls(p.command.clone()),
                report.interval_s,
                p.measured_s
            )));
            blocks.push(Block::Table(category_table(&FIGURES, &p.categories, &p.totals)));
        }
        several => {
            blocks.push(Block::Heading(format!(
                "{} working set over {:.2}s",
                plural(n, "process", "processes"),
                report.interval_s
            )));
            blocks.push(Block::Table(process_table(several, &report.totals)));
            blocks.push(Block::Blank);
            blocks.push(Block::Heading("by category, every process added up:".into()));
            let table = category_table(&SUMMED_FIGURES, &report.categories, &report.totals);
            blocks.push(Block::Table(table));
        }
    }
    blocks.push(Block::Blank);
    blocks.push(Block::Note(LEGEND.into()));
    if n > 1 {
        blocks.push(Block::Note(SUMMED.into()));
    }
    blocks.push(Block::Note(method_line(report.method, report.idle_tracking)));
    for note in words(&report.notes) {
        blocks.push(Block::Note(note));
    }
    blocks
}

/// One line of a series' table: the totals of a sample (over several
/// processes, the figures that add up).
pub fn series_line(view: &WssView, out: &mut dyn Write) -> std::io::Result<()> {
    let r = view.report;
    let t = &r.totals;
    let processes = plural(r.processes.len(), "process", "processes");
    if r.processes.len() > 1 {
        let (pss, dirty) = (human_opt(t.pss), human_opt(t.pss_dirty));
        let per = "touched, working set and cold per process: --format json or csv";
        writeln!(
            out,
            "[{:7.1}s] pss {pss}  pss dirty {dirty}  {processes} ({per})",
            view.elapsed_s
        )?;
    } else {
        writeln!(
            out,
            "[{:7.1}s] touched {}  working set {}  cold {}  resident {}  {processes}",
            view.elapsed_s,
            human_opt(t.touched),
            human_opt(t.working_set),
            human_opt(t.cold),
            human_opt(t.rss),
        )?;
    }
    for note in words(&r.notes) {
        writeln!(out, "  note: {note}")?;
    }
    Ok(())
}

/// The JSON document of one sample (docs/json.md, "wss").
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(crate) struct WssJson<'a> {
    index: usize,
    elapsed_s: f64,
    interval_s: f64,
    method: WssMethod,
    idle_tracking: IdleTracking,
    partial: bool,
    notes: Vec<String>,
    processes: Vec<ProcessJson<'a>>,
    categories: Vec<CategoryJson<'a>>,
    total: &'a Sizes,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct ProcessJson<'a> {
    pid: u32,
    comm: &'a str,
    command: &'a str,
    measured_s: f64,
    #[serde(flatten)]
    sizes: &'a Sizes,
    categories: Vec<CategoryJson<'a>>,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct CategoryJson<'a> {
    category: &'static str,
    label: &'static str,
    regions: usize,
    #[serde(flatten)]
    sizes: &'a Sizes,
}

fn categories_json(cats: &[WssCategory]) -> Vec<CategoryJson<'_>> {
    cats.iter()
        .map(|c| CategoryJson {
            category: c.category.key(),
            label: c.category.label(),
            regions: c.regions,
            sizes: &c.sizes,
        })
        .collect()
}

/// One sample as one line of JSON (a series prints one per sample).
pub fn sample_json(view: &WssView, out: &mut dyn Write) -> std::io::Result<()> {
    let r = view.report;
    let doc = WssJson {
        index: view.index,
        elapsed_s: view.elapsed_s,
        interval_s: r.interval_s,
        method: r.method,
        idle_tracking: r.idle_tracking,
        partial: r.partial(),
        notes: words(&r.notes),
        processes: r
            .processes
            .iter()
            .map(|p| ProcessJson {
                pid: p.pid,
                comm: &p.comm,
                command: &p.command,
                measured_s: p.measured_s,
                sizes: &p.totals,
                categories: categories_json(&p.categories),
            })
            .collect(),
        categories: categories_json(&r.categories),
        total: &r.totals,
    };
    json::line(out, &doc)
}

/// The CSV header: a row per process per category (and its total) follows.
pub fn csv_header(out: &mut dyn Write) -> std::io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(CSV_COLUMNS)?;
    w.flush()
}

const CSV_COLUMNS: &[&str] = &[
    "elapsed_s",
    "pid",
    "command",
    "category",
    "regions",
    "rss",
    "pss",
    "dirty",
    "touched",
    "working_set",
    "cold",
];

/// One sample's CSV rows: per process, a row per category and one with
/// `category` `total`; exact bytes, empty where unknown.
pub fn sample_csv(view: &WssView, out: &mut dyn Write) -> std::io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    let cell = |v: Option<u64>| v.map_or(String::new(), |v| v.to_string());
    let t = format!("{:.3}", view.elapsed_s);
    for p in &view.report.processes {
        let regions: usize = p.categories.iter().map(|c| c.regions).sum();
        let rows = p
            .categories
            .iter()
            .map(|c| (c.category.key(), c.regions, &c.sizes))
            .chain(std::iter::once(("total", regions, &p.totals)));
        for (category, regions, s) in rows {
            w.write_record([
                t.clone(),
                p.pid.to_string(),
                csv_text(p.command.clone()),
                category.to_string(),
                regions.to_string(),
                cell(s.rss),
                cell(s.pss),
                cell(s.dirty()),
                cell(s.touched),
                cell(s.working_set),
                cell(s.cold),
            ])?;
        }
    }
    w.flush()
}

impl Printer for WssView<'_> {
    fn table(&self, out: &mut dyn Write, screen: Screen) -> std::io::Result<()> {
        write_text(blocks(self.report), screen.width, out)
    }

    fn json(&self, out: &mut dyn Write) -> std::io::Result<()> {
        sample_json(self, out)
    }

    fn csv(&self, out: &mut dyn Write) -> std::io::Result<()> {
        csv_header(out)?;
        sample_csv(self, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memtally_core::analyze::wss::WssFold;
    use memtally_core::model::{Backing, Region};

    const MIB: u64 = 1 << 20;

    /// Two processes that share an 8 MiB library (4 MiB PSS each) and
    /// hold 4 MiB of heap each (all dirty), 3 MiB of it touched.
    fn two() -> WssReport {
        let mut lib = Region::new(Backing::File);
        lib.path = Some("/usr/lib/libc.so.6".into());
        lib.perms = "r-xp".into();
        let s = &mut lib.sizes;
        (s.rss, s.pss, s.pss_dirty, s.referenced) =
            (Some(8 * MIB), Some(4 * MIB), Some(0), Some(2 * MIB));
        (s.shared_clean, s.shared_dirty, s.private_clean, s.private_dirty) =
            (Some(8 * MIB), Some(0), Some(0), Some(0));
        let mut heap = Region::new(Backing::Anonymous);
        heap.perms = "rw-p".into();
        let s = &mut heap.sizes;
        (s.rss, s.pss, s.pss_dirty, s.referenced) =
            (Some(4 * MIB), Some(4 * MIB), Some(4 * MIB), Some(MIB));
        (s.shared_clean, s.shared_dirty, s.private_clean, s.private_dirty) =
            (Some(0), Some(0), Some(0), Some(4 * MIB));
        let mut fold = WssFold::default();
        fold.add(&lib, None);
        fold.add(&heap, None);
        let p = |pid| WssProcess::new(pid, "a".into(), "a".into(), 1.0, &fold);
        WssReport::new(WssMethod::ClearRefs, IdleTracking::Absent, 1.0, vec![p(1), p(2)], vec![])
    }

    fn text(report: &WssReport) -> String {
        let mut out = Vec::new();
        write_text(blocks(report), Some(100), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// Issue 37, item 1: the total of several processes adds up PSS and
    /// PSS DIRTY (16M, 8M) and shows `-` for the figures that count a
    /// shared page once per process (RSS would be 24M, 1.5 times PSS).
    #[test]
    fn several_processes_sum_the_proportional_figures_and_leave_the_rest_out() {
        let text = text(&two());
        let total = text.lines().find(|l| l.starts_with("total")).unwrap();
        let cells: Vec<&str> = total.split_whitespace().collect();
        assert_eq!(cells, ["total", "16.0M", "8.0M", "-", "-", "-", "-", "-"], "{text}");
        let row = text.lines().find(|l| l.trim_start().starts_with("1 ")).unwrap();
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cells, ["1", "8.0M", "4.0M", "12.0M", "4.0M", "3.0M", "6.0M", "9.0M", "a"]);
        assert!(!text.contains("24.0M"), "no full count summed: {text}");
        let by_category = &text[text.find("by category").unwrap()..];
        let header = by_category.lines().nth(1).unwrap();
        assert!(header.contains("PSS DIRTY") && !header.contains("RSS"), "{by_category}");
        assert!(text.contains("add up PSS and PSS DIRTY only"), "{text}");
    }

    #[test]
    fn a_series_line_of_several_processes_adds_up_pss() {
        let report = two();
        let view = WssView { report: &report, index: 0, elapsed_s: 1.0 };
        let mut out = Vec::new();
        series_line(&view, &mut out).unwrap();
        let line = String::from_utf8(out).unwrap();
        assert!(line.starts_with("[    1.0s] pss 16.0M  pss dirty 8.0M  2 processes"), "{line}");
        let mut doc = Vec::new();
        sample_json(&view, &mut doc).unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&doc).unwrap();
        assert_eq!(doc["total"]["pss"], 16 * MIB);
        assert!(doc["total"]["rss"].is_null() && doc["total"]["touched"].is_null(), "{doc}");
        assert_eq!(doc["processes"][0]["rss"], 12 * MIB, "each process whole");
    }
}
