//! The figures `memtally serve` and `memtally export` publish: the first
//! N rows of the `top` view by PSS, the rest added up into one "other"
//! line (so cardinality stays bounded and sums still cover every
//! process), the machine picture, GPU figures per process where the
//! machine has GPU files, and what the scan cost. Pure: the caller reads,
//! `render::prometheus` prints.

use std::collections::HashMap;

use crate::analyze::gpu::GpuProcess;
use crate::analyze::top::{build as build_top, group_key, Machine, TopBy, TopSort};
use crate::model::sizes::add_opt;
use crate::model::{CgroupMemory, Figure, MemInfo, ProcMemory, Sizes};

/// GPU memory one process (or a group of them) holds: DRM fdinfo (and
/// nvidia-smi where the GPU view has it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GpuFigures {
    /// Σ `drm-resident-*` (or `drm-total-*` where the driver does not say
    /// what is resident) of the DRM clients the process holds, each client
    /// once per process. A client several processes hold shows in full in
    /// each, like RSS.
    pub resident: Option<u64>,
    /// Σ `drm-purgeable-*`: resident, and the driver may drop it.
    pub purgeable: Option<u64>,
}

impl GpuFigures {
    /// A process's figures from the GPU view (`analyze::gpu`, which counts
    /// dup'd and inherited fds of one DRM client once per process).
    pub(crate) fn of(p: &GpuProcess) -> GpuFigures {
        let mut out = GpuFigures { resident: None, purgeable: p.purgeable };
        for e in &p.gpu {
            add_opt(&mut out.resident, e.memory.cost());
        }
        out
    }

    /// Adds `o`'s figures; a figure known on either side stays known.
    pub(crate) fn add(&mut self, o: &GpuFigures) {
        add_opt(&mut self.resident, o.resident);
        add_opt(&mut self.purgeable, o.purgeable);
    }
}

crate::model::named::named! {
    /// How the published rows are grouped.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub enum MetricsBy {
        #[default]
        Process => "process", "one series per process: memtally_process_*{pid,comm,program}";
        Program => "program", "one series per program: memtally_program_*{program}";
        Cgroup => "cgroup", "one series per cgroup: memtally_cgroup_*{cgroup}";
    }
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

/// One published row: a process, a program or a cgroup.
#[derive(Debug, Clone)]
pub struct MetricRow {
    /// The PID, program or cgroup path.
    pub key: String,
    /// The process, for process rows.
    pub pid: Option<u32>,
    /// Short name, for process rows; empty otherwise.
    pub comm: String,
    /// The program, for process rows; empty otherwise.
    pub program: String,
    /// How many processes the row adds up.
    pub processes: usize,
    /// The row's totals, from the scan's cheapest tier (`smaps_rollup`, else
    /// `smaps`, else `status`).
    pub sizes: Sizes,
    /// `None` when GPU files were not read (the machine has none).
    pub gpu: Option<GpuFigures>,
    /// The cgroup's own figures (cgroup rows, where its files were read).
    pub cgroup: Option<CgroupMemory>,
    /// The row's exclusive bytes (`--pages`: resident pages and swap slots
    /// no process outside the row maps, the group's own figure, not a sum
    /// of its members'); `None` where not asked for or not read.
    pub exclusive: Option<u64>,
}

/// The rows past the first N, added up.
#[derive(Debug, Clone, Default)]
pub struct Other {
    /// Rows added up (processes, programs or cgroups).
    pub rows: usize,
    /// Processes they hold.
    pub processes: usize,
    /// Their totals added up.
    pub sizes: Sizes,
    /// Their GPU figures added up; `None` when GPU files were not read.
    pub gpu: Option<GpuFigures>,
}

/// What the collection cost and what it had to leave out.
#[derive(Debug, Clone, Default)]
pub struct Collector {
    /// Processes whose memory was read (including status-only ones).
    pub scanned: usize,
    /// Read from `status` only (permission denied on smaps_rollup): RSS, no PSS.
    pub restricted: usize,
    /// Could not be read at all.
    pub failed: usize,
    /// Exited while being read.
    pub vanished: usize,
    /// Kernel threads left out.
    pub kernel_threads: usize,
    /// Seconds the scan took (listing, reading, GPU files).
    pub duration_seconds: f64,
    /// When the scan ended, seconds since the epoch.
    pub unix_time: f64,
    /// Bytes the scan read from whole `/proc` files (stat, cmdline,
    /// smaps_rollup, status, meminfo, GPU fdinfo); the cgroup rows' own
    /// files, read after the scan, are not counted.
    pub bytes_read: u64,
    /// Processes the read guard kept to their cheap files, by reason.
    pub limited: crate::model::guard::LimitedCounts,
}

/// Everything one exposition holds.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Metrics {
    /// How the rows are grouped.
    pub by: TopBy,
    /// The first N rows by PSS, largest first.
    pub rows: Vec<MetricRow>,
    /// Everything past the first N rows, added up.
    pub other: Other,
    /// The machine picture (only when every process was selected).
    pub machine: Option<Machine>,
    /// What the scan cost and left out.
    pub collector: Collector,
    /// The page read behind the rows' exclusive figures (`--pages`);
    /// `None` where not asked for or refused.
    pub pages: Option<PagesRead>,
    /// OOM kills on the machine since boot (`/proc/vmstat` `oom_kill`),
    /// where the tree has it: machine-wide, whatever the selection.
    pub oom_kills: Option<u64>,
    /// The same scan's rows grouped another way too (`--by program --by
    /// cgroup`): their rows only; the rest, machine and scan figures are
    /// this one's.
    pub also: Vec<Metrics>,
}

/// What the page read of one scan (`--pages`) cost and left out.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PagesRead {
    /// Seconds it took (the guard, pagemap, kpagecount).
    pub duration_seconds: f64,
    /// Processes of the published rows whose pages were read.
    pub read: usize,
    /// Processes the guard did not read: more mappings than the bound.
    pub limited_mappings: usize,
    /// Processes the guard did not read: their resident and swapped bytes
    /// at the measured cost per GiB pass the time budget.
    pub limited_budget: usize,
    /// Processes whose pages could not be read (they exited meanwhile).
    pub unread: usize,
}

/// Builds the published figures from a scan. `by` is `Process`, `Program`
/// or `Cgroup`; `gpu` maps PIDs to their GPU figures when GPU files were
/// read (a process missing from it holds none).
pub fn build(
    processes: &[ProcMemory],
    by: TopBy,
    top: usize,
    gpu: Option<&HashMap<u32, GpuFigures>>,
    meminfo: Option<&MemInfo>,
    collector: Collector,
) -> Metrics {
    let report = build_top(
        processes,
        by,
        &[TopSort::Figure(Figure::Pss)],
        None,
        &|_| String::new(),
        meminfo,
    );
    // GPU figures by the row's key, for grouped rows.
    let group_gpu: HashMap<String, GpuFigures> = match (gpu, by) {
        (Some(g), TopBy::Program | TopBy::Cgroup) => {
            let mut m: HashMap<String, GpuFigures> = HashMap::new();
            for p in processes {
                let Some(key) = group_key(p, by, &|_| String::new()) else { continue };
                let mine = g.get(&p.info.pid).copied().unwrap_or_default();
                m.entry(key).or_default().add(&mine);
            }
            m
        }
        _ => HashMap::new(),
    };
    let mut rows = Vec::with_capacity(top.min(report.rows.len()));
    let mut other = Other { gpu: gpu.map(|_| GpuFigures::default()), ..Default::default() };
    for (n, r) in report.rows.into_iter().enumerate() {
        let process = r.process.map(|i| &processes[i]);
        let row_gpu = gpu.map(|g| match process {
            Some(p) => g.get(&p.info.pid).copied().unwrap_or_default(),
            None => group_gpu.get(&r.key).copied().unwrap_or_default(),
        });
        if n < top {
            rows.push(MetricRow {
                key: r.key,
                pid: process.map(|p| p.info.pid),
                comm: process.map(|p| p.info.comm.clone()).unwrap_or_default(),
                program: process.map(|p| p.info.program.clone()).unwrap_or_default(),
                processes: r.processes,
                sizes: r.sizes,
                gpu: row_gpu,
                cgroup: None,
                exclusive: None,
            });
        } else {
            other.rows += 1;
            other.processes += r.processes;
            other.sizes.add(&r.sizes);
            if let (Some(o), Some(g)) = (other.gpu.as_mut(), row_gpu) {
                o.add(&g);
            }
        }
    }
    // The rest is a sum over processes: the summable figures only (model::summable).
    other.sizes = std::mem::take(&mut other.sizes).over_processes(other.processes);
    Metrics {
        by,
        rows,
        other,
        machine: report.machine,
        collector,
        pages: None,
        oom_kills: None,
        also: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::gpu::{DrmClient, DrmMemory, ProcGpu};
    use crate::model::ProcInfo;
    use crate::model::SizeSource;

    fn proc(pid: u32, program: &str, pss: Option<u64>) -> ProcMemory {
        ProcMemory {
            info: ProcInfo {
                pid,
                comm: program.into(),
                program: program.into(),
                cgroup: Some(format!("/{program}.slice")),
                ..Default::default()
            },
            source: if pss.is_some() { SizeSource::SmapsRollup } else { SizeSource::Status },
            sizes: Sizes { pss, rss: Some(100), ..Default::default() },
        }
    }

    #[test]
    fn first_n_by_pss_and_the_rest_summed() {
        let ps = vec![
            proc(1, "a", Some(10)),
            proc(2, "b", Some(30)),
            proc(3, "c", Some(20)),
            proc(4, "d", None),
        ];
        let m = build(&ps, TopBy::Process, 2, None, None, Collector::default());
        let keys: Vec<_> = m.rows.iter().map(|r| (r.pid, r.sizes.pss)).collect();
        assert_eq!(keys, vec![(Some(2), Some(30)), (Some(3), Some(20))]);
        assert_eq!(m.other.rows, 2);
        assert_eq!(m.other.processes, 2);
        // The status-only process adds no made-up PSS; and the rest is a
        // sum of two processes, which leaves RSS out (model::summable).
        assert_eq!(m.other.sizes.pss, Some(10));
        assert_eq!(m.other.sizes.rss, None);
        assert!(m.other.gpu.is_none() && m.rows[0].gpu.is_none());
    }

    #[test]
    fn programs_group_and_carry_their_gpu_figures() {
        let ps = vec![proc(1, "a", Some(10)), proc(2, "a", Some(5)), proc(3, "b", Some(1))];
        let gpu: HashMap<u32, GpuFigures> = [
            (1, GpuFigures { resident: Some(7), purgeable: Some(2) }),
            (2, GpuFigures { resident: Some(3), purgeable: None }),
        ]
        .into();
        let m = build(&ps, TopBy::Program, 1, Some(&gpu), None, Collector::default());
        assert_eq!(m.rows.len(), 1);
        assert_eq!((m.rows[0].key.as_str(), m.rows[0].processes), ("a", 2));
        assert_eq!(m.rows[0].gpu, Some(GpuFigures { resident: Some(10), purgeable: Some(2) }));
        assert_eq!(m.other.gpu, Some(GpuFigures::default()));
        assert_eq!((m.other.rows, m.other.processes, m.other.sizes.pss), (1, 1, Some(1)));
    }

    #[test]
    fn gpu_clients_count_once_per_process() {
        use crate::analyze::gpu::{build as gpu_build, GpuInput};
        let region = |resident: Option<u64>, purgeable| {
            [(
                if resident.is_some() { "vram" } else { "system" }.to_string(),
                DrmMemory { resident, purgeable, total: Some(999), ..Default::default() },
            )]
            .into()
        };
        let client = |fd, id, resident, purgeable| DrmClient {
            fd,
            driver: "i915".into(),
            pdev: Some("0000:00:02.0".into()),
            client_id: id,
            regions: region(resident, purgeable),
            ..Default::default()
        };
        let gpu = ProcGpu {
            pid: 5,
            drm: vec![
                client(3, Some(7), Some(100), Some(40)),
                client(4, Some(7), Some(100), Some(40)), // dup of fd 3
                client(5, Some(8), None, None),          // no resident: its total counts
                client(6, None, Some(1), None),
                client(9, None, Some(1), None), // no id: each fd its own client
            ],
            ..Default::default()
        };
        let input = GpuInput { pid: 5, comm: "x".into(), command: "x".into(), gpu };
        let report = gpu_build(&[input], &|_| true);
        assert_eq!(
            GpuFigures::of(&report.processes[0]),
            GpuFigures { resident: Some(100 + 999 + 1 + 1), purgeable: Some(40) }
        );
    }
}
