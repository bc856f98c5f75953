//! The `top` view: processes (or programs, users, cgroups, process trees)
//! ranked by memory, with totals that mean something (PSS: each shared
//! page counted once across the machine) and the machine's own picture
//! from meminfo, so the sums explain `free` instead of contradicting it.

use std::collections::HashMap;

use crate::model::pages::Exclusive;
use crate::model::{
    CgroupMemory, Figure, MemInfo, Note, ProcMemory, Scan, SizeSource, Sizes, Users, Withheld,
};

crate::model::named::named! {
    /// How `top` groups processes.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub enum TopBy {
        #[default]
        Process => "process", "one row per process";
        Program => "program", "processes of one program added up (as ps_mem does)";
        User => "user", "processes of one user added up";
        Cgroup => "cgroup", "processes of one cgroup (container, systemd unit) added up";
        Tree => "tree", "each process with all its descendants added up, as a tree";
    }
}

impl TopBy {
    /// What its rows are, in the plural (`process trees`).
    pub fn plural(self) -> &'static str {
        match self {
            TopBy::Process => "processes",
            TopBy::Program => "programs",
            TopBy::User => "users",
            TopBy::Cgroup => "cgroups",
            TopBy::Tree => "process trees",
        }
    }
}

/// What `top` sorts rows by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopSort {
    /// A figure, largest first; a row that lacks it sorts below every row
    /// that has it.
    Figure(Figure),
    /// How many processes a row adds up, most first.
    Processes,
    /// The process ID, smallest first.
    Pid,
    /// The OOM killer's score (`PID/oom_score`), highest first: the
    /// process it would kill first at the top (procrank -o). Process rows
    /// only; the use case reads the scores and sorts (`sort_by_oom`).
    Oom,
}

crate::model::named::named!(TopSort = [
    TopSort::Figure(Figure::Pss),
    TopSort::Figure(Figure::Uss),
    TopSort::Figure(Figure::Rss),
    TopSort::Figure(Figure::Swap),
    TopSort::Figure(Figure::SwapPss),
    TopSort::Figure(Figure::Dirty),
    TopSort::Figure(Figure::PssDirty),
    TopSort::Figure(Figure::PrivateDirty),
    TopSort::Figure(Figure::SharedDirty),
    TopSort::Figure(Figure::Gpu),
    TopSort::Figure(Figure::Footprint),
    TopSort::Figure(Figure::FootprintPeak),
    TopSort::Figure(Figure::RssPeak),
    TopSort::Figure(Figure::FootprintPss),
    TopSort::Figure(Figure::FootprintPssShmem),
    TopSort::Processes,
    TopSort::Pid,
    TopSort::Oom,
] {
    Processes => "processes", "how many processes a row adds up";
    Pid => "pid", "the process ID, smallest first";
    Oom => "oom", "the OOM killer's score, highest first: who it kills first (procrank -o)";
});

/// One row of the view.
#[derive(Debug, Clone)]
pub struct TopRow {
    /// The grouping key: PID, program, user, cgroup path.
    pub key: String,
    /// Index into the scan's processes, for process and tree rows.
    pub process: Option<usize>,
    /// Depth in the tree view (0 elsewhere).
    pub depth: usize,
    /// How many processes the row adds up.
    pub processes: usize,
    /// How many of them had no PSS (read from status only).
    pub without_pss: usize,
    /// The totals of the processes the row adds up.
    pub sizes: Sizes,
}

impl TopRow {
    /// The row of one process (`i` in the scan).
    fn of(i: usize, p: &ProcMemory) -> TopRow {
        TopRow {
            key: p.info.pid.to_string(),
            process: Some(i),
            depth: 0,
            processes: 1,
            without_pss: usize::from(p.sizes.pss.is_none()),
            sizes: p.sizes.clone(),
        }
    }
}

pub use crate::analyze::machine::{Machine, MachineLine};

/// The whole view.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TopReport {
    /// How the rows are grouped.
    pub by: TopBy,
    /// The rows, sorted and cut to the first `top`.
    pub rows: Vec<TopRow>,
    /// Rows cut by `top` (their figures are still in `totals`).
    pub omitted: usize,
    /// Every scanned process added up.
    pub totals: Sizes,
    /// The machine picture, when meminfo was given and has the basics.
    pub machine: Option<Machine>,
    /// What the rows are sorted by, first field first.
    pub sort: Vec<TopSort>,
}

/// Builds the view over the scanned processes.
pub(crate) fn build(
    processes: &[ProcMemory],
    by: TopBy,
    sort: &[TopSort],
    top: Option<usize>,
    user_name: &dyn Fn(Option<u32>) -> String,
    meminfo: Option<&MemInfo>,
) -> TopReport {
    let mut totals = Sizes::default();
    for p in processes {
        totals.add(&p.sizes);
    }
    let totals = totals.over_processes(processes.len());
    let mut rows: Vec<TopRow> = match by {
        TopBy::Process => processes.iter().enumerate().map(|(i, p)| TopRow::of(i, p)).collect(),
        TopBy::Tree => tree_rows(processes, sort),
        TopBy::Program | TopBy::User | TopBy::Cgroup => {
            let mut index: HashMap<String, usize> = HashMap::new();
            let mut rows: Vec<TopRow> = Vec::new();
            for p in processes {
                let Some(key) = group_key(p, by, user_name) else { continue };
                let i = *index.entry(key.clone()).or_insert_with(|| {
                    rows.push(TopRow {
                        key,
                        process: None,
                        depth: 0,
                        processes: 0,
                        without_pss: 0,
                        sizes: Sizes::default(),
                    });
                    rows.len() - 1
                });
                rows[i].processes += 1;
                rows[i].without_pss += usize::from(p.sizes.pss.is_none());
                rows[i].sizes.add(&p.sizes);
            }
            // A row of several processes is a sum: the summable figures only.
            for row in rows.iter_mut().filter(|r| r.processes > 1) {
                row.sizes.keep_summable();
            }
            rows
        }
    };
    if by != TopBy::Tree {
        // `compare` ends at the key, which no two rows share: a total
        // order, so the unstable sort gives the stable one's rows, without
        // the copy of every row the stable one allocates to merge in.
        rows.sort_unstable_by(|a, b| compare(a, b, sort, processes, &HashMap::new()));
    }
    let omitted = crate::analyze::group::keep_first(&mut rows, top);
    let machine = meminfo.and_then(|m| crate::analyze::machine::machine(m, processes));
    TopReport { by, rows, omitted, totals, machine, sort: sort.to_vec() }
}

/// The key of the program, user or cgroup row that `p` adds to; `None`
/// where `by` groups no processes under a key (process, tree).
pub fn group_key(
    p: &ProcMemory,
    by: TopBy,
    user_name: &dyn Fn(Option<u32>) -> String,
) -> Option<String> {
    match by {
        TopBy::Program => Some(p.info.program.clone()),
        TopBy::User => Some(user_name(p.info.uid)),
        TopBy::Cgroup => Some(p.info.cgroup.clone().unwrap_or_else(|| "(unknown)".into())),
        TopBy::Process | TopBy::Tree => None,
    }
}

/// The processes (indices into `processes`) each row of `report` adds up:
/// its own process, its whole subtree, or every process of its key.
pub(crate) fn row_members(
    processes: &[ProcMemory],
    report: &TopReport,
    user_name: &dyn Fn(Option<u32>) -> String,
) -> Vec<Vec<usize>> {
    let mut children: HashMap<u32, Vec<usize>> = HashMap::new();
    for (i, p) in processes.iter().enumerate() {
        if p.info.ppid != p.info.pid {
            children.entry(p.info.ppid).or_default().push(i);
        }
    }
    let mut by_key: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, p) in processes.iter().enumerate() {
        if let Some(key) = group_key(p, report.by, user_name) {
            by_key.entry(key).or_default().push(i);
        }
    }
    let subtree = |root: usize| {
        let mut out = vec![root];
        let mut seen: std::collections::HashSet<usize> = out.iter().copied().collect();
        let mut k = 0;
        while k < out.len() {
            for &c in children.get(&processes[out[k]].info.pid).into_iter().flatten() {
                if seen.insert(c) {
                    out.push(c);
                }
            }
            k += 1;
        }
        out
    };
    report
        .rows
        .iter()
        .map(|r| match (report.by, r.process) {
            (TopBy::Tree, Some(i)) => subtree(i),
            (_, Some(i)) => vec![i],
            _ => by_key.get(&r.key).cloned().unwrap_or_default(),
        })
        .collect()
}

/// Orders two rows by the sort fields, largest first; a figure a row
/// lacks sorts it below every row that has it. `pid` sorts smallest first. Rows the sort
/// fields do not tell apart (processes whose PSS could not be read) go by
/// RSS (`VmRSS` from status), largest first, then by PID as a number.
fn compare(
    a: &TopRow,
    b: &TopRow,
    sort: &[TopSort],
    processes: &[ProcMemory],
    oom: &HashMap<u32, u32>,
) -> std::cmp::Ordering {
    let pid = |r: &TopRow| r.process.map(|i| processes[i].info.pid);
    let score = |r: &TopRow| pid(r).and_then(|p| oom.get(&p).copied());
    for &f in sort {
        let ord = match f {
            TopSort::Processes => b.processes.cmp(&a.processes),
            TopSort::Pid => pid(a).cmp(&pid(b)),
            TopSort::Oom => score(b).cmp(&score(a)),
            TopSort::Figure(f) => b.sizes.figure(f).cmp(&a.sizes.figure(f)),
        };
        if ord != std::cmp::Ordering::Equal {
            return ord;
        }
    }
    b.sizes.rss.cmp(&a.sizes.rss).then(pid(a).cmp(&pid(b))).then(a.key.cmp(&b.key))
}

/// Sorts the rows of one process each again with their processes' OOM
/// scores (`oom`, by PID) for [`TopSort::Oom`]; a process without a score
/// sorts below every one with.
pub(crate) fn sort_by_oom(
    report: &mut TopReport,
    processes: &[ProcMemory],
    oom: &HashMap<u32, u32>,
) {
    if report.by == TopBy::Process {
        let sort = report.sort.clone();
        report.rows.sort_unstable_by(|a, b| compare(a, b, &sort, processes, oom));
    }
}

/// The dirty figure that adds up across processes: `pss_dirty` (the
/// kernel's Pss_Dirty, Linux 6.0 and later: each shared dirty page divided
/// among the processes that map it) when the processes read have it, else
/// `private_dirty` (pages of one process only: it adds up too, but leaves
/// shared dirty pages out). Shared + private dirty would count a page
/// shared by N processes N times.
pub fn dirty_field(totals: &Sizes) -> Figure {
    if totals.pss_dirty.is_some() || totals.private_dirty.is_none() {
        Figure::PssDirty
    } else {
        Figure::PrivateDirty
    }
}

/// Rows of the tree view: each process with its descendants summed, in
/// depth-first order, siblings ordered by the sort fields.
fn tree_rows(processes: &[ProcMemory], sort: &[TopSort]) -> Vec<TopRow> {
    let by_pid: HashMap<u32, usize> =
        processes.iter().enumerate().map(|(i, p)| (p.info.pid, i)).collect();
    let mut children: HashMap<Option<usize>, Vec<usize>> = HashMap::new();
    for (i, p) in processes.iter().enumerate() {
        let parent = by_pid.get(&p.info.ppid).copied().filter(|&j| j != i);
        children.entry(parent).or_default().push(i);
    }
    // Subtree sums, children before parents.
    let mut order: Vec<(usize, usize)> = Vec::new();
    let mut stack: Vec<(usize, usize)> =
        children.get(&None).map(|r| r.iter().map(|&i| (i, 0)).collect()).unwrap_or_default();
    while let Some((i, depth)) = stack.pop() {
        order.push((i, depth));
        if let Some(kids) = children.get(&Some(i)) {
            stack.extend(kids.iter().map(|&k| (k, depth + 1)));
        }
    }
    let mut subtree: Vec<TopRow> =
        processes.iter().enumerate().map(|(i, p)| TopRow::of(i, p)).collect();
    for &(i, depth) in order.iter().rev() {
        subtree[i].depth = depth;
        if let Some(parent) = by_pid.get(&processes[i].info.ppid).copied().filter(|&j| j != i) {
            let (sizes, n, w) =
                (subtree[i].sizes.clone(), subtree[i].processes, subtree[i].without_pss);
            subtree[parent].sizes.add(&sizes);
            subtree[parent].processes += n;
            subtree[parent].without_pss += w;
        }
    }
    // A subtree of several processes is a sum: the summable figures only.
    for row in subtree.iter_mut().filter(|r| r.processes > 1) {
        row.sizes.keep_summable();
    }
    // Walk again, siblings sorted, to lay the rows out.
    let mut rows = Vec::with_capacity(processes.len());
    let sorted = |mut v: Vec<usize>| {
        v.sort_by(|&a, &b| compare(&subtree[a], &subtree[b], sort, processes, &HashMap::new()));
        v
    };
    let mut stack: Vec<usize> = sorted(children.get(&None).cloned().unwrap_or_default());
    stack.reverse();
    while let Some(i) = stack.pop() {
        rows.push(subtree[i].clone());
        if let Some(kids) = children.get(&Some(i)) {
            let mut kids = sorted(kids.clone());
            kids.reverse();
            stack.extend(kids);
        }
    }
    rows
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

/// The view, the scan it was built from, and what was left out.
#[derive(Debug)]
#[non_exhaustive]
pub struct Top {
    /// The view.
    pub report: TopReport,
    /// Every process read; the report's rows point into it.
    pub scan: Scan,
    /// Kernel threads the selection left out.
    pub kernel_threads: usize,
    /// PIDs named, or named as a tree's root, that did not exist (as opposed
    /// to the scan's `vanished`: listed, then exited while being read).
    pub missing: Vec<u32>,
    /// The names of the scan's users, for the `user` grouping and display.
    pub users: Users,
    /// Grouped by cgroup: each row's own cgroup figures (charge, limits,
    /// memory.stat), by row key, where its files were read.
    pub cgroups: HashMap<String, CgroupMemory>,
    /// Where some processes could not be read in detail: what would let
    /// memtally read them (it depends on who memtally runs as).
    pub read_hint: Option<String>,
    /// Where some processes could not be read in detail and this is the
    /// live system: the figures memtally's privileges leave out of other
    /// users' processes.
    pub withheld: Vec<Withheld>,
    /// With `exact`: each row's exclusive figure (by row), the selection's
    /// as a whole, and their notes.
    pub exact: Option<ExactFigures>,
    /// The machine's RAM (meminfo MemTotal), for each row's share of it
    /// (`%MEM`, as smem -p and htop); `None` where meminfo is unreadable.
    pub mem_total: Option<u64>,
    /// The OOM score of each process row's PID, where asked
    /// (`usecase::top::TopOptions::oom`) and readable.
    pub oom_scores: HashMap<u32, u32>,
}

impl Top {
    /// The process a row is of (a row of one process), in the scan.
    pub fn process_of(&self, row: &TopRow) -> Option<&ProcMemory> {
        row.process.map(|i| &self.scan.processes[i])
    }

    /// What the reader must know to trust the figures, in the order they
    /// are printed. Derived from the view and the scan, so both readers
    /// (`usecase::top::top`, `TopReader`) carry the same notes.
    pub fn notes(&self) -> Vec<Note> {
        let (report, scan) = (&self.report, &self.scan);
        let mut notes = Vec::new();
        if dirty_field(&report.totals) == Figure::PrivateDirty {
            notes.push(Note::NoPssDirty);
        }
        if let Some(bytes) = report.totals.pss_shmem.filter(|&v| v > 0) {
            notes.push(Note::PssShmem { bytes });
        }
        if let Some(hint) = &self.read_hint {
            notes.push(Note::Restricted {
                count: scan.restricted.len(),
                hint: hint.clone(),
                withheld: self.withheld.clone(),
            });
        }
        // macOS (libproc): other users' processes, listed without figures.
        let libproc = scan.processes.iter().any(|p| p.source == SizeSource::Libproc);
        if libproc && !scan.restricted.is_empty() {
            notes.push(Note::OthersMemory { count: scan.restricted.len() });
        }
        if report.by == TopBy::Tree {
            notes.push(Note::SubtreeRows);
        }
        if report.by == TopBy::Cgroup {
            let rows = report.rows.iter().filter(|r| r.key.starts_with("/..")).count();
            if rows > 0 {
                notes.push(Note::CgroupsOutsideNamespace { rows });
            }
        }
        if report.rows.iter().any(|r| r.without_pss > 0 && r.processes > 1) {
            notes.push(Note::RowsWithoutPss);
        }
        if !self.missing.is_empty() {
            notes.push(Note::NoSuchProcess { pids: self.missing.clone() });
        }
        if scan.vanished > 0 {
            notes.push(Note::ExitedDuringScan { count: scan.vanished });
        }
        for (pid, why) in &scan.failed {
            notes.push(Note::Failed { pid: *pid, why: why.clone() });
        }
        if let Some(why) = &scan.cut_short {
            notes.push(Note::RecordingCutShort { why: why.clone() });
        }
        notes.extend(self.exact.iter().flat_map(|e| e.notes.iter().cloned()));
        notes
    }

    /// Whether some process is in the figures without its PSS, or not at all.
    pub fn partial(&self) -> bool {
        !self.scan.restricted.is_empty()
            || !self.scan.failed.is_empty()
            || self.scan.cut_short.is_some()
            || self.exact.as_ref().is_some_and(|e| e.groups.iter().any(Option::is_none))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ProcInfo, SizeSource};

    fn proc(pid: u32, ppid: u32, program: &str, pss: Option<u64>) -> ProcMemory {
        ProcMemory {
            info: ProcInfo {
                pid,
                ppid,
                uid: Some(0),
                program: program.into(),
                ..Default::default()
            },
            source: if pss.is_some() { SizeSource::SmapsRollup } else { SizeSource::Status },
            sizes: Sizes { pss, rss: Some(pss.unwrap_or(5) * 2), ..Default::default() },
        }
    }

    fn build_by(ps: &[ProcMemory], by: TopBy) -> TopReport {
        build(ps, by, &[TopSort::Figure(Figure::Pss)], None, &|_| "root".into(), None)
    }

    #[test]
    fn programs_add_up_and_rank_by_pss() {
        let ps =
            vec![proc(1, 0, "a", Some(10)), proc(2, 1, "b", Some(15)), proc(3, 1, "a", Some(7))];
        let r = build_by(&ps, TopBy::Program);
        assert_eq!(r.rows[0].key, "a");
        assert_eq!(r.rows[0].sizes.pss, Some(17));
        assert_eq!(r.rows[0].processes, 2);
        assert_eq!(r.totals.pss, Some(32));
    }

    #[test]
    fn tree_rows_sum_descendants_in_depth_first_order() {
        let ps = vec![
            proc(1, 0, "init", Some(1)),
            proc(2, 1, "small", Some(2)),
            proc(3, 1, "big", Some(3)),
            proc(4, 3, "kid", Some(10)),
        ];
        let r = build_by(&ps, TopBy::Tree);
        let order: Vec<(&str, usize, Option<u64>)> =
            r.rows.iter().map(|row| (row.key.as_str(), row.depth, row.sizes.pss)).collect();
        assert_eq!(
            order,
            vec![("1", 0, Some(16)), ("3", 1, Some(13)), ("4", 2, Some(10)), ("2", 1, Some(2))]
        );
    }

    #[test]
    fn dirty_is_pss_dirty_where_the_kernel_has_it_else_private_dirty() {
        let new = Sizes { pss_dirty: Some(5), private_dirty: Some(3), ..Default::default() };
        assert_eq!(dirty_field(&new), Figure::PssDirty);
        // Before Linux 6.0: no Pss_Dirty, so private dirty (which adds up).
        let old = Sizes { private_dirty: Some(3), shared_dirty: Some(9), ..Default::default() };
        assert_eq!(dirty_field(&old), Figure::PrivateDirty);
        // Status only: neither; the column stays Pss_Dirty, shown as unknown.
        assert_eq!(dirty_field(&Sizes::default()), Figure::PssDirty);
    }

    #[test]
    fn unreadable_processes_sort_by_rss_then_numeric_pid() {
        let mut ps = vec![proc(9, 0, "a", None), proc(10, 0, "b", None), proc(100, 0, "c", None)];
        ps[0].sizes.rss = Some(1 << 20);
        ps[1].sizes.rss = Some(8 << 20);
        ps[2].sizes.rss = Some(1 << 20);
        let r = build_by(&ps, TopBy::Process);
        let keys: Vec<&str> = r.rows.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, vec!["10", "9", "100"], "RSS first, then PID as a number");
    }

    #[test]
    fn unknown_pss_sorts_last_and_is_counted() {
        let ps = vec![proc(1, 0, "a", None), proc(2, 0, "b", Some(1))];
        let r = build_by(&ps, TopBy::Process);
        assert_eq!(r.rows[0].key, "2");
        assert_eq!(r.rows[1].without_pss, 1);
        assert_eq!(r.totals.pss, Some(1));
    }
}
