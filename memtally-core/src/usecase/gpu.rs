//! GPU memory of the machine, read one way for every view: every process's
//! DRM and dma-buf fdinfo (so shared clients and buffers are divided among
//! all their holders), plus `nvidia-smi` on the live system when asked.
//! `gpu` shows it all, `top` a column, `show` rows, metrics gauges.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::time::Duration;

use crate::analyze::gpu::{build, show_view, GpuInput, GpuReport, GpuShow};
use crate::analyze::metrics::GpuFigures;
use crate::analyze::select::Selection;
use crate::error::{Error, Result};
use crate::model::gpu::NvidiaUsed;
use crate::model::guard::{LimitedCounts, ReadGuard};
use crate::model::{Needs, Note, ProcInfo, ProcMemory};
use crate::source::gpu::nvidia::{self, Nvidia};
use crate::source::gpu::{add_dmabuf_maps, read_many, worth_reading, Depth};
use crate::source::scan::default_threads;
use crate::source::tool::find_on_path;
use crate::source::ProcRoot;
use crate::usecase::select::select;

/// The GPU files of every process read, with what could not be read.
#[derive(Debug, Default)]
pub(crate) struct MachineGpu {
    pub inputs: Vec<GpuInput>,
    /// Processes whose fds could not be read (permission).
    pub restricted: Vec<u32>,
    pub notes: Vec<Note>,
}

/// Reads the GPU files of `infos` (ideally every process, so shares are
/// machine-wide), those `shown` accepts in full and the others only as
/// holders (their fds; their mappings only where a shown process holds a
/// dma-buf, since only a buffer's holders divide it), and, on the live
/// system and when `nvidia_timeout` is given, asks `nvidia-smi` (in a
/// recording, reads what it said at the capture).
pub(crate) fn read_machine(
    root: &ProcRoot,
    infos: &[ProcInfo],
    nvidia_timeout: Option<Duration>,
    guard: ReadGuard,
    shown: &(dyn Fn(u32) -> bool + Sync),
) -> MachineGpu {
    let pids: Vec<u32> = infos.iter().map(|i| i.pid).collect();
    let depth = |pid| if shown(pid) { Depth::Full } else { Depth::Holders };
    let mut scan = read_many(root, &pids, default_threads(), guard, &depth);
    // A buffer a shown process holds is divided among every holder, and
    // a process may hold one by a mapping alone (its fd closed): the
    // others' maps are scanned for those buffers, and only then.
    let inodes: HashSet<u64> = scan
        .processes
        .iter()
        .filter(|g| shown(g.pid))
        .flat_map(|g| {
            g.dmabufs.iter().map(|b| b.inode).chain(g.dmabuf_maps.iter().map(|m| m.inode))
        })
        .collect();
    if !inodes.is_empty() {
        add_dmabuf_maps(root, &mut scan.processes, &|p| !shown(p), &inodes, default_threads());
    }
    let mut notes = Vec::new();
    let mut by_pid: HashMap<u32, crate::model::gpu::ProcGpu> =
        scan.processes.into_iter().map(|g| (g.pid, g)).collect();
    // nvidia-smi describes the live machine; a recorded tree keeps what
    // it said at the capture.
    if let Some(timeout) = nvidia_timeout {
        let said = if root.is_live() { nvidia::query(timeout) } else { nvidia::recorded(root) };
        match said {
            Nvidia::Missing => {}
            Nvidia::Failed(why) => notes.push(Note::NvidiaFailed { why }),
            Nvidia::Usage(usage) => {
                let mut unknown = Vec::new();
                // The processes without a figure, by what nvidia-smi printed instead.
                let mut without: BTreeMap<String, BTreeSet<u32>> = BTreeMap::new();
                for (pid, memory) in usage {
                    // A process whose files could not be read is still seen here.
                    if !by_pid.contains_key(&pid) && !pids.contains(&pid) {
                        if !unknown.contains(&pid) {
                            unknown.push(pid);
                        }
                        continue;
                    }
                    if let NvidiaUsed::Unknown(why) = &memory.used {
                        without.entry(why.clone()).or_default().insert(pid);
                    }
                    let g = by_pid.entry(pid).or_insert_with(|| crate::model::gpu::ProcGpu {
                        pid,
                        ..Default::default()
                    });
                    g.nvidia.push(memory);
                }
                for (why, pids) in without {
                    notes.push(Note::NvidiaWithoutFigure { count: pids.len(), why });
                }
                if !unknown.is_empty() {
                    notes.push(Note::NvidiaUnknown { pids: unknown });
                }
            }
        }
    }
    if !scan.restricted.is_empty() {
        notes.push(Note::GpuRestricted { count: scan.restricted.len() });
    }
    for (pid, why) in &scan.failed {
        notes.push(Note::Failed { pid: *pid, why: why.clone() });
    }
    let inputs = infos
        .iter()
        .filter_map(|i| {
            by_pid.remove(&i.pid).map(|gpu| GpuInput {
                pid: i.pid,
                comm: i.comm.clone(),
                command: i.command(),
                gpu,
            })
        })
        .collect();
    MachineGpu { inputs, restricted: scan.restricted, notes }
}

/// Reads the GPU files of every process of the tree when the machine or
/// tree can have GPU memory at all (a DRM or dma-buf device, recorded fd
/// targets, `nvidia-smi` on PATH when it is to be asked, or its recorded
/// report), those
/// `shown` accepts in full and the others as holders ([`read_machine`]);
/// `None` otherwise, at the cost of a directory listing.
pub(crate) fn whole_tree(
    root: &ProcRoot,
    nvidia_timeout: Option<Duration>,
    guard: ReadGuard,
    shown: &(dyn Fn(u32) -> bool + Sync),
) -> Option<MachineGpu> {
    let pids = root.pids().ok()?;
    let nvidia = nvidia_timeout.is_some()
        && if root.is_live() {
            find_on_path("nvidia-smi", std::env::var_os("PATH").as_deref()).is_some()
        } else {
            !matches!(nvidia::recorded(root), Nvidia::Missing)
        };
    if !nvidia && !worth_reading(root, &pids) {
        return None;
    }
    let infos: Vec<ProcInfo> =
        pids.iter().map(|&pid| ProcInfo { pid, ..Default::default() }).collect();
    Some(read_machine(root, &infos, nvidia_timeout, guard, shown))
}

/// What `memtally gpu` shows. Built from `default()` and the `with_*` setters.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct GpuOptions {
    /// One process that must exist (it is also in `select`).
    pub pid: Option<u32>,
    /// Which processes to show (the others' fds are read too, for the shares).
    pub select: Selection,
    /// How long `nvidia-smi` may take on the live system.
    pub nvidia_timeout: Duration,
}

impl Default for GpuOptions {
    /// Every process; `nvidia-smi` may take 5 seconds (the command line's default).
    fn default() -> GpuOptions {
        GpuOptions {
            pid: None,
            select: Selection::default(),
            nvidia_timeout: Duration::from_secs(5),
        }
    }
}

setters!(GpuOptions {
    with_pid: pid: Option<u32>,
    with_select: select: Selection,
    with_nvidia_timeout: nvidia_timeout: Duration,
});

/// The GPU view of the selected processes, shares counted across every
/// process; partial where some processes' files could not be read.
pub fn gpu(root: &ProcRoot, opts: &GpuOptions) -> Result<GpuReport> {
    let needs = Needs { cmdline: true, cgroup: opts.select.cgroup.is_some(), ..Needs::default() };
    // Every process's fds are read so that shared clients and buffers are
    // divided among all their holders; the selection's files are read in full.
    let all = select(root, &Selection::default(), needs)?.infos;
    let keep: HashSet<u32> = if opts.select.is_everything() {
        all.iter().map(|p| p.pid).collect()
    } else {
        opts.select.apply(all.clone()).iter().map(|p| p.pid).collect()
    };
    if let Some(pid) = opts.pid {
        if !keep.contains(&pid) {
            return Err(Error::NoSuchProcess { pid, path: root.path().join(pid.to_string()) });
        }
    }
    if keep.is_empty() && !opts.select.is_everything() {
        return Err(Error::NoMatch { asked: opts.select.selectors(), why: Vec::new() });
    }
    // The shown processes are read in full; the others only as far as
    // finding the holders of what the shown ones hold needs.
    let shown = |pid| keep.contains(&pid);
    let machine = read_machine(root, &all, Some(opts.nvidia_timeout), ReadGuard::NONE, &shown);
    let mut report = build(&machine.inputs, &|pid| keep.contains(&pid));
    report.notes.extend(machine.notes);
    report.restricted = machine.restricted.len();
    Ok(report)
}

/// Adds a `gpu` figure (the proportional one of docs/gpu-json.md) to the
/// sizes of `top`'s processes, when this machine or tree can have GPU
/// memory and some process has any: 0 for processes read without any,
/// absent for processes whose open files could not be read. Shares are
/// counted across every process of the tree, selected or not.
pub(crate) fn add_to_top(root: &ProcRoot, processes: &mut [ProcMemory]) {
    let Some(machine) = whole_tree(root, Some(nvidia::TIMEOUT), ReadGuard::NONE, &|_| true) else {
        return;
    };
    let read: HashSet<u32> = machine.inputs.iter().map(|i| i.pid).collect();
    let report = build(&machine.inputs, &|_| true);
    if report.processes.is_empty() {
        return;
    }
    let by_pid: HashMap<u32, u64> =
        report.processes.iter().map(|p| (p.pid, p.proportional)).collect();
    for p in processes.iter_mut() {
        if read.contains(&p.info.pid) {
            p.sizes.gpu = Some(by_pid.get(&p.info.pid).copied().unwrap_or(0));
        }
    }
}

/// The GPU rows of `show` for `pids`, shares counted across the whole tree;
/// `None` when there is no GPU memory to show.
pub(crate) fn for_show(root: &ProcRoot, pids: &[u32]) -> Option<GpuShow> {
    let shown: HashSet<u32> = pids.iter().copied().collect();
    let machine =
        whole_tree(root, Some(nvidia::TIMEOUT), ReadGuard::NONE, &|p| shown.contains(&p))?;
    let mut view = show_view(&machine.inputs, &|p| shown.contains(&p))?;
    view.notes.extend(machine.notes);
    Some(view)
}

/// The GPU figures of the published metrics, by PID, from DRM fdinfo (no
/// `nvidia-smi`: a scrape must stay cheap), each process's reads within
/// `guard`; `None` where the machine or tree has no GPU files. Also how
/// many processes the guard limited.
pub(crate) fn for_metrics(
    root: &ProcRoot,
    guard: ReadGuard,
) -> (Option<HashMap<u32, GpuFigures>>, LimitedCounts) {
    let Some(machine) = whole_tree(root, None, guard, &|_| true) else {
        return (None, LimitedCounts::default());
    };
    let mut limited = LimitedCounts::default();
    for why in machine.inputs.iter().filter_map(|i| i.gpu.limited) {
        limited.add(why);
    }
    let report = build(&machine.inputs, &|_| true);
    (Some(report.processes.iter().map(|p| (p.pid, GpuFigures::of(p))).collect()), limited)
}
