//! The exclusive part of a diff of two `snapshot --exact` files: what the
//! selection and each process give back, before and after (docs/json.md,
//! `diff`).

use serde::Serialize;

use memtally_core::analyze::diff::Diff;
use memtally_core::analyze::diff_exact::{ExactChange, ExactDiff};
use memtally_core::model::pages::Exclusive;
use memtally_core::model::{Named, Status};

use crate::render::blocks::Block;
use crate::render::table::{escape_controls, Align, Table};
use crate::render::units::{human, human_signed};

fn signed(d: Option<i128>) -> String {
    d.map_or_else(|| "-".into(), human_signed)
}

fn side(present: bool, e: &Option<Exclusive>) -> String {
    match (present, e) {
        (false, _) => "·".into(),
        (true, Some(e)) => human(e.bytes),
        (true, None) => "-".into(),
    }
}

/// The selection's change on one line, then a table of the processes
/// whose exclusive figure moved.
pub(crate) fn exact_changes(d: &Diff, limit: usize) -> Vec<Block> {
    let Some(x) = &d.exact else { return Vec::new() };
    let s = &x.selection;
    let mut blocks = vec![
        Block::Blank,
        Block::Line(format!(
            "exclusive (what ending them gives back): selection {} ({} → {}), anonymous {}, swap {}, shared memory apart {}",
            signed(s.delta()),
            side(true, &s.before),
            side(true, &s.after),
            signed(s.delta_of(|e| e.anon)),
            signed(s.delta_of(|e| e.swap)),
            signed(s.delta_of(|e| e.shmem)),
        )),
    ];
    if x.processes.is_empty() {
        blocks.push(Block::Line("exclusive per process: no change".into()));
        return blocks;
    }
    let mut t = Table::new(&[
        ("Δ EXCLUSIVE", Align::Right),
        ("Δ ANON", Align::Right),
        ("Δ SWAP", Align::Right),
        ("EXCLUSIVE BEFORE → AFTER", Align::Right),
        ("PROCESS", Align::Left),
    ]);
    for c in x.processes.iter().take(limit) {
        let mark = match c.status() {
            Status::Appeared => " (new)",
            Status::Vanished => " (gone)",
            Status::Changed => "",
        };
        let pid = c.pid.map_or_else(String::new, |p| format!("{p} "));
        t.row(vec![
            signed(c.delta()),
            signed(c.delta_of(|e| e.anon)),
            signed(c.delta_of(|e| e.swap)),
            format!("{} → {}", side(c.present.0, &c.before), side(c.present.1, &c.after)),
            escape_controls(format!("{pid}{}{mark}", c.label)),
        ]);
    }
    blocks.push(Block::Table(t));
    if x.processes.len() > limit {
        blocks.push(Block::Line(format!(
            "({} more not shown; --top to change)",
            x.processes.len() - limit
        )));
    }
    blocks
}

/// `exact` in the diff's JSON: the selection and each process.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(crate) struct ExactDiffJson<'a> {
    selection: ExactChangeJson<'a>,
    processes: Vec<ExactChangeJson<'a>>,
}

/// One figure before and after (`null` where the side lacks it) and the
/// signed change of each of its parts.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct ExactChangeJson<'a> {
    /// The process; `null` for the selection.
    pid: Option<u32>,
    command: &'a str,
    status: &'static str,
    before: Option<&'a Exclusive>,
    after: Option<&'a Exclusive>,
    delta: ExactDeltaJson,
}

/// Signed bytes, `null` where a side was read without a figure.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct ExactDeltaJson {
    exclusive: Option<i64>,
    anon: Option<i64>,
    swap: Option<i64>,
    shmem: Option<i64>,
}

impl<'a> ExactChangeJson<'a> {
    fn of(c: &'a ExactChange) -> ExactChangeJson<'a> {
        let d = |v: Option<i128>| v.map(|v| v as i64);
        ExactChangeJson {
            pid: c.pid,
            command: &c.label,
            status: c.status().name(),
            before: c.before.as_ref(),
            after: c.after.as_ref(),
            delta: ExactDeltaJson {
                exclusive: d(c.delta()),
                anon: d(c.delta_of(|e| e.anon)),
                swap: d(c.delta_of(|e| e.swap)),
                shmem: d(c.delta_of(|e| e.shmem)),
            },
        }
    }
}

impl<'a> ExactDiffJson<'a> {
    pub(crate) fn of(x: &'a ExactDiff) -> ExactDiffJson<'a> {
        ExactDiffJson {
            selection: ExactChangeJson::of(&x.selection),
            processes: x.processes.iter().map(ExactChangeJson::of).collect(),
        }
    }
}
