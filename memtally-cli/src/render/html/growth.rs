//! `report --diff A B`: the treemap of the later snapshot's processes
//! coloured by how much each grew (red) or shrank (green), beside the
//! growth tables of `memtally diff` (processes, categories, paths), all
//! from the one `Diff` the diff use case returns.

use std::fmt::Write as _;

use memtally_core::analyze::diff::{Change, Diff};
use memtally_core::model::Figure;

use super::esc;
use super::tree::{Kind, Node};
use crate::render::diff_columns;
use crate::render::notes::words;
use crate::render::units::{human_opt, human_signed};

/// The figures of the growth tables: `diff`'s columns (dirty and swap
/// as `diff` picks them: PSS DIRTY and SWAP PSS over several processes).
fn figures(d: &Diff) -> [(String, Figure); 4] {
    let (dirty, swap) = (diff_columns::dirty(d), diff_columns::swap(d));
    [
        (format!("Δ {}", dirty.word), dirty.figure),
        ("Δ PSS".into(), Figure::Pss),
        ("Δ RSS".into(), Figure::Rss),
        (format!("Δ {}", swap.word), swap.figure),
    ]
}

/// The later side's figure, else the earlier's (a process that exited).
fn area(c: &Change, f: Figure) -> u64 {
    c.after.as_ref().or(c.before.as_ref()).and_then(|s| s.figure(f)).unwrap_or(0)
}

/// The growth treemap's hierarchy: every process of either snapshot,
/// area its PSS (after; before for one that is gone), `delta` its PSS
/// change.
pub fn tree(diff: &Diff, pss: Figure) -> Node {
    let children: Vec<Node> = diff
        .processes
        .iter()
        .map(|c| {
            let label = match (&c.pid, c.after.is_none(), c.before.is_none()) {
                (_, true, _) => format!("{} (gone)", c.label),
                (_, _, true) => format!("{} (new)", c.label),
                _ => c.label.clone(),
            };
            Node {
                delta: c.delta(pss),
                pid: c.pid,
                ..Node::new(Kind::Process, label, area(c, pss))
            }
        })
        .collect();
    let t = &diff.totals;
    let all = Node::new(Kind::Machine, "all processes".into(), area(t, pss));
    Node { delta: t.delta(pss), children, ..all }
}

fn delta_cell(c: &Change, f: Figure) -> String {
    match c.delta(f) {
        Some(d) => format!(r#"<td class="n" data-v="{d}">{}</td>"#, human_signed(d)),
        None => r#"<td class="n">-</td>"#.into(),
    }
}

/// One growth table, the first `limit` rows in `diff`'s order.
pub fn table(d: &Diff, id: &str, title: &str, rows: &[Change], limit: usize) -> String {
    let mut s = format!(r#"<h3>{title}</h3>"#);
    if rows.is_empty() {
        s.push_str("<p>No change.</p>");
        return s;
    }
    let _ = write!(s, r#"<table id="{id}" class="sortable"><thead><tr><th>Name</th>"#);
    let figures = figures(d);
    for (h, _) in &figures {
        let _ = write!(s, r#"<th class="n">{h}</th>"#);
    }
    s.push_str(r#"<th class="n">PSS before</th><th class="n">PSS after</th></tr></thead><tbody>"#);
    for c in rows.iter().take(limit) {
        let pid = c.pid.map(|p| format!(r#" data-pid="{p}""#)).unwrap_or_default();
        let _ = write!(s, r#"<tr{pid}><td><code>{}</code></td>"#, esc(&c.label));
        for &(_, f) in &figures {
            s.push_str(&delta_cell(c, f));
        }
        let side =
            |x: &Option<memtally_core::model::Sizes>| human_opt(x.as_ref().and_then(|s| s.pss));
        let _ = write!(
            s,
            r#"<td class="n">{}</td><td class="n">{}</td></tr>"#,
            side(&c.before),
            side(&c.after)
        );
    }
    s.push_str("</tbody></table>");
    if rows.len() > limit {
        let _ =
            write!(s, "<p>and {} more (memtally diff --top N lists them).</p>", rows.len() - limit);
    }
    s
}

/// The growth section: totals, treemap, tables, the diff's own notes.
pub fn section(diff: &Diff, treemap: &str) -> String {
    let t = &diff.totals;
    let over = diff.seconds.map(|s| format!(" over {s:.0} s")).unwrap_or_default();
    let mut s = format!(
        r#"<section id="growth"><h2>What grew{over}</h2><p>Every process: PSS {} → {} ({}), {} {}. Area: PSS (after; before for a process that is gone); colour: its PSS growth, red grew, green shrank, grey unchanged.</p><ul class="legend"><li><span class="sw s-dirty"></span>grew</li><li><span class="sw s-unk"></span>unchanged</li><li><span class="sw s-grew-not"></span>shrank</li></ul>"#,
        human_opt(t.before.as_ref().and_then(|s| s.pss)),
        human_opt(t.after.as_ref().and_then(|s| s.pss)),
        t.delta(Figure::Pss).map_or_else(|| "-".into(), human_signed),
        diff_columns::dirty(diff).word,
        t.delta(diff_columns::dirty(diff).figure).map_or_else(|| "-".into(), human_signed),
    );
    s.push_str(treemap);
    s.push_str(&table(diff, "growth-processes", "Processes", &diff.processes, 50));
    s.push_str(&table(diff, "growth-categories", "Categories", &diff.categories, 30));
    s.push_str(&table(diff, "growth-paths", "Paths", &diff.paths, 30));
    for n in words(&diff.notes) {
        let _ = write!(s, r#"<p class="note">{}</p>"#, esc(&n));
    }
    s.push_str("</section>");
    s
}
