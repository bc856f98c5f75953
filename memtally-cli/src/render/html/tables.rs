//! The page's tables: every process (sortable by the script; by PSS
//! without it), the detail of the largest processes (categories, top
//! mappings), and the waterfall's legend with each line's source.

use std::fmt::Write as _;

use memtally_core::analyze::machine::Machine;
use memtally_core::analyze::report::Report;
use memtally_core::model::snapshot::{SnapProcess, SnapshotKind};
use memtally_core::model::{Figure, Named, SizeSource, Sizes};

use super::esc;
use super::svg::group_colour;
use super::tree::{area_figure, category_label, dirty_of};
use crate::render::units::{human_opt, signed};

/// A figure cell: exact bytes in `data-v` (what sorting and the tests
/// read), the size for people as its text; `-` where the source has none.
pub(super) fn cell(v: Option<u64>) -> String {
    match v {
        Some(b) => format!(r#"<td class="n" data-v="{b}">{}</td>"#, human_opt(Some(b))),
        None => r#"<td class="n" data-v="-1">-</td>"#.to_string(),
    }
}

/// The name of the dirty column, as `top` names it: what [`dirty_of`]
/// reads.
pub fn dirty_name(report: &Report) -> &'static str {
    match report.snapshot.kind {
        SnapshotKind::Vmmap => "DIRTY",
        SnapshotKind::Linux => {
            if report.snapshot.totals.pss_dirty.is_some() {
                "PSS DIRTY"
            } else {
                "PRIV DIRTY"
            }
        }
    }
}

/// The columns of both process tables, after the name: `top`'s names
/// for `top`'s figures (`vmmap`'s for vmmap input).
fn figure_heads(report: &Report) -> String {
    let (area, swap, footprint) = match report.snapshot.kind {
        SnapshotKind::Vmmap => ("RESIDENT", "SWAP", "FOOTPRINT"),
        SnapshotKind::Linux => ("PSS", "SWAP PSS", "FOOTPRINT PSS"),
    };
    format!(
        r#"<th class="n">{area}</th><th class="n">USS</th><th class="n">{}</th><th class="n" title="{}">{swap}</th><th class="n" title="Pss_Anon + SwapPss: the footprint that adds up across processes, as top shows it">{footprint}</th><th class="n">RSS</th>"#,
        esc(dirty_name(report)),
        match report.snapshot.kind {
            SnapshotKind::Vmmap => "swapped bytes",
            SnapshotKind::Linux => "SwapPss and the process's share of swapped shared memory: every swapped byte once across processes, as top shows it",
        }
    )
}

fn figure_cells(s: &Sizes, kind: SnapshotKind) -> String {
    let swap = match kind {
        SnapshotKind::Vmmap => s.swap,
        // `top`'s SWAP PSS: SwapPss and swapped shared memory once.
        SnapshotKind::Linux => s.figure(Figure::SwapCounted),
    };
    format!(
        "{}{}{}{}{}{}",
        cell(s.figure(area_figure(kind))),
        cell(s.uss()),
        cell(dirty_of(s, kind)),
        cell(swap),
        // `footprint_pss`, the summable footprint (Pss_Anon + SwapPss),
        // as `top` and the JSON carry it: `-` where either is unknown.
        cell(s.footprint_pss()),
        cell(s.rss)
    )
}

/// The source as JSON names it.
fn source_name(s: SizeSource) -> &'static str {
    match s {
        SizeSource::Smaps => "smaps",
        SizeSource::SmapsRollup => "smaps_rollup",
        SizeSource::Maps => "maps",
        SizeSource::Status => "status",
        SizeSource::Vmmap => "vmmap",
        SizeSource::Libproc => "libproc",
    }
}

/// The EXCLUSIVE and WORKING SET columns' heads, where the snapshot
/// carries the figures (`snapshot --exact`, `report --exact`; `snapshot
/// --wss`).
fn exclusive_head(report: &Report) -> String {
    let mut s = String::new();
    if report.snapshot.exact.is_some() {
        s.push_str(r#"<th class="n" title="resident pages and swap slots no other process maps: what ending it gives back">Exclusive</th>"#);
    }
    if report.snapshot.wss.is_some() {
        s.push_str(r#"<th class="n" title="dirty bytes plus clean file bytes touched during the interval">Working set</th>"#);
    }
    s
}

/// The EXCLUSIVE and WORKING SET cells of a process: `-` where its pages
/// were not read or it was not measured.
fn exclusive_cell(report: &Report, p: &SnapProcess) -> String {
    let mut s = String::new();
    if report.snapshot.exact.is_some() {
        s.push_str(&cell(p.exclusive.map(|e| e.bytes)));
    }
    if report.snapshot.wss.is_some() {
        s.push_str(&cell(p.totals.working_set));
    }
    s
}

/// The sentence under the process table's heading that says what
/// EXCLUSIVE is, or why the page has no such column.
pub fn exclusive_sentence(report: &Report) -> String {
    let exclusive = match &report.snapshot.exact {
        Some(x) => format!(
            "Exclusive: the resident pages and swap slots no other process maps, what ending the process gives back (from its pages' frames: pagemap and kpagecount, read at {}); every process here together gives back {}, which is more than the column's sum where they share pages among themselves. Shared memory pages only they map ({}) are apart: their files keep them.",
            esc(x.time.as_deref().unwrap_or("an unknown time")),
            human_opt(Some(x.selection.bytes)),
            human_opt(Some(x.selection.shmem)),
        ),
        None if report.snapshot.kind == SnapshotKind::Linux => "No Exclusive column: the snapshot was read without page frames (<code>report --exact</code> or <code>snapshot --exact</code>, as root, adds it).".into(),
        None => String::new(),
    };
    match &report.snapshot.wss {
        Some(w) => format!(
            "{exclusive} Working set: the dirty bytes plus the clean file bytes each process touched during a {} s interval ({}, which resets the referenced bits), as the 2004 mail defined it; the rest of its resident bytes were cold.",
            w.interval_s,
            esc(w.method.name())
        ),
        None => exclusive,
    }
}

/// Every process of the report, largest first, unreadable ones last.
pub fn processes(report: &Report, detailed: &[u32]) -> String {
    let kind = report.snapshot.kind;
    let mut s = format!(
        r#"<table id="procs" class="sortable"><thead><tr><th class="n">PID</th><th>Name</th><th>User</th>{}{}<th>Source</th><th>Command</th></tr></thead><tbody>"#,
        figure_heads(report),
        exclusive_head(report)
    );
    let mut order: Vec<&SnapProcess> = report.snapshot.processes.iter().collect();
    order.sort_by_key(|p| std::cmp::Reverse(p.totals.figure(area_figure(kind))));
    for p in order {
        let pid = p.pid.map_or_else(String::new, |p| p.to_string());
        let name = match p.pid.filter(|pid| detailed.contains(pid)) {
            Some(pid) => format!(r##"<a href="#d{pid}">{}</a>"##, esc(&p.comm)),
            None => esc(&p.comm),
        };
        let _ = write!(
            s,
            r#"<tr id="p{pid}" data-pid="{pid}"><td class="n" data-v="{pid}">{pid}</td><td>{name}</td><td>{}</td>{}{}<td>{}</td><td class="cmd"><code>{}</code></td></tr>"#,
            esc(p.user.as_deref().unwrap_or("")),
            figure_cells(&p.totals, kind),
            exclusive_cell(report, p),
            source_name(p.source),
            esc(&p.command)
        );
    }
    for u in &report.unread {
        let _ = write!(
            s,
            r#"<tr id="p{0}" data-pid="{0}" class="unread"><td class="n" data-v="{0}">{0}</td><td>{1}</td><td>{2}</td>{3}{4}<td>status (unreadable)</td><td class="cmd"><code>{5}</code></td></tr>"#,
            u.pid,
            esc(&u.comm),
            esc(u.user.as_deref().unwrap_or("")),
            figure_cells(&u.sizes, SnapshotKind::Linux),
            [report.snapshot.exact.is_some(), report.snapshot.wss.is_some()]
                .iter()
                .filter(|&&on| on)
                .map(|_| cell(None))
                .collect::<String>(),
            esc(&u.command)
        );
    }
    s.push_str("</tbody></table>");
    s
}

/// The detail of one process: its categories and its largest mappings.
pub fn detail(p: &SnapProcess, report: &Report, mappings: usize) -> String {
    let kind = report.snapshot.kind;
    let pid = p.pid.map_or_else(String::new, |p| p.to_string());
    let mut s = format!(
        r#"<section id="d{pid}" class="detail"><h3>{} ({pid})</h3><p><code>{}</code></p><table class="sortable"><thead><tr><th>Category</th><th class="n">Regions</th>{}</tr></thead><tbody>"#,
        esc(&p.comm),
        esc(&p.command),
        figure_heads(report)
    );
    for c in &p.categories {
        let _ = write!(
            s,
            r#"<tr><td>{}</td><td class="n" data-v="{}">{}</td>{}</tr>"#,
            esc(category_label(&c.key, kind)),
            c.regions,
            c.regions,
            figure_cells(&c.sizes, kind)
        );
    }
    s.push_str("</tbody></table>");
    let mut regions: Vec<_> = p.regions.iter().collect();
    regions.sort_by_key(|r| std::cmp::Reverse(r.sizes.figure(area_figure(kind))));
    if !regions.is_empty() {
        let _ = write!(
            s,
            r#"<table class="sortable"><caption>largest {} of {} mappings</caption><thead><tr><th>Mapping</th><th>Perms</th><th>Category</th>{}</tr></thead><tbody>"#,
            mappings.min(regions.len()),
            report.regions_of(p),
            figure_heads(report)
        );
        for r in regions.iter().take(mappings) {
            let name = r
                .path
                .clone()
                .filter(|p| !p.is_empty())
                .or_else(|| r.region_type.clone())
                .unwrap_or_else(|| "[anonymous]".into());
            let _ = write!(
                s,
                r#"<tr><td><code>{}</code></td><td>{}</td><td>{}</td>{}</tr>"#,
                esc(&name),
                esc(&r.perms),
                esc(category_label(&r.category, kind)),
                figure_cells(&r.sizes, kind)
            );
        }
        s.push_str("</tbody></table>");
    }
    s.push_str("</section>");
    s
}

/// A small square of `colour` (an SVG: the page allows no inline style).
pub fn swatch(colour: &str) -> String {
    format!(
        r#"<svg class="sw" width="12" height="12" viewBox="0 0 12 12" xmlns="http://www.w3.org/2000/svg"><rect width="12" height="12" fill="{colour}"/></svg>"#
    )
}

/// The waterfall's legend: one row per line, with its source.
pub fn waterfall_legend(m: &Machine) -> String {
    let mut s = String::from(
        r#"<table id="waterfall-lines"><thead><tr><th>Line</th><th>Group</th><th class="n">Bytes</th><th class="n">Size</th><th>Source</th></tr></thead><tbody>"#,
    );
    for l in &m.lines {
        let _ = write!(
            s,
            r#"<tr data-line="{0}"><td>{1}{0}</td><td>{2}</td><td class="n" data-v="{3}">{3}</td><td class="n">{4}</td><td>{5}</td></tr>"#,
            l.name,
            swatch(group_colour(l.group)),
            l.group,
            l.bytes,
            signed(l.bytes),
            esc(&l.source)
        );
    }
    let _ = write!(
        s,
        r#"</tbody><tfoot><tr><td>MemTotal</td><td></td><td class="n" data-v="{0}">{0}</td><td class="n">{1}</td><td>/proc/meminfo</td></tr></tfoot></table>"#,
        m.total,
        human_opt(Some(m.total))
    );
    s
}
