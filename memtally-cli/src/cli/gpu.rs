//! `memtally gpu`: GPU memory per process and device, from DRM and dma-buf
//! fdinfo (and `nvidia-smi` where it exists), each client and buffer
//! counted once.

use std::io::Write;
use std::time::Duration;

use clap::Args;

use crate::analyze::gpu::{build, GpuInput};
use crate::cli::select::{select, SelectArgs};
use crate::error::{Error, Result};
use crate::render::{self, Format};
use crate::source::gpu::nvidia::{self, Nvidia};
use crate::source::gpu::read_many;
use crate::source::scan::{default_threads, Needs, ProcInfo};
use crate::source::ProcRoot;

#[derive(Debug, Args)]
pub struct GpuArgs {
    /// Only this process (shares are still counted across the machine);
    /// or select with --pid, --tree, --name, --user, --cgroup.
    pub pid: Option<u32>,

    #[command(flatten)]
    pub select: SelectArgs,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,

    /// Stop nvidia-smi after this many seconds (its figures are then left out, with a note).
    #[arg(long, value_name = "SECONDS", default_value_t = 5)]
    pub nvidia_timeout: u64,
}

/// The GPU files of every process, with what could not be read.
pub struct MachineGpu {
    pub inputs: Vec<GpuInput>,
    /// Processes whose fds could not be read (permission).
    pub restricted: Vec<u32>,
    pub notes: Vec<String>,
}

/// Reads the GPU files of `infos` (ideally every process, so shares are
/// machine-wide) and, on the live system, asks `nvidia-smi`.
pub fn read_machine(root: &ProcRoot, infos: &[ProcInfo], nvidia_timeout: Duration) -> MachineGpu {
    let pids: Vec<u32> = infos.iter().map(|i| i.pid).collect();
    let scan = read_many(root, &pids, default_threads());
    let mut notes = Vec::new();
    let mut by_pid: std::collections::HashMap<u32, crate::model::gpu::ProcGpu> =
        scan.processes.into_iter().map(|g| (g.pid, g)).collect();
    // nvidia-smi describes the live machine, never a recorded tree.
    if root.is_live() {
        match nvidia::query(nvidia_timeout) {
            Nvidia::Missing => {}
            Nvidia::Failed(why) => notes.push(why),
            Nvidia::Usage(usage) => {
                let mut unknown = Vec::new();
                for (pid, bytes) in usage {
                    match (by_pid.get_mut(&pid), bytes) {
                        (Some(g), Some(b)) => g.nvidia = Some(b),
                        (Some(_), None) => notes.push(format!(
                            "nvidia-smi lists pid {pid} without a used-memory figure ([N/A])"
                        )),
                        (None, _) => unknown.push(pid.to_string()),
                    }
                }
                if !unknown.is_empty() {
                    notes.push(format!(
                        "nvidia-smi lists processes not seen here (another PID namespace?): {}",
                        unknown.join(", ")
                    ));
                }
            }
        }
    }
    if !scan.restricted.is_empty() {
        let n = scan.restricted.len();
        notes.push(format!(
            "the open files of {n} {} could not be read (permission denied; needs the same user, root, or CAP_SYS_PTRACE): their GPU memory is left out",
            if n == 1 { "process" } else { "processes" }
        ));
    }
    for (pid, why) in &scan.failed {
        notes.push(format!("pid {pid}: {why}"));
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

pub fn run(root: &ProcRoot, args: &GpuArgs, out: &mut dyn Write) -> Result<()> {
    let mut sel = args.select.selection()?;
    sel.pids.extend(args.pid);
    let needs = Needs { cmdline: true, cgroup: sel.cgroup.is_some() };
    // Every process is read so that shared clients and buffers are divided
    // among all their holders; the selection only filters what is shown.
    let all = select(root, &Default::default(), needs)?.infos;
    let keep: std::collections::HashSet<u32> = if sel.is_everything() {
        all.iter().map(|p| p.pid).collect()
    } else {
        sel.apply(all.clone()).iter().map(|p| p.pid).collect()
    };
    if let Some(pid) = args.pid {
        if !keep.contains(&pid) {
            return Err(Error::NoSuchProcess { pid, path: root.path().join(pid.to_string()) });
        }
    }
    let machine = read_machine(root, &all, Duration::from_secs(args.nvidia_timeout));
    let mut report = build(&machine.inputs, &|pid| keep.contains(&pid));
    report.notes.extend(machine.notes);
    let partial = !machine.restricted.is_empty();
    let written = match args.format {
        Format::Table => render::gpu::table(&report, out),
        Format::Json => render::gpu::json(&report, partial, out),
        Format::Csv => render::gpu::csv(&report, out),
    };
    written.map_err(|e| Error::io("standard output", e))
}

/// Adds a `gpu` figure (the proportional one of docs/gpu-json.md) to the
/// sizes of `top`'s processes, when this machine or tree can have GPU
/// memory and some process has any: 0 for processes read without any,
/// absent for processes whose open files could not be read. Shares are
/// counted across every process of the tree, selected or not.
pub fn add_to_top(root: &ProcRoot, processes: &mut [crate::source::scan::ProcMemory]) {
    let Some(machine) = whole_tree(root) else { return };
    let read: std::collections::HashSet<u32> = machine.inputs.iter().map(|i| i.pid).collect();
    let report = build(&machine.inputs, &|_| true);
    if report.processes.is_empty() {
        return;
    }
    let by_pid: std::collections::HashMap<u32, u64> =
        report.processes.iter().map(|p| (p.pid, p.proportional)).collect();
    for p in processes.iter_mut() {
        if read.contains(&p.info.pid) {
            p.sizes.set("gpu", by_pid.get(&p.info.pid).copied().unwrap_or(0));
        }
    }
}

/// The GPU rows of `show` for `pids`, shares counted across the whole tree;
/// `None` when there is no GPU memory to show.
pub fn for_show(root: &ProcRoot, pids: &[u32]) -> Option<crate::analyze::gpu::GpuShow> {
    let machine = whole_tree(root)?;
    let shown: std::collections::HashSet<u32> = pids.iter().copied().collect();
    let mut view = crate::analyze::gpu::show_view(&machine.inputs, &|p| shown.contains(&p))?;
    view.notes.extend(machine.notes);
    Some(view)
}

/// Reads the GPU files of every process of the tree, when the machine or
/// tree can have GPU memory at all (a DRM or dma-buf device, recorded fd
/// targets, or nvidia-smi on PATH); `None` otherwise, at the cost of a
/// directory listing.
fn whole_tree(root: &ProcRoot) -> Option<MachineGpu> {
    let pids = root.pids().ok()?;
    let nvidia_on_path = root.is_live()
        && crate::source::tool::find_on_path("nvidia-smi", std::env::var_os("PATH").as_deref())
            .is_some();
    if !nvidia_on_path && !crate::source::gpu::worth_reading(root, &pids) {
        return None;
    }
    let infos: Vec<ProcInfo> =
        pids.iter().map(|&pid| ProcInfo { pid, ..Default::default() }).collect();
    Some(read_machine(root, &infos, nvidia::TIMEOUT))
}
