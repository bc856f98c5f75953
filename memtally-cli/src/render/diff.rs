//! Prints a diff: what grew and what shrank, largest growth first (the
//! JSON document: [`diff_json`](super::diff_json)).

use std::io::Write;

use memtally_core::analyze::diff::{Change, Diff, DiffSort, RegionChange};
use memtally_core::model::{Figure, Named, Sizes, Status};

use crate::render::blocks::{write_text, Block};
use crate::render::notes::word;
use crate::render::table::{csv_text, escape_controls, Align, Table};
use crate::render::units::{human, human_opt, human_signed};
use crate::render::{Printer, Screen};

/// A diff, and how many rows per section its table shows.
pub struct DiffView<'a> {
    pub diff: &'a Diff,
    pub limit: usize,
}

impl Printer for DiffView<'_> {
    fn table(&self, out: &mut dyn Write, screen: Screen) -> std::io::Result<()> {
        write_text(blocks(self.diff, self.limit), screen.width, out)
    }

    fn json(&self, out: &mut dyn Write) -> std::io::Result<()> {
        serde_json::to_writer(&mut *out, &super::diff_json::Document(self.diff))?;
        out.write_all(b"\n")
    }

    fn csv(&self, out: &mut dyn Write) -> std::io::Result<()> {
        csv(self.diff, out)
    }
}

fn delta_cell(c: &Change, f: Figure) -> String {
    c.delta(f).map_or_else(|| "-".into(), human_signed)
}

/// One section of changes (processes, categories, paths): its title,
/// its first `limit` rows, and how many more there are.
fn section(d: &Diff, title: &str, rows: &[Change], limit: usize, first: &str) -> Vec<Block> {
    if rows.is_empty() {
        return vec![Block::Line(format!("{title}: no change"))];
    }
    let columns = super::diff_columns::table(d);
    let mut headers: Vec<(&str, Align)> =
        columns.iter().map(|(h, _)| (h.as_str(), Align::Right)).collect();
    let dirty = super::diff_columns::dirty(d);
    let sides = format!("{} BEFORE → AFTER", dirty.header);
    headers.push((&sides, Align::Right));
    headers.push((first, Align::Left));
    let mut t = Table::new(&headers);
    for c in rows.iter().take(limit) {
        let mut cells: Vec<String> = columns.iter().map(|&(_, f)| delta_cell(c, f)).collect();
        let side = |s: &Option<Sizes>| {
            s.as_ref().map_or_else(|| "·".to_string(), |s| human_opt(s.figure(dirty.figure)))
        };
        cells.push(format!("{} → {}", side(&c.before), side(&c.after)));
        let mark = match c.status() {
            Status::Appeared => " (new)",
            Status::Vanished => " (gone)",
            Status::Changed => "",
        };
        cells.push(match c.pid {
            Some(pid) => format!("{pid} {}{mark}", c.label),
            None => format!("{}{mark}", c.label),
        });
        t.row(cells);
    }
    let mut blocks = vec![Block::Heading(title.into()), Block::Table(t)];
    if rows.len() > limit {
        blocks
            .push(Block::Line(format!("({} more not shown; --top to change)", rows.len() - limit)));
    }
    blocks
}

/// The table view as blocks: the totals' change, a section each for
/// processes, categories and paths, the regions that came and went, the
/// purge-state changes, the notes.
fn blocks(d: &Diff, limit: usize) -> Vec<Block> {
    let t = &d.totals;
    let over = d
        .seconds
        .map(|s| {
            format!(
                " over {}",
                humantime::format_duration(std::time::Duration::from_secs(s.max(0.0) as u64))
            )
        })
        .unwrap_or_default();
    let (dirty, swap) = (super::diff_columns::dirty(d), super::diff_columns::swap(d));
    let mut blocks = vec![
        Block::Line(format!(
            "total{over}: {} {}, PSS {}, RSS {}, {} {}",
            dirty.word,
            delta_cell(t, dirty.figure),
            delta_cell(t, Figure::Pss),
            delta_cell(t, Figure::Rss),
            swap.word,
            delta_cell(t, swap.figure)
        )),
        Block::Blank,
    ];
    for (title, rows, first) in [
        ("processes", &d.processes, "PROCESS"),
        ("categories", &d.categories, "CATEGORY"),
        ("paths", &d.paths, "PATH"),
    ] {
        blocks.extend(section(d, title, rows, limit, first));
        blocks.push(Block::Blank);
    }
    let (appeared, vanished): (Vec<_>, Vec<_>) = d.regions.iter().partition(|r| r.appeared);
    // Those listed and those left out (counted and summed).
    let left = d.regions_left.as_ref();
    let left_size = |s: Option<&Option<Sizes>>| s.and_then(|s| s.as_ref()?.size).unwrap_or(0);
    let sum = |v: &[&RegionChange], left: u64| {
        v.iter().filter_map(|r| r.region.sizes.size).fold(left, u64::saturating_add)
    };
    blocks.push(Block::Line(format!(
        "regions: {} appeared ({} virtual), {} vanished ({} virtual)",
        appeared.len() as u64 + left.map_or(0, |l| l.appeared),
        human(sum(&appeared, left_size(left.map(|l| &l.after)))),
        vanished.len() as u64 + left.map_or(0, |l| l.vanished),
        human(sum(&vanished, left_size(left.map(|l| &l.before))))
    )));
    for r in d.regions.iter().take(limit) {
        let reg = &r.region;
        blocks.push(Block::Line(format!(
            "  {} pid {} {}{} {} rss {} dirty {} {}",
            if r.appeared { "+" } else { "-" },
            r.pid.map_or_else(|| "?".into(), |p| p.to_string()),
            reg.start.map_or_else(|| "-".into(), |s| format!("{s:x}")),
            reg.end.map_or_else(String::new, |e| format!("-{e:x}")),
            human_opt(reg.sizes.size),
            human_opt(reg.sizes.rss),
            human_opt(reg.sizes.dirty()),
            escape_controls(
                reg.path
                    .clone()
                    .or_else(|| reg.region_type.clone())
                    .unwrap_or("[anonymous]".into())
            ),
        )));
    }
    if d.regions.len() > limit {
        blocks.push(Block::Line(format!(
            "  ({} more not shown; --top to change)",
            d.regions.len() - limit
        )));
    }
    if let Some(l) = left {
        let c = &super::diff_json::left_change(l);
        blocks.push(Block::Line(format!(
            "  ({} more not listed: {} appeared, {} vanished, virtual {} rss {} dirty {}; --regions to change)",
            l.count(),
            l.appeared,
            l.vanished,
            delta_cell(c, Figure::Size),
            delta_cell(c, Figure::Rss),
            delta_cell(c, Figure::Dirty),
        )));
    }
    blocks.extend(purge_changes(d, limit));
    blocks.extend(super::diff_footprint::footprint_changes(d, limit));
    blocks.extend(super::diff_exact::exact_changes(d, limit));
    blocks.extend(d.notes.iter().map(|n| Block::Note(escape_controls(word(n)))));
    blocks
}

/// vmmap reports: regions whose purgeable state changed (`N -> V`, ...).
fn purge_changes(d: &Diff, limit: usize) -> Vec<Block> {
    if d.purge_changes.is_empty() {
        return Vec::new();
    }
    let mut blocks = vec![
        Block::Blank,
        Block::Heading(format!("purge-state changes: {} region(s)", d.purge_changes.len())),
    ];
    for c in d.purge_changes.iter().take(limit) {
        let (b, a) = c.states();
        let r = &c.after;
        blocks.push(Block::Line(format!(
            "  {} -> {}  {}{} {} {} resident {} -> {}{}",
            b,
            a,
            r.start.map_or_else(|| "-".into(), |s| format!("{s:x}")),
            r.end.map_or_else(String::new, |e| format!("-{e:x}")),
            r.region_type.as_deref().unwrap_or("?"),
            human_opt(r.sizes.size),
            human_opt(c.before.sizes.rss),
            human_opt(r.sizes.rss),
            r.path.as_deref().map(|p| format!("  {p}")).unwrap_or_default(),
        )));
    }
    if d.purge_changes.len() > limit {
        blocks.push(Block::Line(format!(
            "({} more not shown; --top to change)",
            d.purge_changes.len() - limit
        )));
    }
    blocks
}

/// The CSV's figures: the ones `diff` compares.
fn csv_figures() -> impl Iterator<Item = Figure> {
    DiffSort::ALL.iter().map(|s| s.0)
}

/// A CSV record of `c` in scope `scope` under `label` (its key as it
/// is): before, after and delta of each figure, `len` cells.
fn figure_record(scope: &str, label: String, c: &Change, len: usize) -> Vec<String> {
    let mut rec = vec![scope.to_string(), c.key.clone(), label, c.status().name().to_string()];
    for f in csv_figures() {
        let cell = |s: &Option<Sizes>| {
            s.as_ref().and_then(|s| s.figure(f)).map_or(String::new(), |v| v.to_string())
        };
        rec.push(cell(&c.before));
        rec.push(cell(&c.after));
        rec.push(c.delta(f).map_or(String::new(), |v| v.to_string()));
    }
    rec.resize(len, String::new());
    rec
}

/// One line per changed process, category and path: scope, key, status,
/// then before, after and delta of each figure.
fn csv(d: &Diff, out: &mut dyn Write) -> std::io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    let mut header = vec!["scope".to_string(), "key".into(), "label".into(), "status".into()];
    for f in csv_figures().map(Figure::name) {
        header.push(format!("{f}_before"));
        header.push(format!("{f}_after"));
        header.push(format!("{f}_delta"));
    }
    let figure_cells = header.len() - 4;
    header.extend(super::diff_footprint::csv_header(d));
    w.write_record(&header)?;
    let scopes: [(&str, &[Change]); 4] = [
        ("total", std::slice::from_ref(&d.totals)),
        ("process", &d.processes),
        ("category", &d.categories),
        ("path", &d.paths),
    ];
    for (scope, rows) in scopes {
        for c in rows {
            let mut rec = vec![
                scope.to_string(),
                csv_text(c.key.clone()),
                csv_text(c.label.clone()),
                c.status().name().to_string(),
            ];
            let cell = |s: &Option<Sizes>, f: Figure| {
                s.as_ref().and_then(|s| s.figure(f)).map_or(String::new(), |v| v.to_string())
            };
            for f in csv_figures() {
                rec.push(cell(&c.before, f));
                rec.push(cell(&c.after, f));
                rec.push(c.delta(f).map_or(String::new(), |v| v.to_string()));
            }
            rec.resize(header.len(), String::new());
            w.write_record(&rec)?;
        }
    }
    // vmmap: one `purge` line per region whose purge state changed; the
    // key is its address range, the label its type and `BEFORE -> AFTER`.
    let purge: Vec<Change> = d
        .purge_changes
        .iter()
        .map(|p| {
            let (b, a) = p.states();
            let r = &p.after;
            let hex = |v: Option<u64>| v.map_or_else(|| "-".into(), |v| format!("{v:x}"));
            Change {
                key: format!("{}-{}", hex(r.start), hex(r.end)),
                label: format!("{} {b} -> {a}", r.region_type.as_deref().unwrap_or("?")),
                pid: p.pid,
                before: Some(p.before.sizes.clone()),
                after: Some(r.sizes.clone()),
            }
        })
        .collect();
    for c in &purge {
        w.write_record(figure_record("purge", escape_controls(c.label.clone()), c, header.len()))?;
    }
    // The regions not listed (`--regions`): one row of its own scope, its
    // label how many appeared and vanished.
    if let Some(c) = d.regions_left.as_ref().map(super::diff_json::left_change) {
        w.write_record(figure_record("regions_left", c.label.clone(), &c, header.len()))?;
    }
    for rec in super::diff_footprint::csv_rows(d, figure_cells) {
        w.write_record(&rec)?;
    }
    w.flush()
}
