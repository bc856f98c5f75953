//! What `serve` and `export` share: their options and one scan that
//! produces [`Metrics`]. Each scan reads the cheap tier only
//! (`smaps_rollup`, `status`; GPU fdinfo where the machine has GPU files).

use std::collections::HashMap;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use clap::{Args, ValueEnum};

use crate::analyze::gpu::{self as analyze_gpu, GpuInput};
use crate::analyze::metrics::{build, Collector, GpuFigures, Metrics};
use crate::analyze::top::TopBy;
use crate::cli::select::{select, SelectArgs};
use crate::error::Result;
use crate::source::meminfo::MemInfo;
use crate::source::scan::{self, Needs};
use crate::source::{gpu, ProcRoot};

/// How the published rows are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum MetricsBy {
    /// One series per process: `memtally_process_*{pid,comm,program}`.
    #[default]
    Process,
    /// One series per program: `memtally_program_*{program}`.
    Program,
    /// One series per cgroup: `memtally_cgroup_*{cgroup}`.
    Cgroup,
}

impl From<MetricsBy> for TopBy {
    fn from(b: MetricsBy) -> TopBy {
        match b {
            MetricsBy::Process => TopBy::Process,
            MetricsBy::Program => TopBy::Program,
            MetricsBy::Cgroup => TopBy::Cgroup,
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct MetricsArgs {
    #[command(flatten)]
    pub select: SelectArgs,

    /// Publish the first N rows by PSS; the rest are added up in
    /// memtally_other_processes_* (bounds the number of series).
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub top: usize,

    /// One series per process, or added up per program or cgroup.
    #[arg(long, value_enum, default_value_t = MetricsBy::Process)]
    pub by: MetricsBy,
}

impl Default for MetricsArgs {
    fn default() -> Self {
        MetricsArgs { select: SelectArgs::default(), top: 50, by: MetricsBy::Process }
    }
}

/// Scans the selected processes and builds the published figures.
pub fn collect(root: &ProcRoot, args: &MetricsArgs) -> Result<Metrics> {
    let started = Instant::now();
    let sel = args.select.selection()?;
    // `comm` is always read; the program needs the command line.
    let needs = Needs { cmdline: true, cgroup: args.by == MetricsBy::Cgroup };
    let selected = select(root, &sel, needs)?;
    let progress = std::sync::atomic::AtomicUsize::new(0);
    let threads = scan::default_threads();
    let mut found = scan::read_all(root, selected.infos, threads, &progress);
    found.vanished += selected.vanished;
    let meminfo = sel
        .is_everything()
        .then(|| std::fs::read_to_string(root.path().join("meminfo")).ok())
        .flatten()
        .map(|t| MemInfo::parse(&t));
    let pids: Vec<u32> = found.processes.iter().map(|p| p.info.pid).collect();
    // GPU files only where the machine (or recording) can have them:
    // listing every process's fds costs a read per process.
    let gpu_figures: Option<HashMap<u32, GpuFigures>> =
        gpu::worth_reading(root, &pids).then(|| {
            let inputs: Vec<GpuInput> = gpu::read_many(root, &pids, threads)
                .processes
                .into_iter()
                .map(|g| GpuInput {
                    pid: g.pid,
                    comm: String::new(),
                    command: String::new(),
                    gpu: g,
                })
                .collect();
            let report = analyze_gpu::build(&inputs, &|_| true);
            report.processes.iter().map(|p| (p.pid, GpuFigures::of(p))).collect()
        });
    let collector = Collector {
        scanned: found.processes.len(),
        restricted: found.restricted.len(),
        failed: found.failed.len(),
        vanished: found.vanished,
        kernel_threads: selected.kernel_threads + found.kernel_threads,
        duration_seconds: started.elapsed().as_secs_f64(),
        unix_time: SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64()),
    };
    Ok(build(
        &found.processes,
        args.by.into(),
        args.top,
        gpu_figures.as_ref(),
        meminfo.as_ref(),
        collector,
    ))
}
