//! Reads a selection, the one way every use case does: select, refuse a
//! narrowed selection that found nothing, read (every region, or the
//! cheap rollups), count what exited meanwhile, and refuse a read that
//! got nothing. What could not be read is kept, to be noted.

use crate::analyze::select::Selection;
use crate::error::{Error, Result, Unmatched};
use crate::model::{Needs, Note, ProcInfo, ProcMemory, Process, Scan, SizeSource, Sizes};
use crate::source::libproc::{self, BsdInfo, Rusage, Unread};
use crate::source::{scan, ProcRoot, ReadPlan};
use crate::usecase::select::{require_read, select, Selected};
use crate::usecase::Progress;

/// The processes read in full, and what happened to the rest.
#[derive(Debug, Default)]
pub(crate) struct ReadProcesses {
    pub processes: Vec<Process>,
    /// Exited (or became zombies) before they could be read, listed or not.
    pub vanished: usize,
    /// Kernel threads: no memory map.
    pub kernel_threads: usize,
    /// Why the others could not be read (permission denied, bad input).
    pub failed: Vec<Error>,
}

/// The selection, each process read with all its regions: an error when a
/// narrowed selection finds nothing, or nothing of it could be read.
pub(crate) fn read_full(
    root: &ProcRoot,
    sel: &Selection,
    progress: &dyn Progress,
) -> Result<(Selected, ReadProcesses)> {
    let selected = select(root, sel, Needs::default())?;
    selected.require_any(root, sel)?;
    let mut read = ReadProcesses { vanished: selected.vanished, ..Default::default() };
    progress.start("reading processes", selected.infos.len());
    for info in &selected.infos {
        match read_whole(root, info.pid) {
            Ok(p) => read.processes.push(p),
            Err(e) => read.missed(e),
        }
        progress.step();
    }
    progress.finish();
    Ok((selected, read.require_some()?))
}

/// One process read on its own (with the plan's threads and rollup), its
/// regions kept; a read an exec spoiled is read once more.
pub(crate) fn read_whole(root: &ProcRoot, pid: u32) -> Result<Process> {
    let mut regions = Vec::new();
    let mut p = root.process(pid, ReadPlan::default().with_retry(true), &mut regions)?;
    p.regions = regions;
    p.streamed = None;
    Ok(p)
}

/// The selection, each process read from its rollup (PSS without the
/// regions) on several threads: an error when a narrowed selection finds
/// nothing, or every process it found exited before it was read.
pub(crate) fn read_rollups(
    root: &ProcRoot,
    sel: &Selection,
    needs: Needs,
    progress: &dyn Progress,
) -> Result<(Selected, Scan)> {
    let mut selected = select(root, sel, needs)?;
    selected.require_any(root, sel)?;
    let infos = std::mem::take(&mut selected.infos);
    progress.start("reading processes", infos.len());
    let mut found = scan::read_all(root, infos, scan::default_threads(), &|| progress.step());
    progress.finish();
    require_read(sel, &found)?;
    found.vanished += selected.vanished;
    Ok((selected, found))
}

/// The selection read through libproc (macOS `top`), what [`select`] and
/// [`read_rollups`] do on `/proc`: from every process's identity (`all`,
/// and how many exited while listed) and `usage`, the read of one
/// process's memory. The PIDs named that were not there, and the scan:
/// a process whose memory is refused (another user's, memtally not root)
/// is listed without figures and counted in `restricted`. An error when
/// a narrowed selection finds nothing.
#[cfg_attr(not(target_os = "macos"), allow(dead_code))] // tested everywhere
pub(crate) fn read_libproc(
    sel: &Selection,
    all: &[BsdInfo],
    listed_gone: usize,
    usage: &mut dyn FnMut(u32) -> std::result::Result<Rusage, Unread>,
    progress: &dyn Progress,
) -> Result<(Vec<u32>, Scan)> {
    let infos: Vec<ProcInfo> = all.iter().map(libproc::identity).collect();
    let mut missing: Vec<u32> = Vec::new();
    for &pid in sel.pids.iter().chain(&sel.trees) {
        if !infos.iter().any(|p| p.pid == pid) && !missing.contains(&pid) {
            missing.push(pid);
        }
    }
    let mut selected = sel.apply(infos);
    // memtally itself, in a narrowed selection only when named (as `select`).
    let me = std::process::id();
    let before = selected.len();
    if !sel.is_everything() && !sel.include_self && !sel.names(me) {
        selected.retain(|p| p.pid != me);
    }
    if !sel.is_everything() && selected.is_empty() {
        let mut why = Vec::new();
        if !missing.is_empty() {
            why.push(Unmatched::Missing(missing));
        }
        if before > 0 {
            why.push(Unmatched::OnlySelf);
        }
        return Err(Error::NoMatch { asked: sel.selectors(), why });
    }
    let mut found =
        Scan { vanished: if sel.is_everything() { listed_gone } else { 0 }, ..Scan::default() };
    progress.start("reading processes", selected.len());
    for info in selected {
        let pid = info.pid;
        let listed = |sizes| ProcMemory { info, source: SizeSource::Libproc, sizes };
        match usage(pid) {
            Ok(r) => found.processes.push(listed(libproc::memory(&r))),
            Err(Unread::Denied) => {
                found.restricted.push(pid);
                found.processes.push(listed(Sizes::default()));
            }
            Err(Unread::Gone) => found.vanished += 1,
            Err(Unread::Failed(why)) => found.failed.push((pid, format!("{why}; left out"))),
        }
        progress.step();
    }
    progress.finish();
    require_read(sel, &found)?;
    Ok((missing, found))
}

impl ReadProcesses {
    /// Counts a process that could not be read: exited, a kernel thread,
    /// or failed (kept, to be noted).
    pub(crate) fn missed(&mut self, e: Error) {
        match e {
            Error::NoSuchProcess { .. } | Error::Exited { .. } => self.vanished += 1,
            Error::KernelThread { .. } => self.kernel_threads += 1,
            e => self.failed.push(e),
        }
    }

    /// The processes, or when none could be read, the reason: the first
    /// failure (permission denied says who owns it and what would fix it),
    /// else that every selected process had exited.
    pub(crate) fn require_some(mut self) -> Result<ReadProcesses> {
        if self.processes.is_empty() {
            if !self.failed.is_empty() {
                return Err(self.failed.swap_remove(0));
            }
            return Err(Error::NotFound(format!(
                "no selected process could be read ({} exited before it was read)",
                self.vanished
            )));
        }
        Ok(self)
    }

    /// What the figures leave out.
    pub fn notes(&self) -> Vec<Note> {
        let mut notes = Vec::new();
        let denied =
            self.failed.iter().filter(|e| matches!(e, Error::PermissionDenied { .. })).count();
        if denied > 0 {
            notes.push(Note::Denied { count: denied, hint: crate::source::access::read_hint() });
        }
        let other = self.failed.len() - denied;
        if other > 0 {
            let first = self.failed.iter().find(|e| !matches!(e, Error::PermissionDenied { .. }));
            notes.push(Note::Unreadable {
                count: other,
                first: first.map_or_else(String::new, |e| e.to_string()),
            });
        }
        if self.vanished > 0 {
            notes.push(Note::Exited { count: self.vanished });
        }
        notes
    }
}
