//! Page-level figures of chosen processes: their pages read once (pagemap
//! over what is resident or swapped), the frames' map counts and flags
//! read in runs, then what `top --exact` (exclusive per row), `shared`
//! (who shares with whom) and `show --pages` (page states) make of them.

use crate::analyze::exclusive::{exclusive, swap_holders};
use crate::analyze::page_states::PageView;
use crate::analyze::top::ExactFigures;
use crate::error::{Error, PageFigure, Result};
use crate::model::pages::{Frames, ProcPages, ReadCost, PAGE};
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
    /// What the read cost: entries of each file read.
    pub cost: ReadCost,
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

/// Fails where pages cannot be read at all: a recorded tree.
fn check_live(root: &ProcRoot, figure: PageFigure) -> Result<()> {
    match root.is_procfs() {
        true => Ok(()),
        false => Err(Error::LiveOnly {
            root: root.path().to_path_buf(),
            what: crate::error::LiveOnly::Pages(figure),
        }),
    }
}

/// Fails where the frames' map counts and flags cannot be read (a recorded
/// tree, no CAP_SYS_ADMIN): before anything is read for `figure`.
pub(crate) fn check_frames(root: &ProcRoot, figure: PageFigure) -> Result<()> {
    check_live(root, figure)?;
    let flags = KpageFiles::under(root.path()).flags;
    match std::fs::File::open(&flags) {
        Ok(_) => Ok(()),
        Err(e) => Err(hidden(figure, &flags, e)),
    }
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
    match frames {
        // Fail before reading every process when the frames are refused.
        true => check_frames(root, figure)?,
        false => check_live(root, figure)?,
    }
    let files = KpageFiles::under(root.path());
    let mut read = PageRead::default();
    let threads = crate::source::scan::default_threads().max(1);
    let chunk = procs.len().div_ceil(threads).max(1);
    // A reader that panicked fails the whole read: its processes' results
    // are missing, and the rest would be matched to the wrong processes.
    let results: Result<Vec<Vec<Result<ProcPages>>>> = std::thread::scope(|s| {
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
        handles
            .into_iter()
            .map(|h| h.join().map_err(|_| Error::ThreadPanicked { what: "a pagemap reader" }))
            .collect()
    });
    let results = results?.into_iter().flatten();
    for ((pid, _), r) in procs.iter().zip(results) {
        match r {
            Ok(p) => {
                read.cost.pagemap_entries += p.pagemap_entries;
                read.pages.push(Some(p));
            }
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
        let huge: Vec<(u64, u64)> =
            read.pages.iter().flatten().flat_map(|p| p.huge_frames.iter().copied()).collect();
        let (frames, cost) = kpage::read(&files, pfns, !all, &huge).map_err(|e| match e {
            Error::Io { path, source } => hidden(figure, &path, source),
            e => e,
        })?;
        read.frames = frames;
        read.cost.kpageflags_entries = cost.kpageflags_entries;
        read.cost.kpagecount_entries = cost.kpagecount_entries;
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

/// Reads one process's mappings and pages: page states by category, from
/// kpageflags where memtally may read it (root), else from `PAGEMAP_SCAN`.
/// The mappings come from `maps`, not smaps: the categories need no
/// figure of smaps but Anonymous (a relro mapping is read-only file data
/// with anonymous pages), which pagemap tells page by page, and smaps
/// would walk the page tables once more (docs/benchmarks.md#page-level-reads).
pub(crate) fn page_view(root: &ProcRoot, pid: u32) -> Result<PageView> {
    if !root.is_procfs() {
        return Err(Error::LiveOnly {
            root: root.path().to_path_buf(),
            what: crate::error::LiveOnly::Pages(PageFigure::PageStates),
        });
    }
    let (comm, cmdline) = root.identity(pid)?;
    let (pages, mut regions) = pagemap::read_mapped(root, pid, &comm, true)?;
    let mut notes = Vec::new();
    let mut cost = ReadCost { pagemap_entries: pages.pagemap_entries, ..ReadCost::default() };
    let frames = match all_flags(root, &pages) {
        Ok((frames, c)) => {
            cost.kpageflags_entries = c.kpageflags_entries;
            Some(frames)
        }
        Err(Error::FramesHidden { why, .. }) => {
            notes.push(Note::PageFlagsHidden { why });
            None
        }
        Err(e) => return Err(e),
    };
    if frames.is_none() && !pages.scanned {
        return Err(Error::FramesHidden {
            figure: PageFigure::PageStates,
            why: "this kernel has no PAGEMAP_SCAN (Linux 6.7 and later) to tell the states without them".into(),
        });
    }
    anonymous_from_pages(&mut regions, &pages);
    let categories = crate::analyze::page_states::page_states(&regions, &pages, frames.as_ref());
    let mut totals = crate::model::pages::PageStates::default();
    for (_, s) in &categories {
        totals.add(s);
    }
    if frames.as_ref().is_some_and(|f| !f.is_empty()) {
        let zero = totals.zero_page;
        let ksm = totals.ksm.unwrap_or(0);
        if ksm > 0 || zero > 0 {
            notes.push(Note::KsmAndZeroPages { ksm, zero });
        }
    }
    Ok(PageView { pid, comm, cmdline, flags: frames.is_some(), categories, totals, notes, cost })
}

/// The flags of every frame of `pages` (one word per huge page mapped
/// whole); [`Error::FramesHidden`] where memtally may not read them.
fn all_flags(root: &ProcRoot, pages: &ProcPages) -> Result<(Frames, ReadCost)> {
    let figure = PageFigure::PageStates;
    let files = KpageFiles::under(root.path());
    if let Err(e) = std::fs::File::open(&files.flags) {
        return Err(hidden(figure, &files.flags, e));
    }
    if pages.frames_hidden {
        let why = "the frame numbers in pagemap read as 0".into();
        return Err(Error::FramesHidden { figure, why });
    }
    let mut pfns: Vec<u64> = pages.present.iter().map(|x| x.pfn).collect();
    pfns.sort_unstable();
    pfns.dedup();
    kpage::read(&files, pfns, false, &pages.huge_frames).map_err(|e| match e {
        Error::Io { path, source } => hidden(figure, &path, source),
        e => e,
    })
}

/// Fills in each mapping's Anonymous (which `maps` lacks) from its resident
/// pages that pagemap says are neither a file's nor shared, as smaps
/// counts it.
fn anonymous_from_pages(regions: &mut [crate::model::Region], pages: &ProcPages) {
    let mut at = 0;
    for r in regions.iter_mut() {
        let (Some(start), Some(end)) = (r.start, r.end) else { continue };
        if r.sizes.anonymous.is_some() {
            continue;
        }
        // `maps` and the pages are both in address order.
        let present = &pages.present;
        at = at.max(present.partition_point(|p| p.addr < start).min(present.len()));
        let mut anon = 0;
        while at < present.len() && present[at].addr < end {
            anon += if present[at].file { 0 } else { PAGE };
            at += 1;
        }
        r.sizes.anonymous = Some(anon);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::pages::{FrameInfo, PageFlags, Present};

    const ANON: u64 = 1 << 12;
    const KSM: u64 = 1 << 21;
    const HEAD: u64 = 1 << 15;
    const THP: u64 = 1 << 22;

    /// One process mapping frames 1..=4 (shared or file pages, so their
    /// frames are looked at): 1 a KSM page, 2 the head of a large folio,
    /// 3 a page whose map count fell below the process's own mapping
    /// while read, 4 a plain page; each mapped once.
    fn read() -> PageRead {
        let present =
            (1..=4).map(|pfn| Present { addr: pfn << 12, pfn, solo: false, file: false }).collect();
        let info = |mapcount, flags| FrameInfo { mapcount, flags: PageFlags(flags) };
        PageRead {
            pages: vec![Some(ProcPages { pid: 1, present, ..ProcPages::default() })],
            frames: Frames::new(
                vec![1, 2, 3, 4],
                vec![info(1, ANON | KSM), info(1, ANON | HEAD | THP), info(0, ANON), info(1, ANON)],
            ),
            ..PageRead::default()
        }
    }

    fn root_with_config(text: &str) -> (tempfile::TempDir, ProcRoot) {
        let dir = tempfile::tempdir().unwrap();
        let gz = std::fs::File::create(dir.path().join("config.gz")).unwrap();
        let mut enc = flate2::write::GzEncoder::new(gz, flate2::Compression::fast());
        std::io::Write::write_all(&mut enc, text.as_bytes()).unwrap();
        enc.finish().unwrap();
        let root = ProcRoot::new(dir.path());
        (dir, root)
    }

    /// Each caveat of the exclusive figure is a note where it applies:
    /// KSM pages, pages changed during the read, and large folios where
    /// the kernel counts their average map count, not elsewhere.
    #[test]
    fn each_caveat_gets_its_note_where_it_applies() {
        let (_dir, average) = root_with_config("CONFIG_NO_PAGE_MAPCOUNT=y\n");
        let got = exact_figures(&average, &read(), &[vec![0]], true);
        assert_eq!((got.all.ksm, got.all.large, got.all.changed), (PAGE, PAGE, PAGE));
        assert_eq!(got.all.bytes, 3 * PAGE, "the changed page is left out");
        assert!(got.notes.contains(&Note::LargeFolioAverage { bytes: PAGE }), "{:?}", got.notes);
        assert!(got.notes.contains(&Note::KsmAndZeroPages { ksm: PAGE, zero: 0 }));
        assert!(got.notes.contains(&Note::PagesChanged { bytes: PAGE }));
        let (_dir, precise) = root_with_config("CONFIG_PAGE_MAPCOUNT=y\n");
        let got = exact_figures(&precise, &read(), &[vec![0]], true);
        assert!(
            !got.notes.iter().any(|n| matches!(n, Note::LargeFolioAverage { .. })),
            "each page's own count: no note, {:?}",
            got.notes
        );
    }
}
