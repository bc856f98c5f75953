//! `serve --pages` / `export --pages` (issue 22): the exclusive figure of
//! each published row, from the pages of its processes, bounded by the
//! exporter's read guard so that a scrape stays cheap.
//!
//! The guard's rule for the page read: a process is read only when it has
//! at most `max_mappings` mappings (counted on `maps`, which stops early,
//! before any page is read) and when its resident and swapped bytes, at
//! the measured cost of the page read per GiB, fit in the time `budget`
//! (the page read of every process runs in one batch, so its cost is
//! estimated before, not timed after). A row with a process not read has
//! no exclusive figure (never a figure of part of the row).

use std::time::{Duration, Instant};

use crate::analyze::metrics::{Metrics, PagesRead};
use crate::analyze::top::group_key;
use crate::error::{PageFigure, Result};
use crate::model::guard::ReadGuard;
use crate::model::ProcMemory;
use crate::source::ProcRoot;
use crate::usecase::pages::{exact_figures, read_pages, FramesFor};

/// What the page read behind an exclusive figure costs per resident (or
/// swapped) GiB: `top --pid PID --exact` measured 57–72 ms on this
/// project's machine (docs/benchmarks.md, "Page-level reads"), rounded up.
pub(crate) const PAGE_READ_PER_GIB: Duration = Duration::from_millis(80);

const GIB: u128 = 1 << 30;

/// Whether the page read is allowed at all here: reads memtally's own
/// pages and their frames' map counts. An error says what is missing (a
/// recording: live only; no CAP_SYS_ADMIN: the frames are hidden).
pub fn probe(root: &ProcRoot) -> Result<()> {
    let me = [(std::process::id(), "memtally".to_string())];
    read_pages(root, &me, FramesFor::Shared, PageFigure::Exclusive).map(|_| ())
}

/// What the page read of `bytes` (resident and swapped) is estimated to cost.
pub(crate) fn estimated_cost(bytes: u64) -> Duration {
    let nanos = PAGE_READ_PER_GIB.as_nanos() * u128::from(bytes) / GIB;
    Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
}

/// Why the guard leaves one process's pages unread, if it does.
fn skipped(root: &ProcRoot, p: &ProcMemory, guard: ReadGuard) -> Option<Skip> {
    let bytes = p.sizes.rss.unwrap_or(0).saturating_add(p.sizes.swap.unwrap_or(0));
    if estimated_cost(bytes) > guard.budget {
        return Some(Skip::Budget);
    }
    match root.mappings_up_to(p.info.pid, guard.max_mappings) {
        Some(n) if n <= guard.max_mappings => None,
        Some(_) => Some(Skip::Mappings),
        // Gone or unreadable: its page read would fail too.
        None => Some(Skip::Unread),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Skip {
    Mappings,
    Budget,
    Unread,
}

/// The processes (indices into `processes`) each row of `m` adds up.
fn row_members(processes: &[ProcMemory], m: &Metrics) -> Vec<Vec<usize>> {
    let key_of = |p: &ProcMemory| group_key(p, m.by, &|_| String::new());
    m.rows
        .iter()
        .map(|r| match r.pid {
            Some(pid) => processes.iter().position(|p| p.info.pid == pid).into_iter().collect(),
            None => (0..processes.len())
                .filter(|&i| key_of(&processes[i]).as_ref() == Some(&r.key))
                .collect(),
        })
        .collect()
}

/// Gives each published row of `m` its exclusive figure where the guard
/// lets every one of its processes be read, and `m` what the read cost.
/// A refusal (no privilege, a recording) leaves `m` without any.
pub fn add(root: &ProcRoot, processes: &[ProcMemory], m: &mut Metrics, guard: ReadGuard) {
    let started = Instant::now();
    let members = row_members(processes, m);
    let mut stats = PagesRead::default();
    // Each process once, in the order first met; `at[i]`: its place in
    // the page read, `None` where the guard skips it.
    let mut at: Vec<Option<Option<usize>>> = vec![None; processes.len()];
    let mut procs = Vec::new();
    for &i in members.iter().flatten() {
        if at[i].is_some() {
            continue;
        }
        let p = &processes[i];
        at[i] = Some(match skipped(root, p, guard) {
            None => {
                procs.push((p.info.pid, p.info.comm.clone()));
                Some(procs.len() - 1)
            }
            Some(why) => {
                match why {
                    Skip::Mappings => stats.limited_mappings += 1,
                    Skip::Budget => stats.limited_budget += 1,
                    Skip::Unread => stats.unread += 1,
                }
                None
            }
        });
    }
    let Ok(read) = read_pages(root, &procs, FramesFor::Shared, PageFigure::Exclusive) else {
        return;
    };
    stats.read = procs.len() - read.unread.len();
    stats.unread += read.unread.len();
    // A row with a member skipped gets no group (so no figure), nor one
    // with none found (no figure of nothing passed off as 0).
    let groups: Vec<Option<Vec<usize>>> = members
        .iter()
        .map(|m| if m.is_empty() { None } else { m.iter().map(|&i| at[i].flatten()).collect() })
        .collect();
    let readable: Vec<Vec<usize>> = groups.iter().flatten().cloned().collect();
    // Swap slots are checked against the processes read, not the machine's.
    let figures = exact_figures(root, &read, &readable, false);
    let mut figures = figures.groups.into_iter();
    for (row, group) in m.rows.iter_mut().zip(&groups) {
        if group.is_some() {
            row.exclusive = figures.next().flatten().map(|e| e.bytes);
        }
    }
    stats.duration_seconds = started.elapsed().as_secs_f64();
    m.collector.duration_seconds += stats.duration_seconds;
    m.pages = Some(stats);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_is_the_measured_cost_per_gib() {
        assert_eq!(estimated_cost(1 << 30), PAGE_READ_PER_GIB);
        assert_eq!(estimated_cost(0), Duration::ZERO);
        // The default 50 ms budget reads up to 640 MiB.
        assert!(estimated_cost(640 << 20) <= Duration::from_millis(50));
        assert!(estimated_cost(641 << 20) > Duration::from_millis(50));
        assert!(estimated_cost(u64::MAX) > Duration::from_secs(1));
    }
}
