//! The `x` key: the exclusive and working-set columns of the rows the
//! user pins (issue 22 item 7). A pinned row (a process, or a group and
//! its members) gets, at each refresh, what `top --exact` calls EXCLUSIVE
//! (the bytes no process outside the row maps; page frames, so root or
//! CAP_SYS_ADMIN) and what `wss` measures over the refresh interval:
//! TOUCHED and the working set. The working set resets the pinned
//! processes' referenced bits (`clear_refs`), and only theirs, only while
//! a row is pinned: the footer says so once, as `wss` does on stderr.
//! The reads run on the reads' thread ([`read`]); the rows only show them.

use std::collections::HashMap;
use std::time::Instant;

use memtally_core::analyze::select::Selection;
use memtally_core::error::PageFigure;
use memtally_core::model::wss::WssChoice;
use memtally_core::model::Figure;
use memtally_core::source::ProcRoot;
use memtally_core::usecase::pages::{exact_figures, read_pages, FramesFor};
use memtally_core::usecase::wss::Wss;

use crate::render::errors::Worded;

/// A pinned row: its key as the list shows it (a PID, a program, a user,
/// a cgroup) and the processes it stands for (PID, short name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    pub key: String,
    pub procs: Vec<(u32, String)>,
}

/// One pinned row's figures; `None` until read (or when not readable).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PinFigures {
    pub exclusive: Option<u64>,
    pub touched: Option<u64>,
    pub working_set: Option<u64>,
}

/// One read of the pinned rows.
#[derive(Debug, Default)]
pub struct PinsRead {
    /// Each pin's figures, in the order asked.
    pub figures: Vec<PinFigures>,
    /// Why the exclusive figures could not be read, as worded for the user.
    pub exclusive_error: Option<String>,
    /// Why the working set could not be measured.
    pub wss_error: Option<String>,
    /// The referenced bits of this many processes were reset for the
    /// first time (a new set of pinned processes): the footer's warning.
    pub reset_first: Option<usize>,
}

/// The working-set measurement that runs from one read to the next, on
/// the reads' thread.
#[derive(Default)]
pub struct Measuring {
    wss: Option<Wss>,
    pids: Vec<u32>,
    since: Option<Instant>,
}

/// Reads the pinned rows' figures: exclusive per row, and the working set
/// since the last read (then resets for the next). A new set of pinned
/// processes starts a new measurement, with no working set yet.
pub fn read(root: &ProcRoot, pins: &[Pin], m: &mut Measuring) -> PinsRead {
    let mut procs: Vec<(u32, String)> = pins.iter().flat_map(|p| p.procs.clone()).collect();
    procs.sort();
    procs.dedup_by_key(|p| p.0);
    let pids: Vec<u32> = procs.iter().map(|p| p.0).collect();
    let mut out =
        PinsRead { figures: vec![PinFigures::default(); pins.len()], ..PinsRead::default() };
    if pids.is_empty() {
        *m = Measuring::default();
        return out;
    }
    match read_pages(root, &procs, FramesFor::Shared, PageFigure::Exclusive) {
        Ok(read) => {
            let index: HashMap<u32, usize> =
                pids.iter().enumerate().map(|(i, &p)| (p, i)).collect();
            let members: Vec<Vec<usize>> =
                pins.iter().map(|p| p.procs.iter().map(|(pid, _)| index[pid]).collect()).collect();
            let exact = exact_figures(root, &read, &members, false);
            for (f, e) in out.figures.iter_mut().zip(exact.groups) {
                f.exclusive = e.map(|e| e.bytes);
            }
        }
        Err(e) => out.exclusive_error = Some(Worded(&e).to_string()),
    }
    working_set(root, pins, &pids, m, &mut out);
    out
}

fn working_set(root: &ProcRoot, pins: &[Pin], pids: &[u32], m: &mut Measuring, out: &mut PinsRead) {
    if m.pids != pids || m.wss.is_none() {
        *m = Measuring { pids: pids.to_vec(), ..Measuring::default() };
        let sel = Selection::of_pids(pids.to_vec());
        let held = Wss::hold(root, &sel, WssChoice::Auto).and_then(|mut w| {
            w.reset()?;
            Ok(w)
        });
        match held {
            Ok(w) => {
                out.reset_first = Some(w.len());
                m.wss = Some(w);
                m.since = Some(Instant::now());
            }
            Err(e) => out.wss_error = Some(Worded(&e).to_string()),
        }
        return;
    }
    let Some(w) = m.wss.as_mut() else { return };
    let secs = m.since.map_or(0.0, |t| t.elapsed().as_secs_f64());
    let report = w.read(secs);
    if let Err(e) = w.reset() {
        out.wss_error = Some(Worded(&e).to_string());
        m.wss = None;
    }
    m.since = Some(Instant::now());
    for (f, pin) in out.figures.iter_mut().zip(pins) {
        let mine: Vec<_> = report
            .processes
            .iter()
            .filter(|p| pin.procs.iter().any(|(pid, _)| *pid == p.pid))
            .collect();
        if mine.is_empty() {
            continue;
        }
        let sum = |fig: Figure| mine.iter().map(|p| p.totals.figure(fig)).sum::<Option<u64>>();
        f.touched = sum(Figure::Touched);
        f.working_set = sum(Figure::WorkingSet);
    }
}

/// The footer's warning, once per new set of pinned processes (worded as
/// `wss` and `watch --wss` say it on stderr).
pub fn reset_warning(processes: usize) -> String {
    format!(
        "x resets the referenced bits of {} each refresh (clear_refs): the kernel's reclaim may choose differently; no other process is touched",
        crate::render::units::plural(processes, "pinned process", "pinned processes")
    )
}
