//! `report`: what one HTML page shows, gathered. The page's figures are
//! the snapshot's (the document `memtally snapshot` writes, which the page
//! embeds), the machine picture is `top`'s, and processes `top` lists but
//! that could not be read in detail come along with their status figures,
//! so the page can draw them instead of leaving a gap.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use crate::analyze::plot::Plot;
use crate::analyze::report::{
    groups, machine_of, PageRoom, Report, ReportBy, ReportGroup, SeriesReport, Unread,
    HEADLINE_PROGRAMS,
};
use crate::analyze::select::Selection;
use crate::analyze::trend::fit;
use crate::error::{Error, Result};
use crate::model::snapshot::{Moment, SnapProcess, Snapshot, SnapshotKind};
use crate::model::{Note, ProcMemory};
use crate::source::ProcRoot;
use crate::usecase::cgroup::{cgroups, CgroupOptions};
use crate::usecase::gpu::{gpu, GpuOptions};
use crate::usecase::plot::{plot, PlotOptions};
use crate::usecase::select::SelectOptions;
use crate::usecase::snapshot::{add_exact, take, Taken};
use crate::usecase::top::{top, TopOptions};
use crate::usecase::vmmap::{read as read_vmmap, VmmapInput, VmmapOptions};
use crate::usecase::{Progress, Silent};

/// The largest programs of `snapshot`, for the headline.
fn largest_programs(snapshot: &Snapshot, unread: &[Unread]) -> Vec<ReportGroup> {
    let mut programs = groups(snapshot, unread, ReportBy::Program, &HashMap::new());
    programs.truncate(HEADLINE_PROGRAMS);
    programs
}

/// Which processes [`live`] reads in full (smaps: categories and
/// mappings); the others come with their `smaps_rollup` totals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    /// Every process.
    All,
    /// The N largest by PSS, whatever their smaps costs.
    Largest(usize),
    /// The largest by PSS, in order: the largest always, then each next
    /// one while the ones taken, it included, have at most `processes`
    /// processes, `mappings` mappings (their `maps` lines) and a quarter
    /// of every process's resident bytes (or 64 MiB, the more of the
    /// two); the first that does not fit ends the list. The budget cuts
    /// the long tail, never the head: the largest processes are the ones
    /// a user opens the page for, whatever their smaps costs. On a
    /// recorded tree (no kernel to walk page tables) only `processes`
    /// holds. What a full read costs is its mappings (the kernel writes
    /// some 25 lines of smaps for each, memtally parses and draws them).
    Budget {
        /// At most this many processes.
        processes: usize,
        /// Their mappings, added up, at most this many.
        mappings: usize,
    },
}

/// `report`'s default: the 25 largest processes, 2,000 mappings and a
/// quarter of the resident bytes in all.
/// Measured (docs/benchmarks.md): a page of every process costs `top` of
/// every process as JSON plus the full read of the largest ones.
pub const DEFAULT_DETAIL: Detail = Detail::Budget { processes: 25, mappings: 2_000 };

/// The share of all processes' resident bytes a budget reads in full:
/// one in this many.
const RSS_SHARE: u64 = 4;

/// Resident bytes a budget may read in full whatever the share: a page
/// of a few small processes reads them all.
const RSS_FLOOR: u64 = 64 << 20;

/// The PIDs to read in full out of `readable` (largest first), or `None`
/// for every one.
fn chosen(root: &ProcRoot, readable: &[&ProcMemory], detail: Detail) -> Option<Vec<u32>> {
    match detail {
        Detail::All => None,
        Detail::Largest(n) if readable.len() <= n => None,
        Detail::Largest(n) => Some(readable[..n].iter().map(|p| p.info.pid).collect()),
        // A recorded tree costs no kernel walk: only the count holds.
        Detail::Budget { processes, .. } if !root.is_procfs() => {
            chosen(root, readable, Detail::Largest(processes))
        }
        Detail::Budget { processes, mappings } => {
            // The kernel walks a process's page tables for its smaps as for
            // its rollup (and the full read reads both): the resident
            // bytes read in full, at most a quarter of all that `top` read.
            let all_rss: u64 = readable.iter().filter_map(|p| p.sizes.rss).sum();
            let rss_budget = (all_rss / RSS_SHARE).max(RSS_FLOOR);
            let (mut maps, mut rss) = (0usize, 0u64);
            let mut pids = Vec::new();
            for p in readable.iter().take(processes) {
                // Unknown (a recorded tree without maps): counted as none,
                // as a tree is read without the kernel's cost.
                let n = root.mappings_up_to(p.info.pid, mappings.saturating_sub(maps)).unwrap_or(0);
                let r = p.sizes.rss.unwrap_or(0);
                let fits = maps + n <= mappings && rss + r <= rss_budget;
                if !fits && !pids.is_empty() {
                    break;
                }
                maps += n;
                rss += r;
                pids.push(p.info.pid);
            }
            (pids.len() < readable.len()).then_some(pids)
        }
    }
}

/// Reads the selection live (or from a recorded tree): the snapshot in
/// full, and `top`'s rollup read for the machine picture, cgroups and the
/// processes the full read could not see.
///
/// `detail` says which processes, the largest by PSS, are read in full
/// (smaps: categories and mappings); the others come with their
/// `smaps_rollup` totals, as `top` read them, and no categories or
/// mappings ([`Report::summarized`] counts them). Reading every smaps
/// costs the kernel several times the rollups.
///
/// `exact`: also each process's exclusive figure and the selection's
/// (`snapshot --exact`'s, [`add_exact`]): live only, needs CAP_SYS_ADMIN.
pub fn live(
    root: &ProcRoot,
    sel: &Selection,
    by: ReportBy,
    detail: Detail,
    exact: bool,
    progress: &dyn Progress,
) -> Result<Report> {
    let opts =
        TopOptions::default().with_select(sel.clone()).with_top(None).with_every_identity(true);
    let top = top(root, &opts, progress)?;
    let mut readable: Vec<&ProcMemory> =
        top.scan.processes.iter().filter(|p| p.sizes.pss.is_some()).collect();
    readable.sort_by(|a, b| b.sizes.pss.cmp(&a.sizes.pss).then(a.info.pid.cmp(&b.info.pid)));
    let (taken, summarized) = match chosen(root, &readable, detail) {
        Some(pids) => {
            let mut taken = match pids.len() {
                0 => None,
                _ => Some(take_parallel(root, &pids)?),
            };
            let full: HashSet<u32> = taken
                .as_ref()
                .map(|t| t.snapshot.processes.iter().filter_map(|p| p.pid).collect())
                .unwrap_or_default();
            let asked: HashSet<u32> = pids.iter().copied().collect();
            let rest: Vec<SnapProcess> = readable
                .iter()
                .filter(|p| !asked.contains(&p.info.pid) && !full.contains(&p.info.pid))
                .map(|p| SnapProcess {
                    pid: Some(p.info.pid),
                    ppid: Some(p.info.ppid),
                    user: Some(top.users.name(p.info.uid)),
                    comm: p.info.comm.clone(),
                    command: p.info.command(),
                    source: p.source,
                    totals: p.sizes.clone(),
                    categories: Vec::new(),
                    regions: Vec::new(),
                    purgeable: Vec::new(),
                    physical_footprint: None,
                    exclusive: None,
                })
                .collect();
            let count = rest.len();
            let (mut head, notes) = match taken.take() {
                Some(t) => (t.snapshot, t.notes),
                None => (Snapshot::of(Vec::new(), SnapshotKind::Linux), Vec::new()),
            };
            head.processes.extend(rest);
            let mut snap = Snapshot::of(std::mem::take(&mut head.processes), SnapshotKind::Linux);
            Moment::take(&mut head).stamp(&mut snap);
            snap.machine = snap.machine.or_else(|| root.meminfo().map(|m| m.fields));
            (Taken::new(snap, notes), count)
        }
        None => (take(root, sel, &Silent)?, 0),
    };
    let mut taken = taken;
    if exact {
        add_exact(root, sel, &mut taken)?;
    }
    let read: HashSet<u32> = taken.snapshot.processes.iter().filter_map(|p| p.pid).collect();
    let restricted: HashSet<u32> = top.scan.restricted.iter().copied().collect();
    let unread: Vec<Unread> = top
        .scan
        .processes
        .iter()
        .filter(|p| restricted.contains(&p.info.pid) && !read.contains(&p.info.pid))
        .map(|p| Unread {
            pid: p.info.pid,
            comm: p.info.comm.clone(),
            command: p.info.command(),
            user: Some(top.users.name(p.info.uid)),
            cgroup: p.info.cgroup.clone(),
            sizes: p.sizes.clone(),
        })
        .collect();
    let cgroup_of: HashMap<u32, String> = top
        .scan
        .processes
        .iter()
        .filter_map(|p| Some((p.info.pid, p.info.cgroup.clone()?)))
        .collect();
    // The full read's notes (who could not be read, who exited), and of
    // top's those about the figures themselves.
    let mut notes = taken.notes.clone();
    notes.extend(
        top.notes().into_iter().filter(|n| matches!(n, Note::NoPssDirty | Note::PssShmem { .. })),
    );
    let mut snapshot = taken.snapshot;
    from_top(&mut snapshot, &top.scan.processes);
    let groups = groups(&snapshot, &unread, by, &cgroup_of);
    // The GPU and cgroup views are what `gpu` and `cgroup` show, read only
    // where they have something to say: a failure of theirs leaves the
    // page's other figures whole, and the page says what failed.
    let any_gpu = top.scan.processes.iter().any(|p| p.sizes.gpu.unwrap_or(0) > 0);
    let gpu = any_gpu.then(|| {
        gpu(root, &GpuOptions::default().with_select(sel.clone())).map_err(|e| e.to_string())
    });
    let cgroups = (by == ReportBy::Cgroup)
        .then(|| cgroups(root, &CgroupOptions::default(), &Silent).map_err(|e| e.to_string()));
    let programs = largest_programs(&snapshot, &unread);
    Ok(Report {
        programs,
        snapshot,
        notes,
        unread,
        machine: top.report.machine,
        by,
        groups,
        machine_from_file: false,
        gpu,
        cgroups,
        vmmap: None,
        summarized,
        faults: None,
        regions_left: Vec::new(),
    })
}

/// What the full read of a process does not give and `top`'s read of it
/// did, so the page's SWAP PSS and FOOTPRINT PSS are `top`'s figures: the
/// process's share of the selection's swapped shared memory (an analysis
/// over every process, `top`'s alone), and, where the rollup was dropped
/// (read at another instant than smaps, whose mappings carry no
/// Pss_Anon), the Pss_Anon of the rollup `top` read.
fn from_top(snapshot: &mut Snapshot, top: &[ProcMemory]) {
    let by_pid: HashMap<u32, &ProcMemory> = top.iter().map(|p| (p.info.pid, p)).collect();
    for p in &mut snapshot.processes {
        let Some(t) = p.pid.and_then(|pid| by_pid.get(&pid)) else { continue };
        if p.totals.shmem_swap.is_none() {
            p.totals.shmem_swap = t.sizes.shmem_swap;
        }
        if p.totals.pss_anon.is_none() {
            p.totals.pss_anon = t.sizes.pss_anon;
        }
    }
}

/// The full read of `pids`, on as many threads as the machine has (up
/// to eight), each taking its share of the PIDs in turn (the largest
/// first, dealt out round-robin, so the shares cost about the same); the
/// parts put back together in `pids`' order.
fn take_parallel(root: &ProcRoot, pids: &[u32]) -> Result<Taken> {
    let threads = crate::source::scan::default_threads().min(pids.len()).max(1);
    let shares: Vec<Vec<u32>> =
        (0..threads).map(|t| pids.iter().copied().skip(t).step_by(threads).collect()).collect();
    let parts: Vec<Result<Taken>> = std::thread::scope(|s| {
        let handles: Vec<_> = shares
            .iter()
            .map(|share| {
                s.spawn(move || {
                    take(
                        root,
                        &SelectOptions::default().with_pids(share.clone()).resolve()?,
                        &Silent,
                    )
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or(Err(Error::ThreadPanicked { what: "a process reader" })))
            .collect()
    });
    // A share all of whose processes exited is no failure of the whole.
    let mut ok: Vec<Taken> = Vec::new();
    let mut first_err = None;
    for p in parts {
        match p {
            Ok(t) => ok.push(t),
            Err(e) => first_err = first_err.or(Some(e)),
        }
    }
    let Some(mut all) = ok.pop() else {
        return Err(first_err.expect("at least one share"));
    };
    for t in ok {
        all.snapshot.processes.extend(t.snapshot.processes);
        for n in t.notes {
            add_note(&mut all.notes, n);
        }
    }
    let order: std::collections::HashMap<u32, usize> =
        pids.iter().enumerate().map(|(i, &p)| (p, i)).collect();
    all.snapshot.processes.sort_by_key(|p| p.pid.and_then(|pid| order.get(&pid).copied()));
    Ok(all)
}

/// Adds a share's note: counts of one kind (exited, denied, unreadable)
/// add up into one note, as one read would have said them.
fn add_note(notes: &mut Vec<Note>, n: Note) {
    for m in notes.iter_mut() {
        match (m, &n) {
            (Note::Exited { count }, Note::Exited { count: c })
            | (Note::Denied { count, .. }, Note::Denied { count: c, .. })
            | (Note::Unreadable { count, .. }, Note::Unreadable { count: c, .. }) => {
                *count += c;
                return;
            }
            _ => {}
        }
    }
    notes.push(n);
}

/// A report of a document read back: a snapshot file, `show` or `vmmap`
/// JSON, saved vmmap text, or a report page (the snapshot it carries).
/// Of saved vmmap text or a snapshot file past what the page can embed,
/// only the regions `room` says the page draws are kept
/// ([`Report::regions_left`]).
pub fn from_file(path: &Path, by: ReportBy, room: PageRoom) -> Result<Report> {
    let (snapshot, left) = crate::usecase::report_input::read(path, room, by)?;
    let mut report = of_snapshot(snapshot, by);
    report.regions_left = left;
    // Saved vmmap text: `vmmap`'s own view of it too (the snapshot has
    // the regions, not the footprint or the purge-state tables). A vmmap
    // JSON document or a page reads as no vmmap text: no region lines.
    if report.snapshot.kind == crate::model::snapshot::SnapshotKind::Vmmap {
        let input = VmmapInput::File(path.to_path_buf());
        report.vmmap = read_vmmap(&input, &VmmapOptions::default(), &mut ())
            .ok()
            .filter(|v| v.doc.regions > 0 || !v.doc.summary.is_empty());
    }
    Ok(report)
}

/// A report of a snapshot in hand.
pub(crate) fn of_snapshot(snapshot: Snapshot, by: ReportBy) -> Report {
    let machine = machine_of(&snapshot);
    let groups = groups(&snapshot, &[], by, &HashMap::new());
    Report {
        programs: largest_programs(&snapshot, &[]),
        machine_from_file: machine.is_some(),
        snapshot,
        notes: Vec::new(),
        unread: Vec::new(),
        machine,
        by,
        groups,
        gpu: None,
        cgroups: None,
        vmmap: None,
        summarized: 0,
        faults: None,
        regions_left: Vec::new(),
    }
}

/// Processes drawn beside a series' total.
const SERIES_PROCESSES: usize = 12;

/// `Some` when `path` is a watch series (`memtally watch -o FILE.csv`).
pub fn series(path: &Path) -> Result<Option<SeriesReport>> {
    use std::io::Read;
    let mut head = Vec::new();
    let opened =
        crate::source::bounded::open_input(path).and_then(|f| f.take(16).read_to_end(&mut head));
    if opened.is_err() || !crate::source::series::is_series_head(&head) {
        return Ok(None);
    }
    let opts = PlotOptions::default().with_top(SERIES_PROCESSES);
    let Plot::Series(plot) = plot(path, &opts)? else { return Ok(None) };
    let trends = plot
        .totals
        .iter()
        .chain(&plot.processes)
        .map(|l| {
            let pts: Vec<(f64, f64)> = l.points.iter().map(|&(t, v)| (t, v as f64)).collect();
            fit(&pts)
        })
        .collect();
    Ok(Some(SeriesReport { plot, trends }))
}
