//! Page-level figures of chosen processes: their pages read once (pagemap
//! over what is resident or swapped), the frames' map counts and flags
//! read in runs, then what `top --exact` (exclusive per row), `shared`
//! (who shares with whom) and `show --pages` (page states) make of them.

use crate::analyze::exclusive::{exclusive, swap_holders};
use crate::error::{Error, PageFigure, Result};
use crate::model::pages::{Exclusive, Frames, ProcPages};
use crate::model::Note;
use crate::source::pages::kconfig::{large_folio_count, LargeFolioCount};
use crate::source::pages::{kpage, pagemap, KpageFiles};
use crate::source::ProcRoot;

/// The pages of some processes, as read.
#[derive(Debug, Default)]
pub struct PageRead {
    /// Each process's pages, in the order asked; `None` where they could
    /// not be read (see `unread`).
    pub pages: Vec<Option<ProcPages>>,
    /// The frames of every resident page read (empty when not asked for).
    pub frames: Frames,
    /// Processes whose pages could not be read, and why.
    pub unread: Vec<(u32, String)>,
}

/// Which frames to read the map count and flags of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FramesFor {
    /// None: pagemap alone.
    None,
    /// Those an analysis of who maps them needs ([`needs_frame`](crate::model::pages::Present::needs_frame):
    /// not an anonymous page mapped once, which is most of a process).
    Shared,
    /// Every frame, its flags only (page states: the map counts are
    /// left 0, not read).
    AllFlags,
}

/// Reads the pages of `procs` (PID, short name), and the map count and
/// flags of the frames `which` says (which needs CAP_SYS_ADMIN: without
/// it, an error that says so, never zeros).
pub fn read_pages(
    root: &ProcRoot,
    procs: &[(u32, String)],
    which: FramesFor,
    figure: PageFigure,
) -> Result<PageRead> {
    let frames = which != FramesFor::None;
    if !root.is_procfs() {
        return Err(Error::LiveOnly {
            root: root.path().to_path_buf(),
            what: crate::error::LiveOnly::Pages(figure),
        });
    }
    let files = KpageFiles::under(root.path());
    if frames {
        // Fail before reading every process when the frames are refused.
        if let Err(e) = std::fs::File::open(&files.flags) {
            return Err(hidden(figure, &files.flags, e));
        }
    }
    let mut read = PageRead::default();
    let threads = crate::source::scan::default_threads().max(1);
    let chunk = procs.len().div_ceil(threads).max(1);
    let results: Vec<Result<ProcPages>> = std::thread::scope(|s| {
        let handles: Vec<_> = procs
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .map(|(pid, comm)| pagemap::read(root, *pid, comm))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap_or_default()).collect()
    });
    for ((pid, _), r) in procs.iter().zip(results) {
        match r {
            Ok(p) => read.pages.push(Some(p)),
            Err(e) => {
                read.unread.push((*pid, e.to_string()));
                read.pages.push(None);
            }
        }
    }
    if frames {
        if read.pages.iter().flatten().any(|p| p.frames_hidden) {
            return Err(Error::FramesHidden {
                figure,
                why: "the frame numbers in pagemap read as 0".into(),
            });
        }
        let all = which == FramesFor::AllFlags;
        let mut pfns: Vec<u64> = read
            .pages
            .iter()
            .flatten()
            .flat_map(|p| p.present.iter().filter(|x| all || x.needs_frame()).map(|x| x.pfn))
            .collect();
        pfns.sort_unstable();
        pfns.dedup();
        read.frames = kpage::read(&files, pfns, !all).map_err(|e| match e {
            Error::Io { path, source } => hidden(figure, &path, source),
            e => e,
        })?;
        if !all {
            discount_self(root, procs, &mut read.frames);
        }
    }
    Ok(read)
}

/// Takes memtally's own mappings off the map counts: it maps the C library
/// the processes map too, and touches more of it as it runs, so a page one
/// process alone had would otherwise read as shared with memtally. Read
/// after the counts, so every mapping they include is seen (one made
/// later only leaves a count higher, never a page wrongly the group's).
/// Not when memtally is itself one of the processes read.
fn discount_self(root: &ProcRoot, procs: &[(u32, String)], frames: &mut Frames) {
    let me = std::process::id();
    if !root.is_live() || procs.iter().any(|(pid, _)| *pid == me) {
        return;
    }
    let Ok(own) = pagemap::read(root, me, "memtally") else { return };
    let mut pfns: Vec<u64> = own.present.iter().map(|x| x.pfn).collect();
    pfns.sort_unstable();
    for run in pfns.chunk_by(|a, b| a == b) {
        frames.discount(run[0], run.len() as u64);
    }
}

/// The error for frames that cannot be read: privilege where it is one.
fn hidden(figure: PageFigure, path: &std::path::Path, e: std::io::Error) -> Error {
    match e.kind() {
        std::io::ErrorKind::PermissionDenied => {
            Error::FramesHidden { figure, why: format!("{}: permission denied", path.display()) }
        }
        _ => Error::io(path, e),
    }
}

/// Exclusive figures of groups of the processes read: per group (indices
/// into the processes read), and of all of them together.
#[derive(Debug, Clone, Default)]
pub struct ExactFigures {
    /// Each group's figure; `None` where a member's pages were not read.
    pub groups: Vec<Option<Exclusive>>,
    /// Every process read, as one group.
    pub all: Exclusive,
    /// What the figures leave out or cannot be sure of.
    pub notes: Vec<Note>,
}

/// The exclusive figure of each group of `members` (indices into
/// `read.pages`); `everything`: every process of the machine was read (so
/// swap slots are counted against all their holders).
pub fn exact_figures(
    root: &ProcRoot,
    read: &PageRead,
    members: &[Vec<usize>],
    everything: bool,
) -> ExactFigures {
    let holders = swap_holders(read.pages.iter().flatten());
    let groups = members
        .iter()
        .map(|m| {
            let pages: Option<Vec<&ProcPages>> =
                m.iter().map(|&i| read.pages.get(i).and_then(Option::as_ref)).collect();
            Some(exclusive(&pages?, &read.frames, &holders))
        })
        .collect();
    let every: Vec<&ProcPages> = read.pages.iter().flatten().collect();
    let all = exclusive(&every, &read.frames, &holders);
    let mut notes = Vec::new();
    if all.large > 0 && large_folio_count(root) != LargeFolioCount::Precise {
        notes.push(Note::LargeFolioAverage { bytes: all.large });
    }
    let zero = zero_mappings(&every, &read.frames);
    if all.ksm > 0 || zero > 0 {
        notes.push(Note::KsmAndZeroPages { ksm: all.ksm, zero });
    }
    if all.changed > 0 {
        notes.push(Note::PagesChanged { bytes: all.changed });
    }
    if let Some((_, first)) = read.unread.first() {
        notes.push(Note::PagesUnread { count: read.unread.len(), first: first.clone() });
    }
    if !everything && all.swap > 0 {
        notes.push(Note::SwapAgainstSelection);
    }
    ExactFigures { groups, all, notes }
}

/// Bytes of zero-page mappings among `pages`.
fn zero_mappings(pages: &[&ProcPages], frames: &Frames) -> u64 {
    let mut n = 0;
    for p in pages {
        // An anonymous page mapped once is not the zero page (which has
        // no map count of its own), and its frame was not read.
        for x in p.present.iter().filter(|x| x.needs_frame()) {
            if frames.get(x.pfn).is_some_and(|f| f.flags.zero_page()) {
                n += crate::model::pages::PAGE;
            }
        }
    }
    n
}

/// `show PID --pages`: the page states of each category of one process.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PageView {
    /// The process.
    pub pid: u32,
    /// Its short name.
    pub comm: String,
    /// Its command line.
    pub cmdline: String,
    /// Whether the page flags were read (else only `PAGEMAP_SCAN`'s states).
    pub flags: bool,
    /// Each category that has pages, in table order.
    pub categories: Vec<(crate::analyze::Category, crate::model::pages::PageStates)>,
    /// Every category added up.
    pub totals: crate::model::pages::PageStates,
    /// What the figures leave out.
    pub notes: Vec<Note>,
}

/// Reads one process's regions and pages: page states by category, from
/// kpageflags where memtally may read it (root), else from `PAGEMAP_SCAN`.
pub fn page_view(root: &ProcRoot, pid: u32) -> Result<PageView> {
    if !root.is_procfs() {
        return Err(Error::LiveOnly {
            root: root.path().to_path_buf(),
            what: crate::error::LiveOnly::Pages(PageFigure::PageStates),
        });
    }
    let process = root.process(pid)?;
    let procs = [(pid, process.comm.clone())];
    let mut notes = Vec::new();
    let read = match read_pages(root, &procs, FramesFor::AllFlags, PageFigure::PageStates) {
        Err(Error::FramesHidden { why, .. }) => {
            notes.push(Note::PageFlagsHidden { why });
            read_pages(root, &procs, FramesFor::None, PageFigure::PageStates)?
        }
        r => r?,
    };
    let flags = notes.is_empty();
    let Some(Some(pages)) = read.pages.first() else {
        let why = read.unread.first().map(|u| u.1.clone()).unwrap_or_default();
        return Err(Error::NotFound(format!(
            "the pages of process {pid} could not be read: {why}"
        )));
    };
    if !flags && !pages.scanned {
        return Err(Error::FramesHidden {
            figure: PageFigure::PageStates,
            why: "this kernel has no PAGEMAP_SCAN (Linux 6.7 and later) to tell the states without them".into(),
        });
    }
    let frames = flags.then_some(&read.frames);
    let categories = crate::analyze::page_states::page_states(&process.regions, pages, frames);
    let mut totals = crate::model::pages::PageStates::default();
    for (_, s) in &categories {
        totals.add(s);
    }
    if frames.is_some_and(|f| !f.is_empty()) {
        let zero = totals.zero_page;
        let ksm = totals.ksm.unwrap_or(0);
        if ksm > 0 || zero > 0 {
            notes.push(Note::KsmAndZeroPages { ksm, zero });
        }
    }
    Ok(PageView {
        pid,
        comm: process.comm,
        cmdline: process.cmdline,
        flags,
        categories,
        totals,
        notes,
    })
}
