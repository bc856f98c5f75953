//! `show`: one process's memory by category, path or permissions, its
//! regions handed out as they are read (so a smaps of any size runs in
//! bounded memory); or a selection of processes read in full and summed;
//! or one of the other views of the same command (the seed's table, page
//! states, what a selection gives back). One entry, [`show`], taking the
//! view.

use crate::analyze::classic::Classic;
use crate::analyze::group::GroupSort;
use crate::analyze::page_states::PageView;
use crate::analyze::select::Selection;
use crate::analyze::show::{build, finish, Fold, ShowBy, ShowReport};
use crate::analyze::top::Top;
use crate::error::Result;
use crate::model::{Flow, Note, Process, Region, RegionSink};
use crate::source::proc_root::RegionsFile;
use crate::source::{ProcRoot, ReadPlan};
use crate::usecase::pages::page_view;
use crate::usecase::read::read_full;
use crate::usecase::top::{top, TopOptions};
use crate::usecase::{gpu, Progress};

/// How to group, sort and cut the rows. Built from `default()` and the
/// `with_*` setters (it may gain fields without breaking callers).
#[derive(Debug, Clone, Default)]
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

setters!(ShowOptions {
    with_by: by: ShowBy,
    with_sort: sort: Vec<GroupSort>,
    with_top: top: Option<usize>,
});

/// What `show` shows: one of its five views.
#[derive(Debug, Clone)]
pub enum ShowView {
    /// One process by category, path or permissions: each region goes to
    /// the sink as it is read and none is kept, so a smaps of any size
    /// runs in the same memory (with the GPU rows, when the process has
    /// GPU memory).
    Process(u32),
    /// Several processes, each with its regions kept, summed into one view
    /// (PSS counts shared pages once in total); the sink takes none.
    Selection(Selection),
    /// The seed's table of one process: virtual kB by backing and
    /// permissions, from `maps` as the seed reads it (so it works where
    /// only maps is readable).
    Classic(u32),
    /// Page states per category of one process (kpageflags; live only).
    Pages(u32),
    /// What the selected processes give back when they end, together and
    /// each alone, beside PSS and USS (root; live only).
    Exact(Selection),
}

/// What a [`ShowView`] found.
#[derive(Debug)]
pub enum Shown {
    /// [`ShowView::Process`] and [`ShowView::Selection`].
    Regions(ShowReport),
    /// [`ShowView::Classic`].
    Classic(Classic),
    /// [`ShowView::Pages`].
    Pages(PageView),
    /// [`ShowView::Exact`].
    Exact(Top),
}

/// `show`: reads what `view` names. [`ShowView::Process`] hands each
/// region to `sink` as it is read, then the view of all of them; a sink
/// that stops the read gets back the view of the regions read until
/// then, marked so, and no more is read (no GPU rows). The other views
/// take no sink; `progress` hears of the selections' reads.
pub fn show(
    root: &ProcRoot,
    view: &ShowView,
    opts: &ShowOptions,
    sink: &mut impl RegionSink,
    progress: &dyn Progress,
) -> Result<Shown> {
    Ok(match view {
        ShowView::Process(pid) => Shown::Regions(process(root, *pid, opts, sink)?),
        ShowView::Selection(sel) => Shown::Regions(selection(root, sel, opts, progress)?),
        ShowView::Classic(pid) => Shown::Classic(classic(root, *pid)?),
        ShowView::Pages(pid) => Shown::Pages(page_view(root, *pid)?),
        ShowView::Exact(sel) => {
            let opts =
                TopOptions::default().with_select(sel.clone()).with_top(None).with_exact(true);
            Shown::Exact(top(root, &opts, progress)?)
        }
    })
}

impl Shown {
    /// The regions' view, for [`ShowView::Process`] and
    /// [`ShowView::Selection`]; `None` for the others.
    pub fn into_regions(self) -> Option<ShowReport> {
        match self {
            Shown::Regions(report) => Some(report),
            Shown::Classic(_) | Shown::Pages(_) | Shown::Exact(_) => None,
        }
    }
}

/// One process, its regions handed to `sink` as they are read.
fn process(
    root: &ProcRoot,
    pid: u32,
    opts: &ShowOptions,
    sink: &mut impl RegionSink,
) -> Result<ShowReport> {
    let mut folded = Folded { fold: Fold::new(opts.by), sink };
    let process = root.process(pid, ReadPlan::default(), &mut folded)?;
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

    fn region(&mut self, line: usize, region: &Region) -> Flow {
        self.fold.add(region);
        self.sink.region(line, region)
    }
}

/// Several processes, each with its regions kept, summed into one view.
/// What could not be read is in the report's notes; when nothing could
/// be, its reason is the error.
fn selection(
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

/// The seed's table, from `maps`.
fn classic(root: &ProcRoot, pid: u32) -> Result<Classic> {
    root.read_regions(pid, RegionsFile::Maps, Classic::default())
}
