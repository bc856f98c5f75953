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
