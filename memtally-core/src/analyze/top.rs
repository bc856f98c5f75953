//! The `top` view: processes (or programs, users, cgroups, process trees)
//! ranked by memory, with totals that mean something (PSS: each shared
//! page counted once across the machine) and the machine's own picture
//! from meminfo, so the sums explain `free` instead of contradicting it.

use std::collections::HashMap;

use serde::Serialize;

use crate::model::{MemInfo, Named, ProcMemory, Sizes};

/// How `top` groups processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TopBy {
    /// One row per process.
    #[default]
    Process,
    /// Processes of one program added up (as ps_mem does).
    Program,
    /// Processes of one user added up.
    User,
    /// Processes of one cgroup (container, systemd unit) added up.
    Cgroup,
    /// Each process with all its descendants added up, as a tree.
    Tree,
}

impl Named for TopBy {
    const ALL: &'static [TopBy] =
        &[TopBy::Process, TopBy::Program, TopBy::User, TopBy::Cgroup, TopBy::Tree];

    fn name(self) -> &'static str {
        match self {
            TopBy::Process => "process",
            TopBy::Program => "program",
            TopBy::User => "user",
            TopBy::Cgroup => "cgroup",
            TopBy::Tree => "tree",
        }
    }

    fn help(self) -> &'static str {
        match self {
            TopBy::Process => "one row per process",
            TopBy::Program => "processes of one program added up (as ps_mem does)",
            TopBy::User => "processes of one user added up",
            TopBy::Cgroup => "processes of one cgroup (container, systemd unit) added up",
            TopBy::Tree => "each process with all its descendants added up, as a tree",
        }
    }
}

/// Figures `top --sort` accepts.
pub(crate) const TOP_SORT_FIELDS: &[&str] = &[
    "pss",
    "uss",
    "rss",
    "swap",
    "swap_pss",
    "dirty",
    "private_dirty",
    "shared_dirty",
    "gpu",
    "processes",
    "pid",
];

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

/// The machine's memory (bytes, from `/proc/meminfo`), and how much of it
/// processes explain.
#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    /// `MemTotal`.
    pub total: u64,
    /// `MemAvailable`, when the kernel gives it.
    pub available: Option<u64>,
    /// `MemFree`.
    pub free: u64,
    /// `total - free`: what is in use for anything.
    pub used: u64,
    /// Σ PSS of every process that could be read.
    pub processes_pss: u64,
    /// Kernel memory: slab, kernel stacks, page tables, per-CPU.
    pub kernel: Option<u64>,
    /// Page cache and shared memory that no read process maps
    /// (`Buffers + Cached - Σ Pss_File - Σ Pss_Shmem`).
    pub cache_unmapped: Option<u64>,
    /// What is left: processes that could not be read, drivers (GPU),
    /// huge pages, rounding. May be negative.
    pub unattributed: i64,
}

/// The whole view.
#[derive(Debug, Clone)]
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
}

/// Builds the view over the scanned processes.
pub(crate) fn build(
    processes: &[ProcMemory],
    by: TopBy,
    sort: &[String],
    top: Option<usize>,
    user_name: &dyn Fn(Option<u32>) -> String,
    meminfo: Option<&MemInfo>,
) -> TopReport {
    let mut totals = Sizes::default();
    for p in processes {
        totals.add(&p.sizes);
    }
    let mut rows: Vec<TopRow> = match by {
        TopBy::Process => processes.iter().enumerate().map(|(i, p)| TopRow::of(i, p)).collect(),
        TopBy::Tree => tree_rows(processes, sort),
        TopBy::Program | TopBy::User | TopBy::Cgroup => {
            let mut index: HashMap<String, usize> = HashMap::new();
            let mut rows: Vec<TopRow> = Vec::new();
            for p in processes {
                let key = match by {
                    TopBy::Program => p.info.program.clone(),
                    TopBy::User => user_name(p.info.uid),
                    _ => p.info.cgroup.clone().unwrap_or_else(|| "(unknown)".into()),
                };
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
            rows
        }
    };
    if by != TopBy::Tree {
        rows.sort_by(|a, b| compare(a, b, sort, processes));
    }
    let omitted = crate::analyze::group::keep_first(&mut rows, top);
    let machine = meminfo.and_then(|m| machine(m, processes));
    TopReport { by, rows, omitted, totals, machine }
}

/// Orders two rows by the sort fields, largest first; an unknown figure
/// sorts below every known one. `pid` sorts smallest first.
fn compare(
    a: &TopRow,
    b: &TopRow,
    sort: &[String],
    processes: &[ProcMemory],
) -> std::cmp::Ordering {
    let pid = |r: &TopRow| r.process.map(|i| processes[i].info.pid);
    for f in sort {
        let ord = match f.as_str() {
            "processes" => b.processes.cmp(&a.processes),
            "pid" => pid(a).cmp(&pid(b)),
            "swap" => swap(&b.sizes).cmp(&swap(&a.sizes)),
            name => b.sizes.figure(name).cmp(&a.sizes.figure(name)),
        };
        if ord != std::cmp::Ordering::Equal {
            return ord;
        }
    }
    a.key.cmp(&b.key)
}

/// The swap figure shown: proportional swap where known (so shared swapped
/// pages count once), plain swap otherwise.
pub fn swap(s: &Sizes) -> Option<u64> {
    s.swap_pss.or(s.swap)
}

/// Rows of the tree view: each process with its descendants summed, in
/// depth-first order, siblings ordered by the sort fields.
fn tree_rows(processes: &[ProcMemory], sort: &[String]) -> Vec<TopRow> {
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
    // Walk again, siblings sorted, to lay the rows out.
    let mut rows = Vec::with_capacity(processes.len());
    let sorted = |mut v: Vec<usize>| {
        v.sort_by(|&a, &b| compare(&subtree[a], &subtree[b], sort, processes));
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

/// The machine picture; `None` when meminfo lacks the basics.
fn machine(m: &MemInfo, processes: &[ProcMemory]) -> Option<Machine> {
    let total = m.get("MemTotal")?;
    let free = m.get("MemFree")?;
    let used = total.saturating_sub(free);
    let sum = |f: fn(&Sizes) -> Option<u64>| -> Option<u64> {
        processes.iter().filter(|p| p.sizes.pss.is_some()).map(|p| f(&p.sizes)).sum()
    };
    let processes_pss = sum(|s| s.pss).unwrap_or(0);
    let kernel_parts = ["Slab", "KernelStack", "PageTables", "SecPageTables", "Percpu"];
    let kernel = m.get("Slab").map(|_| kernel_parts.iter().filter_map(|k| m.get(k)).sum());
    let cache_unmapped =
        match (m.get("Buffers"), m.get("Cached"), sum(|s| s.pss_file), sum(|s| s.pss_shmem)) {
            (Some(b), Some(c), Some(f), Some(s)) => Some((b + c).saturating_sub(f + s)),
            _ => None,
        };
    let explained = processes_pss + kernel.unwrap_or(0) + cache_unmapped.unwrap_or(0);
    Some(Machine {
        total,
        available: m.get("MemAvailable"),
        free,
        used,
        processes_pss,
        kernel,
        cache_unmapped,
        unattributed: used as i64 - explained as i64,
    })
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
        build(ps, by, &["pss".to_string()], None, &|_| "root".into(), None)
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
    fn unknown_pss_sorts_last_and_is_counted() {
        let ps = vec![proc(1, 0, "a", None), proc(2, 0, "b", Some(1))];
        let r = build_by(&ps, TopBy::Process);
        assert_eq!(r.rows[0].key, "2");
        assert_eq!(r.rows[1].without_pss, 1);
        assert_eq!(r.totals.pss, Some(1));
    }

    #[test]
    fn machine_explains_used_memory() {
        let m = crate::source::meminfo::parse(
            "MemTotal: 1000 kB\nMemFree: 200 kB\nMemAvailable: 600 kB\nBuffers: 10 kB\nCached: 300 kB\nSlab: 50 kB\nKernelStack: 5 kB\nPageTables: 5 kB\n",
        );
        let mut p = proc(1, 0, "a", Some(400 * 1024));
        p.sizes.pss_file = Some(100 * 1024);
        p.sizes.pss_shmem = Some(10 * 1024);
        let r = build(&[p], TopBy::Process, &[], None, &|_| String::new(), Some(&m));
        let mm = r.machine.unwrap();
        assert_eq!(mm.used, 800 * 1024);
        assert_eq!(mm.kernel, Some(60 * 1024));
        assert_eq!(mm.cache_unmapped, Some(200 * 1024));
        assert_eq!(mm.unattributed, (800 - 400 - 60 - 200) * 1024);
    }
}
