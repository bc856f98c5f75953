//! The process level's rows: `top`'s rows (every process, or programs,
//! users, cgroups, trees), and the narrowing the explorer adds (a group
//! entered, the `/` filter).

use std::rc::Rc;

use memtally_core::analyze::top::Top;
use memtally_core::analyze::top::{group_key, TopBy};
use memtally_core::model::Sizes;

use crate::render::table::escape_controls;

/// One row as shown.
#[derive(Debug, Clone)]
pub struct ProcRow {
    /// `top`'s key: the PID, program, user or cgroup.
    pub label: String,
    pub pid: Option<u32>,
    pub user: String,
    pub processes: usize,
    pub without_pss: usize,
    pub depth: usize,
    pub command: String,
    pub sizes: Sizes,
    /// The process exited; these are its last figures.
    pub gone: bool,
}

/// What the columns take from every row: the figure columns' and GROW/m's
/// widths, and what tells each command apart. Kept for as long as the
/// rows are the same rows: at 50,000 processes working them out again
/// each frame (every figure formatted, every command's options compared)
/// made a key wait half a second.
pub struct Columns {
    pub rows: Rc<Vec<ProcRow>>,
    pub figure_widths: Vec<u16>,
    pub grow_width: u16,
    pub distinguishing: Vec<Option<String>>,
}

/// What tells each row's command apart from its program's others.
pub fn distinguishing(rows: &[ProcRow]) -> Vec<Option<String>> {
    let commands: Vec<String> = rows.iter().map(|r| r.command.clone()).collect();
    crate::render::width::distinguishing(&commands)
}

/// `top`'s rows, in its order, before filtering.
pub fn base_rows(top: &Top) -> Vec<ProcRow> {
    let per_process = matches!(top.report.by, TopBy::Process | TopBy::Tree);
    top.report
        .rows
        .iter()
        .map(|r| {
            let p = r.process.map(|i| &top.scan.processes[i]);
            ProcRow {
                label: r.key.clone(),
                pid: p.filter(|_| per_process).map(|p| p.info.pid),
                user: p.map(|p| top.users.name(p.info.uid)).unwrap_or_default(),
                processes: r.processes,
                without_pss: r.without_pss,
                depth: r.depth,
                command: p.map(|p| escape_controls(p.info.command())).unwrap_or_default(),
                sizes: r.sizes.clone(),
                gone: false,
            }
        })
        .collect()
}

/// Keeps the rows of the processes in the group `key` of grouping `by`
/// (a program, user or cgroup entered from its row).
pub fn retain_group(rows: &mut Vec<ProcRow>, top: &Top, by: TopBy, key: &str) {
    let users = &top.users;
    let of = |pid: u32| top.scan.processes.iter().find(|p| p.info.pid == pid);
    rows.retain(|r| {
        r.pid
            .and_then(of)
            .is_some_and(|p| group_key(p, by, &|u| users.name(u)).is_none_or(|k| k == key))
    });
}

/// Keeps the rows `filter` matches: a PID exactly; otherwise a name
/// anywhere in the command or key, in any case.
pub fn retain_matching(rows: &mut Vec<ProcRow>, filter: &str) {
    if filter.is_empty() {
        return;
    }
    let needle = filter.to_lowercase();
    let pid: Option<u32> = filter.trim().parse().ok();
    rows.retain(|r| match (pid, r.pid) {
        (Some(want), Some(pid)) => pid == want,
        _ => r.label.to_lowercase().contains(&needle) || r.command.to_lowercase().contains(&needle),
    });
}
