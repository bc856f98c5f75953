//! The figures `serve` and `export` publish, from one scan of the cheap
//! tier (`smaps_rollup`, `status`; GPU fdinfo where the machine has GPU
//! files), and what the scan cost.

use std::time::{Instant, SystemTime, UNIX_EPOCH};

use crate::analyze::metrics::{build, Collector, Metrics, MetricsBy};
use crate::analyze::select::Selection;
use crate::error::Result;
use crate::model::guard::ReadGuard;
use crate::model::Needs;
use crate::source::cgroup::CgroupRoot;
use crate::source::{scan, ProcRoot};
use crate::usecase::gpu;
use crate::usecase::select::select;

/// What to publish. Built from `default()` and the `with_*` setters.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct MetricsOptions {
    /// Which processes to publish.
    pub select: Selection,
    /// The first N rows by PSS; the rest are added up in one "other" row.
    pub top: usize,
    /// How the rows are grouped.
    pub by: MetricsBy,
    /// Other groupings of the same scan published beside (`--by` given
    /// again): their rows, the first `top` of each.
    pub also: Vec<MetricsBy>,
    /// The bounds of each process's reads beyond the cheap tier.
    pub guard: ReadGuard,
    /// Read the published rows' pages for their exclusive figures
    /// (`usecase::metrics_pages`; needs CAP_SYS_ADMIN, live only).
    pub pages: bool,
}

impl Default for MetricsOptions {
    fn default() -> MetricsOptions {
        MetricsOptions {
            select: Selection::default(),
            top: 50,
            by: MetricsBy::Process,
            also: Vec::new(),
            guard: ReadGuard::default(),
            pages: false,
        }
    }
}

setters!(MetricsOptions {
    with_select: select: Selection,
    with_top: top: usize,
    with_by: by: MetricsBy,
    with_also: also: Vec<MetricsBy>,
    with_guard: guard: ReadGuard,
    with_pages: pages: bool,
});

/// Scans the selected processes and builds the published figures.
pub fn collect(root: &ProcRoot, opts: &MetricsOptions) -> Result<Metrics> {
    let started = Instant::now();
    let bytes_before = crate::source::bytes_read();
    // `comm` is always read; the program needs the command line.
    let cgroup = opts.by == MetricsBy::Cgroup || opts.also.contains(&MetricsBy::Cgroup);
    let needs = Needs { cmdline: true, cgroup, ..Needs::default() };
    let selected = select(root, &opts.select, needs)?;
    let mut found = scan::read_all(root, selected.infos, scan::default_threads(), &|| {});
    crate::usecase::shmem_swap::add(root, &mut found.processes);
    found.vanished += selected.vanished;
    let meminfo = opts.select.is_everything().then(|| root.meminfo()).flatten();
    let (gpu_figures, limited) = gpu::for_metrics(root, opts.guard);
    let collector = Collector {
        scanned: found.processes.len(),
        restricted: found.restricted.len(),
        failed: found.failed.len(),
        vanished: found.vanished,
        kernel_threads: selected.kernel_threads + found.kernel_threads,
        duration_seconds: started.elapsed().as_secs_f64(),
        // The cgroup rows' files are read after this, and not counted.
        bytes_read: crate::source::bytes_read().saturating_sub(bytes_before),
        limited,
        unix_time: SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64()),
    };
    let mut metrics = build(
        &found.processes,
        opts.by.into(),
        opts.top,
        gpu_figures.as_ref(),
        meminfo.as_ref(),
        collector,
    );
    metrics.oom_kills = root.oom_kills();
    // What drivers hold (zram, GTT) leaves the waterfall's remainder, as in `top`.
    if let Some(m) = metrics.machine.as_mut() {
        crate::usecase::machine::add_drivers(root, m);
    }
    if opts.pages {
        crate::usecase::metrics_pages::add(root, &found.processes, &mut metrics, opts.guard);
    }
    for &by in opts.also.iter().filter(|&&b| b != opts.by) {
        let gpu = gpu_figures.as_ref();
        let more =
            build(&found.processes, by.into(), opts.top, gpu, None, metrics.collector.clone());
        if !metrics.also.iter().any(|m| m.by == more.by) {
            metrics.also.push(more);
        }
    }
    // Cgroup rows carry the cgroup's own charge, limits and memory.stat.
    let cgroups = crate::analyze::top::TopBy::from(MetricsBy::Cgroup);
    if metrics.by == cgroups {
        add_charges(root, &mut metrics.rows);
    }
    for m in metrics.also.iter_mut().filter(|m| m.by == cgroups) {
        add_charges(root, &mut m.rows);
    }
    Ok(metrics)
}

/// The cgroup rows' own charge, limits and memory.stat.
fn add_charges(root: &ProcRoot, rows: &mut [crate::analyze::metrics::MetricRow]) {
    let croot = CgroupRoot::for_proc(root);
    if let Some(layout) = croot.layout() {
        for r in rows {
            r.cgroup = croot.read(&layout, &r.key);
        }
    }
}
