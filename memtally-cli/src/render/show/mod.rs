//! Prints the `show` view: a table for people, JSON and CSV with exact
//! bytes (docs/json.md), and one process's regions as they are read.

mod csv;
mod json;
mod stream;
mod table;

use std::io::Write;

use memtally_core::analyze::gpu::GpuShow;
use memtally_core::analyze::show::ShowReport;
use memtally_core::model::{Figure, Process, SizeSource, Sizes};

use crate::render::units::human_opt;
use crate::render::{Printer, Screen};

pub use self::csv::csv;
pub use json::json;
#[cfg(feature = "schema")]
pub(crate) use json::ShowJson;
pub use stream::RegionStream;
pub use table::table;

impl Printer for ShowReport {
    fn table(&self, out: &mut dyn Write, screen: Screen) -> std::io::Result<()> {
        table(self, screen.width, out)
    }

    fn json(&self, out: &mut dyn Write) -> std::io::Result<()> {
        json(self, out)
    }

    fn csv(&self, out: &mut dyn Write) -> std::io::Result<()> {
        csv(self, false, out)
    }
}

/// The size columns of `show`, dirty first: it is what the seed says matters.
pub(crate) const COLUMNS: &[(&str, Figure)] = &[
    ("PRIV DIRTY", Figure::PrivateDirty),
    ("SHR DIRTY", Figure::SharedDirty),
    ("RSS", Figure::Rss),
    ("PSS", Figure::Pss),
    ("CLEAN", Figure::Clean),
    ("SWAP", Figure::Swap),
    ("VIRTUAL", Figure::Size),
];

/// The size columns of `show` over several processes: only figures that
/// add up across processes. RSS, SHR DIRTY, CLEAN and SWAP would count a
/// page shared by N of them N times; PSS DIRTY (Pss_Dirty) and SWAP PSS
/// (SwapPss) divide it among them.
pub(crate) const COLUMNS_SEVERAL: &[(&str, Figure)] = &[
    ("PRIV DIRTY", Figure::PrivateDirty),
    ("PSS DIRTY", Figure::PssDirty),
    ("PSS", Figure::Pss),
    // SwapPss and the swapped shared memory it leaves out, once.
    ("SWAP PSS", Figure::SwapCounted),
    ("VIRTUAL", Figure::Size),
];

/// The size columns for a view of `processes` processes.
pub(crate) fn columns(processes: usize) -> &'static [(&'static str, Figure)] {
    if processes > 1 {
        COLUMNS_SEVERAL
    } else {
        COLUMNS
    }
}

pub(crate) fn figures(sizes: &Sizes) -> Vec<String> {
    figures_in(COLUMNS, sizes)
}

pub(crate) fn figures_in(columns: &[(&str, Figure)], sizes: &Sizes) -> Vec<String> {
    columns.iter().map(|&(_, f)| human_opt(sizes.figure(f))).collect()
}

/// The rounding row's cells in `columns` (signed; `0` where the rows add
/// up to the total exactly, `-` where the total lacks the figure); `None`
/// when the rows already add up.
pub(crate) fn rounding_in(columns: &[(&str, Figure)], report: &ShowReport) -> Option<Vec<String>> {
    let rounding = report.rounding.as_ref()?;
    Some(
        columns
            .iter()
            .map(|&(_, f)| match (rounding.get(f), report.totals.figure(f)) {
                (Some(d), _) => crate::render::units::human_signed(d.into()),
                (None, Some(_)) => "0".into(),
                (None, None) => "-".into(),
            })
            .collect(),
    )
}

/// One line, wrapped to `width`: where the total row's figures come
/// from, and what the rounding row is.
pub(crate) fn totals_line(report: &ShowReport, width: Option<usize>) -> String {
    let text = totals_text(report);
    crate::render::width::wrap("total: ", &text, width).trim_end_matches('\n').to_string()
}

fn totals_text(report: &ShowReport) -> String {
    use memtally_core::analyze::rounding::TotalsFrom;
    let rollups = report.processes.iter().filter(|p| p.rollup.is_some()).count();
    let from = match report.totals_from {
        TotalsFrom::SmapsRollup => "the kernel's exact sums (smaps_rollup)".to_string(),
        TotalsFrom::Mixed => format!(
            "the kernel's exact sums (smaps_rollup) for {rollups} of {} processes, the others' mappings added up",
            report.processes.len()
        ),
        TotalsFrom::Regions => {
            return format!(
                "every mapping added up (from {}; no smaps_rollup read beside it)",
                source_names(&report.processes)
            );
        }
    };
    let rounding = if report.rounding.is_some() {
        "the rounding row is the difference"
    } else {
        "here they add up exactly"
    };
    format!(
        "PSS, PSS DIRTY and SWAP PSS are {from}; the rows add up smaps, which rounds each mapping's down to a kB: {rounding}"
    )
}

fn source_names(processes: &[Process]) -> String {
    let mut names: Vec<&str> = processes.iter().map(source_name).collect();
    names.sort_unstable();
    names.dedup();
    names.join(", ")
}

/// The heading line (no newline): who, and where the figures came from; a long
/// command line is cut to the output's `width` (JSON has it whole).
pub(crate) fn heading(processes: &[Process], width: Option<usize>) -> String {
    use crate::render::width::{columns, command_label, cut};
    match processes {
        [p] => {
            let head = format!("pid {}  ", p.pid);
            let tail = format!("  (from {})", source_name(p));
            let command = crate::render::table::escape_controls(p.command());
            let room = width.map(|w| w.saturating_sub(columns(&head) + columns(&tail)));
            let command = match room {
                Some(room) if columns(&command) > room => {
                    cut(&command_label(&command, None), room.max(8)).into_owned()
                }
                _ => command,
            };
            format!("{head}{command}{tail}")
        }
        many => format!("{} processes", many.len()),
    }
}

fn source_name(p: &Process) -> &'static str {
    match p.source {
        SizeSource::Smaps => "smaps",
        SizeSource::SmapsRollup => "smaps_rollup",
        SizeSource::Maps => "maps: virtual sizes only",
        SizeSource::Status => "status: totals only",
        SizeSource::Vmmap => "vmmap",
        SizeSource::Libproc => "libproc: footprint and resident totals only",
    }
}

/// The GPU rows of the category table: one per device and region, then
/// the dma-bufs (docs/gpu-json.md).
pub(crate) fn gpu_rows(g: &GpuShow) -> Vec<(String, Sizes)> {
    let mut rows: Vec<(String, Sizes)> = g
        .entries
        .iter()
        .map(|e| {
            let sizes = Sizes {
                rss: e.memory.resident,
                pss: e.proportional,
                size: e.memory.total,
                ..Default::default()
            };
            (format!("GPU {} {} {}", e.driver, e.device, e.region), sizes)
        })
        .collect();
    if g.dmabuf.count > 0 {
        let sizes =
            Sizes { rss: Some(g.dmabuf.size), pss: Some(g.dmabuf.pss), ..Default::default() };
        rows.push((format!("GPU dma-buf ({})", g.dmabuf.count), sizes));
    }
    rows
}

/// CSV columns: every row has the same ones, in bytes; a figure the
/// source does not give is an empty cell.
pub(crate) const CSV_FIGURES: &[Figure] = &[
    Figure::Size,
    Figure::Rss,
    Figure::Pss,
    Figure::SharedClean,
    Figure::SharedDirty,
    Figure::PrivateClean,
    Figure::PrivateDirty,
    Figure::Swap,
    Figure::SwapPss,
    Figure::Anonymous,
    Figure::Locked,
    Figure::SharedHugetlb,
    Figure::PrivateHugetlb,
    // The total row's only (a process's figures, not a mapping's).
    Figure::Footprint,
    Figure::FootprintPss,
];

pub(crate) fn csv_cell(v: Option<u64>) -> String {
    v.map_or_else(String::new, |v| v.to_string())
}

#[cfg(test)]
mod tests;
