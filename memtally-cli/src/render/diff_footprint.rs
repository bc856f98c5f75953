//! The footprint part of a diff of two vmmap reports: the footprint and
//! reclaimable memory before and after, vmmap's own figure, and a table
//! of the region types whose figures moved (docs/json.md, `vmmap`).

use memtally_core::analyze::diff::Diff;
use memtally_core::analyze::vmmap::Delta;

use crate::render::blocks::Block;
use crate::render::table::{escape_controls, Align, Table};
use crate::render::units::{human_opt, human_signed};

/// `BEFORE -> AFTER (DELTA)`, `-` where a side lacks the figure.
fn delta_text(d: &Delta) -> String {
    let delta = d.delta.map_or_else(|| "-".into(), |v| human_signed(v.into()));
    format!("{} -> {} ({delta})", human_opt(d.before), human_opt(d.after))
}

/// vmmap reports: the footprint and reclaimable memory before and after
/// (a purge flip moves them while dirty stays), vmmap's own figure, and
/// the types whose figures moved; summary-only reports also their
/// VOLATILE, NONVOL and EMPTY columns.
pub(crate) fn footprint_changes(d: &Diff, limit: usize) -> Vec<Block> {
    let Some(v) = &d.vmmap else { return Vec::new() };
    let t = &v.total;
    let mut blocks = vec![
        Block::Blank,
        Block::Line(format!(
            "footprint: {}; reclaimable (volatile purgeable): {}",
            delta_text(&t.footprint),
            delta_text(&t.reclaimable)
        )),
    ];
    if v.physical_footprint.before.is_some() || v.physical_footprint.after.is_some() {
        blocks.push(Block::Line(format!(
            "vmmap's physical footprint: {}",
            delta_text(&v.physical_footprint)
        )));
    }
    let summary = [t.volatile, t.nonvol, t.empty].iter().any(|x| x.before.is_some());
    if summary {
        blocks.push(Block::Line(format!(
            "purgeable (summary): volatile {}, non-volatile {}, empty {}",
            delta_text(&t.volatile),
            delta_text(&t.nonvol),
            delta_text(&t.empty)
        )));
    }
    if v.types.is_empty() {
        return blocks;
    }
    let mut headers = vec![
        ("REGION TYPE", Align::Left),
        ("FOOTPRINT", Align::Right),
        ("Δ FOOTPRINT", Align::Right),
        ("RECLAIMABLE", Align::Right),
        ("Δ RECLAIMABLE", Align::Right),
    ];
    if summary {
        headers.extend([("Δ VOLATILE", Align::Right), ("Δ NONVOL", Align::Right)]);
    }
    let mut table = Table::new(&headers);
    let signed = |x: &Delta| x.delta.map_or_else(|| "-".into(), |v| human_signed(v.into()));
    for row in v.types.iter().take(limit) {
        let mut cells = vec![
            escape_controls(row.region_type.clone().unwrap_or_default()),
            human_opt(row.footprint.after),
            signed(&row.footprint),
            human_opt(row.reclaimable.after),
            signed(&row.reclaimable),
        ];
        if summary {
            cells.extend([signed(&row.volatile), signed(&row.nonvol)]);
        }
        table.row(cells);
    }
    blocks.push(Block::Heading("footprint by region type (changed types):".into()));
    blocks.push(Block::Table(table));
    if v.types.len() > limit {
        blocks.push(Block::Line(format!(
            "({} more not shown; --top to change)",
            v.types.len() - limit
        )));
    }
    blocks
}

/// The columns a diff of two vmmap reports adds to the CSV (none for
/// Linux snapshots): before, after and delta of footprint and reclaimable.
pub(crate) fn csv_header(d: &Diff) -> Vec<String> {
    if d.vmmap.is_none() {
        return Vec::new();
    }
    ["footprint", "reclaimable"]
        .iter()
        .flat_map(|f| ["before", "after", "delta"].map(|s| format!("{f}_{s}")))
        .collect()
}

/// `footprint` lines: the total (key `total`) and each changed type (key
/// the region type), `figure_cells` empty figure cells, then the columns
/// of [`csv_header`].
pub(crate) fn csv_rows(d: &Diff, figure_cells: usize) -> Vec<Vec<String>> {
    let Some(v) = &d.vmmap else { return Vec::new() };
    let cell = |x: Option<u64>| x.map_or_else(String::new, |x| x.to_string());
    let total = std::iter::once(("total".to_string(), &v.total));
    let types = v.types.iter().map(|t| (t.region_type.clone().unwrap_or_default(), t));
    total
        .chain(types)
        .map(|(key, t)| {
            let status =
                if t.footprint.changed() || t.reclaimable.changed() { "changed" } else { "same" };
            let mut rec = vec![
                "footprint".to_string(),
                crate::render::table::csv_text(key),
                String::new(),
                status.to_string(),
            ];
            rec.extend(std::iter::repeat_n(String::new(), figure_cells));
            for x in [&t.footprint, &t.reclaimable] {
                rec.extend([
                    cell(x.before),
                    cell(x.after),
                    x.delta.map_or_else(String::new, |v| v.to_string()),
                ]);
            }
            rec
        })
        .collect()
}
