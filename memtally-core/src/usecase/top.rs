//! `top`: every selected process at once, by the cheapest reads that give
//! PSS (`smaps_rollup`), with GPU memory where the machine has any and the
//! machine's own picture when every process is in the selection.

use std::collections::HashMap;

use crate::analyze::select::Selection;
use crate::analyze::top::{build, Top, TopBy, TopReport, TopSort};
use crate::error::Result;
use crate::model::{CgroupMemory, Figure, Needs, ProcMemory, Scan};
use crate::source::cgroup::CgroupRoot;
use crate::source::users::UserNames;
use crate::source::{scan, ProcRoot};
use crate::usecase::pages::{exact_figures, read_pages, FramesFor};
use crate::usecase::read::read_rollups;
use crate::usecase::{gpu, Progress, Silent};

/// What to show. Built from `default()` and the `with_*` setters.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TopOptions {
    /// Which processes to read.
    pub select: Selection,
    /// How the rows are grouped.
    pub by: TopBy,
    /// Sort by these, largest first (`pid` smallest first).
    pub sort: Vec<TopSort>,
    /// Keep the first N rows (totals still cover every process).
    pub top: Option<usize>,
    /// Read every process's command line and cgroup (JSON and CSV print
    /// them for every process); otherwise only the rows shown get theirs.
    pub every_identity: bool,
    /// Read the selected processes' pages for each row's exclusive figure
    /// (what the row gives back: `usecase::pages`).
    pub exact: bool,
    /// Leave out the rows whose first sort figure (PSS where the sort has
    /// none) is below this many bytes, or unknown (totals still cover them).
    pub min: Option<u64>,
    /// Smallest first: the sort reversed (rows of a tree keep their order).
    pub reverse: bool,
    /// Read the OOM score of each process row shown (`PID/oom_score`).
    pub oom: bool,
}

impl Default for TopOptions {
    fn default() -> TopOptions {
        TopOptions {
            select: Selection::default(),
            by: TopBy::Process,
            sort: vec![TopSort::Figure(Figure::Pss)],
            top: Some(20),
            every_identity: false,
            exact: false,
            min: None,
            reverse: false,
            oom: false,
        }
    }
}

setters!(TopOptions {
    with_select: select: Selection,
    with_by: by: TopBy,
    with_sort: sort: Vec<TopSort>,
    with_top: top: Option<usize>,
    with_min: min: Option<u64>,
    with_reverse: reverse: bool,
    with_oom: oom: bool,
    with_every_identity: every_identity: bool,
    with_exact: exact: bool,
});

/// Reads the selection and builds the view. On macOS the live system's
/// processes are read through libproc (footprint, its peak, RSS); a
/// recorded `/proc` tree is read as on Linux.
pub fn top(root: &ProcRoot, opts: &TopOptions, progress: &dyn Progress) -> Result<Top> {
    #[cfg(target_os = "macos")]
    if root.is_live() {
        use crate::source::libproc;
        let (all, gone) =
            libproc::identities().map_err(|e| crate::error::Error::io("proc_listallpids", e))?;
        let read = crate::usecase::read::read_libproc(
            &opts.select,
            &all,
            gone,
            &mut libproc::usage,
            progress,
        )?;
        return Ok(libproc_view(read, opts));
    }
    let needs = Needs {
        cmdline: opts.by == TopBy::Program || opts.every_identity,
        cgroup: opts.by == TopBy::Cgroup || opts.every_identity,
        ..Needs::default()
    };
    read(root, opts, needs, progress, None)
}

/// Command line and program name by (PID, name), of the last read.
type Cmdlines = HashMap<(u32, String), (String, String)>;

/// The one body of [`top`] and [`TopReader::top`]: select, read, add GPU
/// memory, build, add the machine picture and cgroup charges. With
/// `known`, every process gets its command line before the view is built,
/// from `known` where the process was seen before (and `known` is
/// replaced by this read's); without, only the rows shown get theirs,
/// after it (unless `needs` already read every one).
fn read(
    root: &ProcRoot,
    opts: &TopOptions,
    needs: Needs,
    progress: &dyn Progress,
    known: Option<&mut Cmdlines>,
) -> Result<Top> {
    let (selected, mut found) = read_rollups(root, &opts.select, needs, progress)?;
    // Swapped shared memory, once across the selection (SwapPss has none).
    crate::usecase::shmem_swap::add(root, &mut found.processes);
    let threads = scan::default_threads();
    // GPU memory (docs/gpu-json.md), where the machine can have any.
    gpu::add_to_top(root, &mut found.processes);
    let every_cmdline = needs.cmdline || known.is_some();
    if let Some(known) = known {
        fill_known_cmdlines(root, &mut found.processes, known, threads);
    }
    // The machine picture explains the whole machine, so it only makes
    // sense when every process is in the scan.
    let meminfo = root.meminfo();
    let mem_total = meminfo.as_ref().and_then(|m| m.get("MemTotal"));
    let meminfo = meminfo.filter(|_| opts.select.is_everything());
    let users = UserNames::default();
    let user_name = |uid: Option<u32>| users.name(uid);
    let mut report =
        build(&found.processes, opts.by, &opts.sort, None, &user_name, meminfo.as_ref());
    // memtally's own process: in the scan and the totals (the machine
    // picture explains every page), but not a row of its own on the live
    // machine unless asked for, as a narrowed selection leaves it out.
    let me = std::process::id();
    let own_row = (root.is_live() && opts.select.is_everything() && !opts.select.include_self)
        .then(|| found.processes.iter().position(|p| p.info.pid == me))
        .flatten();
    // `--sort oom`: every process's score, to sort by (one small read each).
    let sorts_oom = opts.sort.contains(&TopSort::Oom);
    let scores = |pids: &mut dyn Iterator<Item = u32>| -> HashMap<u32, u32> {
        pids.filter_map(|pid| root.oom_score(pid).map(|s| (pid, s))).collect()
    };
    let mut oom_scores = HashMap::new();
    if sorts_oom {
        oom_scores = scores(&mut found.processes.iter().map(|p| p.info.pid));
        crate::analyze::top::sort_by_oom(&mut report, &found.processes, &oom_scores);
    }
    report.omitted = shown_rows(&mut report, opts, own_row);
    if let Some(m) = report.machine.as_mut() {
        m.shmem_mounts = crate::source::mounts::tmpfs_usage(root);
        crate::usecase::machine::add_drivers(root, m);
    }
    // Command lines are read only for the rows shown (each is a read).
    if !every_cmdline {
        let shown: Vec<usize> = report.rows.iter().filter_map(|r| r.process).collect();
        scan::fill_cmdlines(root, &mut found.processes, &shown, threads);
    }
    let exact = if opts.exact {
        let procs: Vec<(u32, String)> =
            found.processes.iter().map(|p| (p.info.pid, p.info.comm.clone())).collect();
        let read =
            read_pages(root, &procs, FramesFor::Shared, crate::error::PageFigure::Exclusive)?;
        let members = crate::analyze::top::row_members(&found.processes, &report, &user_name);
        Some(exact_figures(root, &read, &members, opts.select.is_everything()))
    } else {
        None
    };
    let cgroups = cgroup_charges(root, opts.by, &report);
    // One small read per row shown, only when asked.
    if opts.oom && !sorts_oom {
        let rows = report.rows.iter().filter_map(|r| r.process);
        oom_scores = scores(&mut rows.map(|i| found.processes[i].info.pid));
    }
    let read_hint = (!found.restricted.is_empty()).then(crate::source::access::read_hint);
    let withheld = if read_hint.is_some() && root.is_procfs() {
        let all = crate::source::access::withheld();
        all.into_iter().filter(|w| w.in_process_figures()).collect()
    } else {
        Vec::new()
    };
    let users = users.of(found.processes.iter().filter_map(|p| p.info.uid));
    Ok(Top {
        report,
        scan: found,
        kernel_threads: selected.kernel_threads,
        missing: selected.missing,
        users,
        cgroups,
        read_hint,
        withheld,
        exact,
        mem_total,
        oom_scores,
    })
}

/// The view of the processes libproc read (macOS), from `read_libproc`'s
/// (missing PIDs, scan): the same rows, sums, sorting and cuts as on
/// Linux. What only `/proc` gives (the machine picture, GPU, cgroups, OOM
/// scores, page frames) is absent, not zero.
#[cfg_attr(not(target_os = "macos"), allow(dead_code))] // tested everywhere
pub(crate) fn libproc_view((missing, scan): (Vec<u32>, Scan), opts: &TopOptions) -> Top {
    let users = UserNames::default();
    let user_name = |uid: Option<u32>| users.name(uid);
    let mut report = build(&scan.processes, opts.by, &opts.sort, None, &user_name, None);
    // libproc gives no PSS at all: no row lacks one among others (no `*`).
    for row in &mut report.rows {
        row.without_pss = 0;
    }
    let me = std::process::id();
    let own_row = (opts.select.is_everything() && !opts.select.include_self)
        .then(|| scan.processes.iter().position(|p| p.info.pid == me))
        .flatten();
    report.omitted = shown_rows(&mut report, opts, own_row);
    let users = users.of(scan.processes.iter().filter_map(|p| p.info.uid));
    Top {
        report,
        kernel_threads: 0,
        missing,
        users,
        cgroups: HashMap::new(),
        read_hint: None,
        scan,
        withheld: Vec::new(),
        exact: None,
        mem_total: None,
        oom_scores: HashMap::new(),
    }
}

/// Gives every process its command line: from `known` where the same
/// (PID, name) was read before, else read now; `known` becomes this set.
fn fill_known_cmdlines(
    root: &ProcRoot,
    processes: &mut [ProcMemory],
    known: &mut Cmdlines,
    threads: usize,
) {
    let mut unknown = Vec::new();
    for (i, p) in processes.iter_mut().enumerate() {
        match known.get(&(p.info.pid, p.info.comm.clone())) {
            Some((cmdline, program)) => {
                p.info.cmdline = cmdline.clone();
                p.info.program = program.clone();
            }
            None => unknown.push(i),
        }
    }
    scan::fill_cmdlines(root, processes, &unknown, threads);
    *known = processes
        .iter()
        .map(|p| {
            ((p.info.pid, p.info.comm.clone()), (p.info.cmdline.clone(), p.info.program.clone()))
        })
        .collect();
}

/// The charge of each cgroup row (grouped by cgroup; empty otherwise).
fn cgroup_charges(root: &ProcRoot, by: TopBy, report: &TopReport) -> HashMap<String, CgroupMemory> {
    let mut cgroups = HashMap::new();
    if by == TopBy::Cgroup {
        let croot = CgroupRoot::for_proc(root);
        if let Some(layout) = croot.layout() {
            for r in &report.rows {
                if let Some(m) = croot.read(&layout, &r.key) {
                    cgroups.insert(r.key.clone(), m);
                }
            }
        }
    }
    cgroups
}

/// `top` read again and again (the explorer reads it every second): the
/// same steps and figures as [`top`] over every process, with one saving
/// a refresh earns: a process's command line is read once, when it first
/// appears (or changes its name), not at every read.
#[derive(Debug, Default)]
pub struct TopReader {
    /// Command line and program name by (PID, name), of the last read.
    cmdlines: Cmdlines,
}

impl TopReader {
    /// Every process, grouped by `by` and sorted by `sort`, every row kept;
    /// `cgroups` reads every process's cgroup too.
    pub fn top(&mut self, root: &ProcRoot, by: TopBy, sort: TopSort, cgroups: bool) -> Result<Top> {
        let opts = TopOptions { by, sort: vec![sort], top: None, ..TopOptions::default() };
        let needs = Needs { cgroup: cgroups || by == TopBy::Cgroup, ..Needs::default() };
        read(root, &opts, needs, &Silent, Some(&mut self.cmdlines))
    }
}

/// Reverses, leaves out memtally's own row (`own_row`, the index of its
/// process, with one row per process), filters by `min` and cuts to `top`
/// the rows of `report`;
/// returns how many rows are left out (their bytes stay in the totals).
fn shown_rows(report: &mut TopReport, opts: &TopOptions, own_row: Option<usize>) -> usize {
    if opts.reverse && report.by != TopBy::Tree {
        report.rows.reverse();
    }
    let mut left_out = 0;
    if let Some(own) = own_row.filter(|_| report.by == TopBy::Process) {
        let before = report.rows.len();
        report.rows.retain(|r| r.process != Some(own));
        left_out += before - report.rows.len();
    }
    if let Some(min) = opts.min {
        // A subtree's figures hold its children's: a row kept keeps its
        // parent, so a tree stays a tree.
        let figure = opts
            .sort
            .iter()
            .find_map(|s| match s {
                TopSort::Figure(f) => Some(*f),
                _ => None,
            })
            .unwrap_or(Figure::Pss);
        let before = report.rows.len();
        report.rows.retain(|r| r.sizes.figure(figure).is_some_and(|v| v >= min));
        left_out = before - report.rows.len();
    }
    left_out + crate::analyze::group::keep_first(&mut report.rows, opts.top)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{Error, Unmatched};
    use crate::model::{Note, SizeSource};
    use crate::source::libproc::{BsdInfo, Rusage, Unread};
    use crate::usecase::read::read_libproc;
    use crate::usecase::select::SelectOptions;

    const M: u64 = 1 << 20;

    // macOS `top` through its pure half, on records built by hand (no Mac
    // is on the project's machines; the figures are of the sizes Activity
    // Monitor shows for such processes, not read from one): root's and
    // WindowServer's memory refused as to a user who is not root.
    fn records() -> Vec<(BsdInfo, std::result::Result<Rusage, Unread>)> {
        let p = |pid, ppid, ruid, name: &str| BsdInfo {
            pid,
            ppid,
            ruid,
            comm: name.as_bytes().iter().copied().take(16).collect(),
            name: name.as_bytes().to_vec(),
            path: Some(format!("/Applications/{name}").into_bytes()),
        };
        let used = |footprint: u64, peak: u64, rss: u64| {
            Ok(Rusage {
                phys_footprint: footprint * M,
                lifetime_max_phys_footprint: peak * M,
                resident_size: rss * M,
            })
        };
        vec![
            (p(1, 0, 0, "launchd"), Err(Unread::Denied)),
            (p(150, 1, 88, "WindowServer"), Err(Unread::Denied)),
            (p(600, 1, 501, "Safari"), used(300, 450, 400)),
            (p(640, 600, 501, "com.apple.WebKit.WebContent"), used(412, 658, 500)),
            (p(641, 600, 501, "com.apple.WebKit.WebContent"), used(96, 120, 150)),
            (p(700, 1, 501, "Terminal"), used(80, 90, 120)),
            (p(701, 700, 501, "zsh"), used(3, 4, 6)),
            (p(702, 700, 501, "sleep"), Err(Unread::Gone)),
            (p(std::process::id(), 701, 501, "memtally"), used(9, 9, 12)),
        ]
    }

    fn view(select: SelectOptions, by: TopBy) -> Result<Top> {
        let all = records();
        let infos: Vec<BsdInfo> = all.iter().map(|(b, _)| b.clone()).collect();
        let mut usage =
            |pid: u32| all.iter().find(|(b, _)| b.pid == pid).map(|(_, u)| u.clone()).unwrap();
        let opts = TopOptions::default()
            .with_select(select.resolve()?)
            .with_by(by)
            .with_sort(vec![TopSort::Figure(Figure::Footprint)]);
        let read = read_libproc(&opts.select, &infos, 1, &mut usage, &Silent)?;
        Ok(libproc_view(read, &opts))
    }

    fn keys(top: &Top) -> Vec<&str> {
        top.report.rows.iter().map(|r| r.key.as_str()).collect()
    }

    #[test]
    fn every_process_by_footprint_others_listed_without_figures() {
        let top = view(SelectOptions::default(), TopBy::Process).unwrap();
        // memtally itself: in the scan (and totals), not a row.
        assert_eq!(keys(&top), ["640", "600", "641", "700", "701", "1", "150"]);
        let first = &top.report.rows[0];
        assert_eq!(first.sizes.footprint, Some(412 * M));
        assert_eq!(first.sizes.footprint_peak, Some(658 * M));
        assert_eq!(first.sizes.rss, Some(500 * M));
        assert_eq!((first.sizes.pss, first.without_pss), (None, 0));
        assert_eq!(top.scan.processes.len(), 8);
        assert_eq!(top.scan.restricted, [1, 150]);
        assert_eq!(top.scan.vanished, 2, "sleep exited before its read; one exited while listed");
        assert!(top.scan.processes.iter().all(|p| p.source == SizeSource::Libproc));
        assert_eq!(
            top.notes(),
            [Note::OthersMemory { count: 2 }, Note::ExitedDuringScan { count: 2 }]
        );
        assert!(top.report.machine.is_none() && top.mem_total.is_none());
    }

    #[test]
    fn groups_count_their_processes_and_sum_only_what_adds_up() {
        let top = view(SelectOptions::default(), TopBy::Program).unwrap();
        let web = top.report.rows.iter().find(|r| r.key == "com.apple.WebKit.WebContent").unwrap();
        assert_eq!(web.processes, 2);
        // A page two processes share is in both footprints (as in both
        // RSSes): a sum of either would count it twice, so none is made.
        assert_eq!(
            (web.sizes.footprint, web.sizes.rss, web.sizes.footprint_peak),
            (None, None, None)
        );
        let alone = top.report.rows.iter().find(|r| r.key == "Safari").unwrap();
        assert_eq!(alone.sizes.footprint, Some(300 * M), "one process: its own figures");
        let top = view(SelectOptions::default().with_trees(vec![600]), TopBy::Tree).unwrap();
        let rows: Vec<(&str, usize, usize)> =
            top.report.rows.iter().map(|r| (r.key.as_str(), r.depth, r.processes)).collect();
        assert_eq!(rows, [("600", 0, 3), ("640", 1, 1), ("641", 1, 1)]);
        assert_eq!(top.notes(), [Note::SubtreeRows]);
    }

    #[test]
    fn selections_narrow_as_on_linux() {
        let pids = |s: SelectOptions| {
            let mut v: Vec<u32> = view(s, TopBy::Process)
                .unwrap()
                .scan
                .processes
                .iter()
                .map(|p| p.info.pid)
                .collect();
            v.sort_unstable();
            v
        };
        assert_eq!(pids(SelectOptions::default().with_users(vec!["88".into()])), [150]);
        assert_eq!(
            pids(SelectOptions::default().with_name(Some("WebContent$".into()))),
            [640, 641]
        );
        assert_eq!(pids(SelectOptions::default().with_trees(vec![700])), [700, 701]);
        assert_eq!(pids(SelectOptions::default().with_pids(vec![600, 1])), [1, 600]);
        let e = view(SelectOptions::default().with_pids(vec![9999]), TopBy::Process).unwrap_err();
        assert!(
            matches!(&e, Error::NoMatch { why, .. } if why == &[Unmatched::Missing(vec![9999])]),
            "{e:?}"
        );
        let e = view(SelectOptions::default().with_name(Some("^memtally$".into())), TopBy::Process);
        assert!(
            matches!(&e, Err(Error::NoMatch { why, .. }) if why == &[Unmatched::OnlySelf]),
            "{e:?}"
        );
    }
}
