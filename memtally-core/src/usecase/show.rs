//! `show`: one process's memory by category, path or permissions, its
//! regions handed out as they are read (so a smaps of any size runs in
//! bounded memory); or a selection of processes read in full and summed.

use crate::analyze::classic::Classic;
use crate::analyze::group::GroupSort;
use crate::analyze::select::Selection;
use crate::analyze::show::{build, finish, Fold, ShowBy, ShowReport};
use crate::error::Result;
use crate::model::{Flow, Note, Process, Region, RegionSink};
use crate::source::ProcRoot;
use crate::usecase::read::read_full;
use crate::usecase::{gpu, Progress};

/// How to group, sort and cut the rows. Built from `default()` and the
/// `with_*` setters (it may gain fields without breaking callers).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ShowOptions {
    /// What the rows are grouped by.
    pub by: ShowBy,
    /// Sort rows by these, largest first. Empty: the view's default
    /// ([`ShowBy::default_sort`]).
    pub sort: Vec<GroupSort>,
    /// Keep the first N rows (totals still cover every region).
    pub top: Option<usize>,
}

impl Default for ShowOptions {
    fn default() -> ShowOptions {
        ShowOptions { by: ShowBy::Category, sort: Vec::new(), top: None }
    }
}

setters!(ShowOptions {
    with_by: by: ShowBy,
    with_sort: sort: Vec<GroupSort>,
    with_top: top: Option<usize>,
});

/// One process: the view of all its regions (with the GPU rows, when the
/// process has GPU memory). The regions are summed as they are read and
/// not kept, so any smaps size runs in the same memory; to see each one
/// as well, use [`show_process_with`]. The crate's first page reads this
/// very process with it.
pub fn show_process(root: &ProcRoot, pid: u32, opts: &ShowOptions) -> Result<ShowReport> {
    show_process_with(root, pid, opts, &mut ())
}

/// One process: each region goes to `sink` as it is read, then the view
/// of all of them (with the GPU rows, when the process has GPU memory).
/// A sink that stops the read gets back the view of the regions read
/// until then, marked so, and no more is read (no GPU rows).
pub fn show_process_with(
    root: &ProcRoot,
    pid: u32,
    opts: &ShowOptions,
    sink: &mut impl RegionSink,
) -> Result<ShowReport> {
    let mut folded = Folded { fold: Fold::new(opts.by), sink };
    let process = root.process_with(pid, &mut folded)?;
    let stopped = process.streamed.as_ref().is_some_and(|s| s.stopped);
    let mut report = finish(vec![process], folded.fold, &opts.sort, opts.top);
    if stopped {
        report.notes.push(Note::ReadStopped { pid, regions: report.region_count });
        return Ok(report);
    }
    report.gpu = gpu::for_show(root, &[pid]);
    report.notes.extend(incomplete_note(root, pid));
    Ok(report)
}

/// The view's fold, then the caller's sink.
struct Folded<'s, S> {
    fold: Fold,
    sink: &'s mut S,
}

impl<S: RegionSink> RegionSink for Folded<'_, S> {
    fn begin(&mut self, process: &Process) -> Flow {
        self.sink.begin(process)
    }

    fn region(&mut self, line: usize, region: Region) -> Flow {
        self.fold.add(&region);
        self.sink.region(line, region)
    }
}

/// Several processes, each with its regions kept, summed into one view
/// (PSS counts shared pages once in total). What could not be read is
/// in the report's notes; when nothing could be, its reason is the error.
pub fn show_selection(
    root: &ProcRoot,
    sel: &Selection,
    opts: &ShowOptions,
    progress: &dyn Progress,
) -> Result<ShowReport> {
    let (_, read) = read_full(root, sel, progress)?;
    let notes = read.notes();
    let pids: Vec<u32> = read.processes.iter().map(|p| p.pid).collect();
    let mut report = build(read.processes, opts.by, &opts.sort, opts.top);
    report.gpu = gpu::for_show(root, &pids);
    report.notes.extend(notes);
    report.notes.extend(pids.iter().filter_map(|&pid| incomplete_note(root, pid)));
    Ok(report)
}

/// The note for a process its capture marked incomplete (a recorded tree only).
fn incomplete_note(root: &ProcRoot, pid: u32) -> Option<Note> {
    root.incomplete(pid).map(|why| Note::RecordedIncomplete { pid, why: why.to_string() })
}

/// The seed's table (virtual kB by backing and permissions), from `maps`
/// as the seed reads it, so it works where only maps is readable.
pub fn classic(root: &ProcRoot, pid: u32) -> Result<Classic> {
    let mut counts = Classic::default();
    root.stream_regions(pid, "maps", &mut counts)?;
    Ok(counts)
}
