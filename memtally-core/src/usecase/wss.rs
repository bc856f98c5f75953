//! `wss`: the working set of a selection over an interval. Each selected
//! process's directory is held, its referenced bits reset (`clear_refs`),
//! and after the interval its smaps is read: `Referenced` is what was
//! touched meanwhile. Only selected processes are ever reset; a process
//! that exits during the interval is noted, not an error.
//!
//! The caller waits out the interval (so that a signal can end the wait):
//! [`Wss::hold`], then [`Wss::reset`], wait, [`Wss::read`]; for a series,
//! reset and read again.

use std::time::Instant;

use crate::analyze::select::Selection;
use crate::analyze::wss::{WssFold, WssProcess, WssReport};
use crate::error::{Error, LiveOnly, Result};
use crate::model::pages::{ProcPages, PAGE};
use crate::model::wss::{IdleTracking, WssChoice, WssMethod};
use crate::model::{Flow, Needs, Note, ProcInfo, Region, RegionSink};
use crate::source::pages::pagemap;
use crate::source::parse::stat::{self, Change, Stamp};
use crate::source::parse::status;
use crate::source::proc_root::RegionsFile;
use crate::source::wss::clear_refs::{self, Held};
use crate::source::wss::idle;
use crate::source::{stamp, ProcRoot};
use crate::usecase::select::select;

/// One selected process, followed by its stamp. No descriptor is kept
/// across the interval (a selection of thousands of processes must not
/// run out of them): each reset holds the process's directory, checks
/// through it that its stamp is the one taken at selection, and resets
/// through it, so a PID reused meanwhile is never reset.
#[derive(Debug)]
struct Tracked {
    info: ProcInfo,
    /// Its stamp when selected: the process reset and read must be this one.
    stamp: Stamp,
    /// The middle of its last reset.
    reset_at: Option<Instant>,
}

/// A selection being measured.
#[derive(Debug)]
pub struct Wss {
    root: ProcRoot,
    tracked: Vec<Tracked>,
    idle_tracking: IdleTracking,
    /// The bitmap, where idle page tracking is the method.
    bitmap: Option<idle::Bitmap>,
    /// What could not be held or reset (not measured).
    notes: Vec<Note>,
}

impl Wss {
    /// Selects and holds the processes, resetting nothing yet, for the
    /// method `choice` picks ([`WssChoice::Auto`]: idle page tracking
    /// where it can run, else the referenced bits). A recorded tree is refused
    /// ([`Error::LiveOnly`]); idle tracking asked for where it cannot run
    /// is [`Error::NoIdleTracking`]; a selection none of whose processes
    /// could be held is the first reason.
    pub fn hold(root: &ProcRoot, sel: &Selection, choice: WssChoice) -> Result<Wss> {
        if !root.is_procfs() {
            return Err(Error::LiveOnly {
                root: root.path().to_path_buf(),
                what: LiveOnly::WorkingSet,
            });
        }
        let (idle_tracking, bitmap) = pick(choice)?;
        let selected = select(root, sel, Needs { cmdline: true, ..Needs::default() })?;
        selected.require_any(root, sel)?;
        let mut tracked = Vec::new();
        let mut vanished = selected.vanished;
        let mut failed: Vec<Error> = Vec::new();
        let idle = bitmap.is_some();
        for info in selected.infos {
            match hold_one(root, info, idle) {
                Ok(Some(t)) => tracked.push(t),
                Ok(None) => vanished += 1,
                Err(e) => failed.push(e),
            }
        }
        if tracked.is_empty() {
            return Err(failed.into_iter().next().unwrap_or_else(|| {
                Error::NotFound(format!(
                    "no selected process could be measured ({vanished} exited before it was reset)"
                ))
            }));
        }
        let mut notes = not_measured(&failed);
        if vanished > 0 {
            notes.push(Note::Exited { count: vanished });
        }
        Ok(Wss { root: root.clone(), tracked, idle_tracking, bitmap, notes })
    }

    /// How many processes are held (to be reset and read).
    pub fn len(&self) -> usize {
        self.tracked.len()
    }

    /// Whether no process is left to measure.
    pub fn is_empty(&self) -> bool {
        self.tracked.is_empty()
    }

    /// The method that runs.
    pub fn method(&self) -> WssMethod {
        match self.bitmap {
            Some(_) => WssMethod::IdlePages,
            None => WssMethod::ClearRefs,
        }
    }

    /// Whether the kernel offers idle page tracking.
    pub fn idle_tracking(&self) -> IdleTracking {
        self.idle_tracking
    }

    /// Resets the referenced bits of every held process. One that has
    /// exited is dropped and noted at the next read; so is one that now
    /// refuses (it changed its credentials), with why. An error only when
    /// no process is left to measure.
    pub fn reset(&mut self) -> Result<()> {
        let mut first_error = None;
        let mut kept = Vec::new();
        for mut t in std::mem::take(&mut self.tracked) {
            let before = Instant::now();
            match reset_one(&self.root, &t, self.bitmap.as_ref()) {
                Ok(true) => {
                    t.reset_at = Some(before + before.elapsed() / 2);
                    kept.push(t);
                }
                Ok(false) => self
                    .notes
                    .push(Note::ExitedDuringInterval { pid: t.info.pid, comm: t.info.comm }),
                Err(e) => {
                    self.notes.push(Note::Failed { pid: t.info.pid, why: e.to_string() });
                    first_error.get_or_insert(e);
                }
            }
        }
        self.tracked = kept;
        match first_error {
            Some(e) if self.tracked.is_empty() => Err(e),
            _ => Ok(()),
        }
    }

    /// Reads every held process's smaps: the figures since its last
    /// reset. Processes that exited (or ran a new program) meanwhile are
    /// noted and no longer held.
    pub fn read(&mut self, interval_s: f64) -> WssReport {
        let mut processes = Vec::new();
        let mut notes = std::mem::take(&mut self.notes);
        let mut spread = (0u64, 0usize);
        let mut kept = Vec::new();
        for t in self.tracked.drain(..) {
            match read_one(&self.root, &t, self.bitmap.as_ref()) {
                Ok(Some((p, s))) => {
                    spread.0 += s.0;
                    spread.1 += s.1;
                    processes.push(p);
                    kept.push(t);
                }
                Ok(None) => {
                    notes.push(Note::ExitedDuringInterval { pid: t.info.pid, comm: t.info.comm })
                }
                Err(e) => {
                    notes.push(Note::Failed { pid: t.info.pid, why: e.to_string() });
                    kept.push(t);
                }
            }
        }
        self.tracked = kept;
        if spread.0 > 0 {
            notes.push(Note::WorkingSetSpread { bytes: spread.0, regions: spread.1 });
        }
        WssReport::new(self.method(), self.idle_tracking, interval_s, processes, notes)
    }
}

/// Whether `e` says the process is gone: its directory, or a file in the
/// held directory of a process that has exited (its PID maybe taken).
fn gone(e: &Error) -> bool {
    match e {
        Error::NoSuchProcess { .. } | Error::Exited { .. } => true,
        Error::Io { source, .. } => source.kind() == std::io::ErrorKind::NotFound,
        _ => false,
    }
}

/// The stamp of the process whose directory is held.
fn stamp_of(root: &ProcRoot, pid: u32, held: &Held) -> Result<Stamp> {
    let raw = held.read(root, "stat")?;
    stat::parse(&raw)
        .map_err(|e| Error::Parse { path: root.pid_file(pid, "stat"), message: e.to_string() })
}

/// The method `choice` gives on this kernel, as the report tells it, and
/// the bitmap where idle page tracking is the one.
fn pick(choice: WssChoice) -> Result<(IdleTracking, Option<idle::Bitmap>)> {
    let found = idle::detect();
    let open = || idle::Bitmap::open().ok();
    match (choice, found) {
        (WssChoice::Referenced, IdleTracking::Absent) => Ok((IdleTracking::Absent, None)),
        (WssChoice::Referenced, _) => Ok((IdleTracking::PresentUnused, None)),
        (WssChoice::Auto, IdleTracking::Used) => match open() {
            Some(b) => Ok((IdleTracking::Used, Some(b))),
            None => Ok((IdleTracking::PresentUnused, None)),
        },
        (WssChoice::Auto, found) => Ok((found, None)),
        (WssChoice::Idle, IdleTracking::Absent) => Err(Error::NoIdleTracking {
            why: format!(
                "this kernel has no {} (it is built without CONFIG_IDLE_PAGE_TRACKING)",
                idle::BITMAP
            ),
            denied: false,
        }),
        (WssChoice::Idle, _) => match idle::Bitmap::open() {
            Ok(b) => Ok((IdleTracking::Used, Some(b))),
            Err(e) => Err(Error::NoIdleTracking {
                why: format!(
                    "{}: {e} (it is root's, and the frames come from pagemap)",
                    idle::BITMAP
                ),
                denied: e.kind() == std::io::ErrorKind::PermissionDenied,
            }),
        },
    }
}

/// The frames of `pid`'s resident pages, sorted, and its pages.
fn frames_of(root: &ProcRoot, t: &Tracked) -> Result<(Vec<u64>, ProcPages)> {
    let pages = pagemap::read(root, t.info.pid, &t.info.comm)?;
    if pages.frames_hidden {
        return Err(Error::NoIdleTracking {
            why: "the frame numbers in pagemap read as 0 (they take CAP_SYS_ADMIN)".into(),
            denied: true,
        });
    }
    let mut pfns: Vec<u64> = pages.present.iter().map(|p| p.pfn).collect();
    pfns.sort_unstable();
    pfns.dedup();
    Ok((pfns, pages))
}

/// Resets one process, if it is still the one selected: `false` when it
/// is gone (exited, its PID reused, or it ran a new program). With the
/// bitmap, the frames of its resident pages are marked idle (its
/// referenced bits are left alone); else its referenced bits are reset.
fn reset_one(root: &ProcRoot, t: &Tracked, bitmap: Option<&idle::Bitmap>) -> Result<bool> {
    let pid = t.info.pid;
    let step = || -> Result<bool> {
        let held = clear_refs::hold(root, pid)?;
        if t.stamp.compare(&stamp_of(root, pid, &held)?) != Change::Same {
            return Ok(false);
        }
        match bitmap {
            Some(b) => {
                let (pfns, _) = frames_of(root, t)?;
                b.mark(&pfns).map_err(|e| Error::io(idle::BITMAP, e))?;
            }
            None => held.reset(root)?,
        }
        Ok(true)
    };
    match step() {
        Err(e) if gone(&e) => Ok(false),
        r => r,
    }
}

/// Checks one selected process; `None` when it is gone, or its PID now
/// names another process (its short name changed since it was selected).
fn hold_one(root: &ProcRoot, info: ProcInfo, idle: bool) -> Result<Option<Tracked>> {
    match check_one(root, info, idle) {
        Err(e) if gone(&e) => Ok(None),
        r => r,
    }
}

fn check_one(root: &ProcRoot, info: ProcInfo, idle: bool) -> Result<Option<Tracked>> {
    let held = clear_refs::hold(root, info.pid)?;
    let comm = held.read(root, "comm")?;
    if String::from_utf8_lossy(&comm).trim_end_matches('\n') != info.comm {
        return Ok(None);
    }
    // Refused now rather than after other processes were reset (idle
    // tracking writes no clear_refs; its bitmap was opened already).
    if !idle {
        held.check(root)?;
    }
    let stamp = stamp_of(root, info.pid, &held)?;
    // The held process is the one selected: the same start time and
    // owner (a PID another user's process took is never reset).
    let uid =
        held.read(root, "status").ok().and_then(|b| status::parse(&b).ok()).and_then(|s| s.uid);
    if !stamp::same_life(&info, Some(&stamp), uid) {
        return Ok(None);
    }
    Ok(Some(Tracked { info, stamp, reset_at: None }))
}

/// One process's figures since its reset, and its working set's spread;
/// `None` when it exited or ran a new program meanwhile.
fn read_one(
    root: &ProcRoot,
    t: &Tracked,
    bitmap: Option<&idle::Bitmap>,
) -> Result<Option<(WssProcess, (u64, usize))>> {
    let pid = t.info.pid;
    let start = Instant::now();
    let mut fold = WssFold::default();
    // With idle tracking, the pages touched are those whose frame is no
    // longer idle (or was not there to mark: faulted in since); each
    // mapping's Referenced is replaced by them before it is figured.
    let touched = match bitmap {
        Some(b) => match touched_pages(root, t, b) {
            Ok(v) => Some(v),
            Err(Error::NoSuchProcess { .. } | Error::Exited { .. } | Error::Changed { .. }) => {
                return Ok(None)
            }
            Err(e) => return Err(e),
        },
        None => None,
    };
    // smaps alone: its figures are all `wss` needs, and the rollup a
    // show reads beside it would walk the page tables a second time. The
    // stamp below tells an smaps an exit cut short.
    let streamed = match &touched {
        Some(addrs) => {
            root.read_regions(pid, RegionsFile::Smaps, Touched { addrs, fold: &mut fold }).map(drop)
        }
        None => root.read_regions(pid, RegionsFile::Smaps, &mut fold).map(drop),
    };
    match streamed {
        Ok(()) => {}
        Err(Error::NoSuchProcess { .. } | Error::Exited { .. } | Error::Changed { .. }) => {
            return Ok(None)
        }
        Err(e) => return Err(e),
    }
    let read_mid = start + start.elapsed() / 2;
    // The process read must be the one reset: same life, same program.
    match stamp::check(root, pid, &t.info.comm, Some(&t.stamp)) {
        Ok(Change::Same) => {}
        Ok(_) | Err(Error::Exited { .. } | Error::NoSuchProcess { .. }) => return Ok(None),
        Err(e) => return Err(e),
    }
    let measured_s =
        t.reset_at.map_or(0.0, |r| read_mid.saturating_duration_since(r).as_secs_f64());
    let process = WssProcess::new(pid, t.info.comm.clone(), t.info.command(), measured_s, &fold);
    Ok(Some((process, fold.spread)))
}

/// The addresses of `t`'s resident pages touched since their frames were
/// marked idle, in order.
fn touched_pages(root: &ProcRoot, t: &Tracked, bitmap: &idle::Bitmap) -> Result<Vec<u64>> {
    let (pfns, pages) = frames_of(root, t)?;
    let idle = bitmap.idle(&pfns).map_err(|e| Error::io(idle::BITMAP, e))?;
    let still = |pfn: u64| pfns.binary_search(&pfn).is_ok_and(|i| idle[i]);
    Ok(pages.present.iter().filter(|p| !still(p.pfn)).map(|p| p.addr).collect())
}

/// Sets each mapping's Referenced to its pages idle tracking found
/// touched, then hands it on.
struct Touched<'a> {
    addrs: &'a [u64],
    fold: &'a mut WssFold,
}

impl RegionSink for Touched<'_> {
    fn region(&mut self, _line: usize, region: &Region) -> Flow {
        let touched = match (region.start, region.end) {
            (Some(start), Some(end)) => {
                let from = self.addrs.partition_point(|&a| a < start);
                let to = self.addrs.partition_point(|&a| a < end);
                Some((to - from) as u64 * PAGE)
            }
            _ => None,
        };
        self.fold.add(region, touched);
        Flow::Continue
    }
}

/// The notes for processes that could not be held.
fn not_measured(failed: &[Error]) -> Vec<Note> {
    let mut notes = Vec::new();
    let refused =
        |e: &&Error| matches!(e, Error::PermissionDenied { .. } | Error::ResetDenied { .. });
    let denied = failed.iter().filter(refused).count();
    if denied > 0 {
        let hint = "resetting a process's referenced bits takes its own user or root".into();
        notes.push(Note::Denied { count: denied, hint });
    }
    let mut other = failed.iter().filter(|e| !refused(e));
    if let Some(first) = other.next() {
        notes.push(Note::Unreadable { count: 1 + other.count(), first: first.to_string() });
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::usecase::select::SelectOptions;

    /// A recorded tree has no referenced bits to reset: refused before
    /// anything is selected or held.
    #[test]
    fn a_recorded_tree_is_live_only() {
        let Some(dir) = crate::testdata::testdata("fixtures/linux/python3-mmap/proc") else {
            return;
        };
        let root = ProcRoot::new(&dir);
        let sel = SelectOptions::default().with_pids(vec![11364]).resolve().unwrap();
        match Wss::hold(&root, &sel, WssChoice::Auto) {
            Err(Error::LiveOnly { root, what: LiveOnly::WorkingSet }) => assert_eq!(root, dir),
            other => panic!("expected LiveOnly, got {other:?}"),
        }
    }

    /// A held PID that names another process than the one selected (a
    /// later start time, another owner: what a PID reused meanwhile
    /// shows) is not tracked, so never reset; the selected one is.
    #[test]
    fn a_pid_now_naming_another_process_is_not_held() {
        let root = ProcRoot::live();
        let Some(mut child) = crate::source::stamp::sleeping_child() else {
            eprintln!("skipped: cannot start sleep");
            return;
        };
        let sel = SelectOptions::default().with_pids(vec![child.id()]).resolve().unwrap();
        let info = select(&root, &sel, Needs::default()).unwrap().infos.remove(0);
        let raw = root.read(child.id(), "stat").unwrap();
        assert_eq!(info.start_time, Some(stat::parse(&raw).unwrap().start_time));
        assert!(check_one(&root, info.clone(), true).unwrap().is_some());
        let later = ProcInfo { start_time: info.start_time.map(|t| t + 1), ..info.clone() };
        assert!(check_one(&root, later, true).unwrap().is_none());
        let nobody = ProcInfo { uid: info.uid.map(|u| u ^ 1), ..info };
        assert!(check_one(&root, nobody, true).unwrap().is_none());
        let _ = child.kill();
        let _ = child.wait();
    }

    /// This very process, held, reset and read: its figures add up
    /// (touched + cold = resident) and nothing is noted.
    #[test]
    fn its_own_process_reads_back_whole() {
        let root = ProcRoot::live();
        let me = std::process::id();
        let sel = SelectOptions::default().with_pids(vec![me]).resolve().unwrap();
        let mut wss = Wss::hold(&root, &sel, WssChoice::Auto).unwrap();
        assert_eq!(wss.len(), 1);
        wss.reset().unwrap();
        let report = wss.read(0.0);
        assert!(
            report.notes.iter().all(|n| matches!(
                n,
                Note::WorkingSetSpread { .. } | Note::TouchedHugePages { .. }
            )),
            "{:?}",
            report.notes
        );
        let t = &report.processes[0].totals;
        assert_eq!(t.touched.unwrap() + t.cold.unwrap(), t.rss.unwrap());
        assert!(t.working_set.unwrap() >= t.dirty().unwrap());
    }
}
