//! The grouped table of `show`.

use std::io::Write;

use memtally_core::analyze::show::{ShowBy, ShowReport};
use memtally_core::model::{Figure, Named, Sizes};

use super::{columns, figures_in, gpu_rows, heading, rounding_in, totals_line};
use crate::render::blocks::{write_text, Block};
use crate::render::notes::word;
use crate::render::table::{Align, Cut, Table};
use crate::render::units::{human, human_opt};
use crate::render::width;

/// The huge page and KSM figures of a row that are not zero, as
/// `AnonHugePages 2.0M` (smaps names).
pub fn huge_parts(sizes: &Sizes) -> Vec<String> {
    [
        ("AnonHugePages", sizes.anon_huge_pages),
        ("ShmemPmdMapped", sizes.shmem_pmd_mapped),
        ("FilePmdMapped", sizes.file_pmd_mapped),
        ("Shared_Hugetlb", sizes.shared_hugetlb),
        ("Private_Hugetlb", sizes.private_hugetlb),
        ("KSM", sizes.ksm),
    ]
    .into_iter()
    .filter_map(|(k, v)| v.filter(|&v| v > 0).map(|v| format!("{k} {}", human_opt(Some(v)))))
    .collect()
}

/// What of the figures is tmpfs / shared memory, which the process's exit
/// does not free; `None` when there is none. PSS first, since it holds
/// USS (a page mapped here alone is all this process's share): the part
/// in USS is a part of it, never beside it.
pub fn shmem_line(shmem: &Sizes) -> Option<String> {
    let pss = shmem.pss.filter(|&v| v > 0);
    let uss = shmem.uss().filter(|&v| v > 0);
    if pss.is_none() && uss.is_none() {
        return None;
    }
    let alone = match uss {
        Some(u) => format!(
            "{} of it mapped here alone (in USS; {} of that dirty)",
            human(u),
            human_opt(shmem.private_dirty)
        ),
        None => "none of it mapped here alone (USS 0)".to_string(),
    };
    Some(format!(
        "shmem: {} of the PSS is tmpfs / shared memory (/dev/shm, memfd, SysV, shared anonymous), {alone}: not freed when the process exits, while the file or segment exists",
        human_opt(pss.or(uss)),
    ))
}

/// A line of text wrapped to the output's width (the streamed views
/// write without the output's fitting), its following lines indented
/// under the text after its label (`shmem: `, `footprint 604K: `).
fn text(line: String, fit: Option<usize>) -> Block {
    let (prefix, rest) = match line.find(": ") {
        Some(at) if width::columns(&line[..at]) < 30 => line.split_at(at + 2),
        _ => ("", line.as_str()),
    };
    Block::Line(width::wrap(prefix, rest, fit).trim_end_matches('\n').to_string())
}

/// The columns, with one for hugetlbfs pages before VIRTUAL where the
/// view has any: smaps counts them in neither Rss nor Pss, so without it a
/// hugetlb mapping's row read 0 / 0 and its bytes were only in a note.
/// One process: HUGETLB (shared + private); several: PRIV HUGETLB, which
/// adds up across them (a shared hugetlb page would count in each).
fn with_hugetlb(
    columns: &'static [(&'static str, Figure)],
    report: &ShowReport,
) -> Vec<(&'static str, Figure)> {
    let mut out = columns.to_vec();
    let (label, figure) = if report.processes.len() > 1 {
        ("PRIV HUGETLB", Figure::PrivateHugetlb)
    } else {
        ("HUGETLB", Figure::Hugetlb)
    };
    let any = report.totals.figure(figure).is_some_and(|v| v > 0);
    if any {
        let at = out.iter().position(|(_, f)| *f == Figure::Size).unwrap_or(out.len());
        out.insert(at, (label, figure));
    }
    out
}

/// Columns a path keeps at least in `show --by path`.
const PATH_MIN: usize = 30;
/// The figures left out first where paths need the room: those that say
/// least about what a file costs.
const DROPPED_FIRST: [Figure; 5] =
    [Figure::Size, Figure::Clean, Figure::SharedDirty, Figure::Swap, Figure::PssDirty];

/// The figure columns of `show --by path` at `width`: all where the
/// paths keep [`PATH_MIN`] columns beside them, else without the first
/// of [`DROPPED_FIRST`] until they do; and the headers left out. (A figure
/// takes at most 7 columns, `1023.9M`, or its header's width.)
fn room_for_paths(
    mut columns: Vec<(&'static str, Figure)>,
    width: Option<usize>,
) -> (Vec<(&'static str, Figure)>, Vec<&'static str>) {
    let Some(w) = width else { return (columns, Vec::new()) };
    // The figures, REGIONS, and the gaps before each column.
    let need = |c: &[(&str, Figure)]| {
        c.iter().map(|(h, _)| width::columns(h).max(7) + 2).sum::<usize>() + 7 + 2 + PATH_MIN
    };
    let mut left_out = Vec::new();
    for f in DROPPED_FIRST {
        if need(&columns) <= w {
            break;
        }
        if let Some(at) = columns.iter().position(|(_, c)| *c == f) {
            left_out.push(columns.remove(at).0);
        }
    }
    (columns, left_out)
}

/// The grouped table.
pub fn table(report: &ShowReport, fit: Option<usize>, out: &mut dyn Write) -> std::io::Result<()> {
    let first = report.by.name().to_uppercase();
    let mut headers: Vec<(&str, Align)> = vec![(first.as_str(), Align::Left)];
    let columns = with_hugetlb(columns(report.processes.len()), report);
    let (columns, left_out) = match report.by {
        ShowBy::Path => room_for_paths(columns, fit),
        _ => (columns, Vec::new()),
    };
    let columns = columns.as_slice();
    headers.extend(columns.iter().map(|(h, _)| (*h, Align::Right)));
    headers.push(("REGIONS", Align::Right));
    // Paths are long: put them last so the numbers line up.
    if report.by == ShowBy::Path {
        headers.rotate_left(1);
    }
    let mut t = Table::new(&headers);
    let cells = |label: &str, regions: usize, sizes: &Sizes| {
        let mut c = vec![label.to_string()];
        c.extend(figures_in(columns, sizes));
        c.push(regions.to_string());
        if report.by == ShowBy::Path {
            c.rotate_left(1);
        }
        c
    };
    for row in &report.rows {
        t.row(cells(&row.label, row.regions, &row.sizes));
    }
    // In the total, unlike the GPU rows: the rows and it add up to it.
    if let Some(figures) = rounding_in(columns, report) {
        let mut c = vec!["rounding".to_string()];
        c.extend(figures);
        c.push("-".into());
        if report.by == ShowBy::Path {
            c.rotate_left(1);
        }
        t.row(c);
    }
    let gpu = report.gpu.as_ref().filter(|_| report.by == ShowBy::Category);
    for (label, sizes) in gpu.map(gpu_rows).unwrap_or_default() {
        let mut c = cells(&label, 0, &sizes);
        let regions = if report.by == ShowBy::Path { c.len() - 2 } else { c.len() - 1 };
        c[regions] = "-".into();
        t.row(c);
    }
    t.footer(cells("total", report.region_count, &report.totals));
    // A category's (or kind's) name stays whole; paths may be cut, in
    // the middle, so the file name that tells them apart stays.
    if report.by == ShowBy::Path {
        t.cut_as(headers.len() - 1, Cut::Path);
    } else {
        t.keep_whole(0);
    }
    let mut blocks = vec![
        Block::Heading(heading(&report.processes, fit)),
        Block::Table(t),
        Block::Line(totals_line(report, fit)),
    ];
    if let Some(g) = gpu {
        blocks.push(text(format!(
            "GPU rows (not in the total): RSS = drm-resident, PSS = resident shared among the client's processes, VIRTUAL = drm-total; dma-buf: RSS = size, PSS = size / holders. reclaimable (LazyFree + drm-purgeable): {}. More: memtally gpu",
            human_opt(g.reclaimable)
        ), fit));
        blocks.extend(g.notes.iter().map(|n| Block::Note(word(n))));
    }
    for (label, sizes) in
        report.rows.iter().map(|r| (r.label.as_str(), &r.sizes)).chain([("total", &report.totals)])
    {
        let parts = huge_parts(sizes);
        if !parts.is_empty() {
            blocks.push(text(format!("huge pages / KSM, {label}: {}", parts.join(", ")), fit));
        }
    }
    blocks.extend(shmem_line(&report.shmem).map(|l| text(l, fit)));
    blocks.extend(footprint_lines(&report.totals).into_iter().map(|l| text(l, fit)));
    blocks.extend(crate::render::top::shmem_swap_note(&report.totals));
    if report.omitted > 0 {
        blocks.push(Block::Line(format!(
            "({} more rows not shown; totals include them. --top to change.)",
            report.omitted
        )));
    }
    blocks.extend(report.notes.iter().map(|n| Block::Note(word(n))));
    if !left_out.is_empty() {
        blocks.push(Block::Note(format!(
            "{} left out so the paths fit (COLUMNS=200, or --format csv, has every figure)",
            left_out.join(", ")
        )));
    }
    if report.processes.len() > 1 {
        blocks.push(Block::Note(format!(
            "{} processes: only figures that add up across them are shown (PSS DIRTY = Pss_Dirty, SWAP PSS = SwapPss: a shared page divided among its processes); RSS, shared dirty and swap count a shared page once per process, so they stand per process only (processes[] in --format json).",
            report.processes.len()
        )));
        if report.totals.pss_dirty.is_none() {
            blocks.push(Block::Note("no Pss_Dirty in these smaps (Linux 6.0 and later have it): PSS DIRTY is unknown (-); PRIV DIRTY leaves shared dirty pages out.".into()));
        }
    }
    write_text(blocks, fit, out)
}

/// The two footprints, named apart, a line each (each fits 80 columns):
/// Chromium's (status RssAnon + VmSwap, one process's, shared pages in
/// full) and the summable one (Pss_Anon + SwapPss). A sum over several
/// processes has only the second (model::summable).
fn footprint_lines(totals: &Sizes) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(f) = totals.footprint {
        lines.push(format!(
            "footprint {}: status RssAnon + VmSwap (as Chromium counts it)",
            human(f)
        ));
    }
    if let Some(f) = totals.footprint_pss() {
        lines.push(format!(
            "footprint_pss {}: Pss_Anon + SwapPss (adds up across processes)",
            human(f)
        ));
    }
    lines
}
