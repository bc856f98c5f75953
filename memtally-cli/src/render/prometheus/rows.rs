//! The rows of one grouping (`--by process`, `program` or `cgroup`):
//! their byte figures, GPU figures, process counts and, per cgroup, the
//! cgroup's own charge. `serve --by program --by cgroup` registers two
//! groupings of one scan, each under its own names.

use std::sync::atomic::AtomicU64;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::{Registry, Unit};

use memtally_core::analyze::metrics::{MetricRow, Metrics};
use memtally_core::analyze::top::TopBy;
use memtally_core::model::{CgroupMemory, Named};

use super::{Bytes, GpuFigure, Labels, FIGURES};
use crate::render::table::scrub_label;

/// A row's labels.
pub(super) fn labels(by: TopBy, r: &MetricRow) -> Labels {
    match by {
        TopBy::Program | TopBy::Cgroup => vec![(by.name(), scrub_label(r.key.clone()))],
        _ => vec![
            ("pid", r.pid.map_or_else(|| scrub_label(r.key.clone()), |p| p.to_string())),
            ("comm", scrub_label(r.comm.clone())),
            ("program", scrub_label(r.program.clone())),
        ],
    }
}

/// Registers the rows of `m` (one grouping).
pub(super) fn register(reg: &mut Registry, m: &Metrics) {
    let (what, plural) = (m.by.name(), m.by.plural());
    let labels_of = |r: &MetricRow| labels(m.by, r);
    // Per row: byte figures, then GPU, then (grouped) the process count.
    for (name, help, get) in FIGURES {
        let fam = Family::<Labels, Bytes>::default();
        for r in &m.rows {
            if let Some(v) = get(&r.sizes) {
                fam.get_or_create(&labels_of(r)).set(v);
            }
        }
        let scope = if what == "process" {
            String::new()
        } else {
            format!(" Added up over the {what}'s processes.")
        };
        reg.register_with_unit(
            format!("memtally_{what}_{name}"),
            format!("{help}.{scope} The first --top {plural} by PSS; the rest are in memtally_other_processes_{name}_bytes"),
            Unit::Bytes,
            fam,
        );
    }
    if m.rows.iter().any(|r| r.gpu.is_some()) {
        let gpu_figures: [GpuFigure; 2] = [
            ("gpu_resident", "GPU memory resident for this process's DRM clients (drm-resident-*, else drm-total-*), each client once per process", |g| g.resident),
            ("gpu_purgeable", "GPU memory resident and purgeable (drm-purgeable-*): the driver may drop it", |g| g.purgeable),
        ];
        for (name, help, get) in gpu_figures {
            let fam = Family::<Labels, Bytes>::default();
            for r in &m.rows {
                if let Some(v) = r.gpu.as_ref().and_then(get) {
                    fam.get_or_create(&labels_of(r)).set(v);
                }
            }
            reg.register_with_unit(format!("memtally_{what}_{name}"), help, Unit::Bytes, fam);
        }
    }
    if what != "process" {
        let fam = Family::<Labels, Bytes>::default();
        for r in &m.rows {
            fam.get_or_create(&labels_of(r)).set(r.processes as u64);
        }
        reg.register(
            format!("memtally_{what}_processes"),
            format!("Processes added up in the {what}'s figures"),
            fam,
        );
    }

    if m.rows.iter().any(|r| r.cgroup.is_some()) {
        cgroup_figures(reg, m, &labels_of);
    }
}

/// A cgroup's own figures (docs/prometheus.md): (name, help, value).
type CgroupFigure = (&'static str, &'static str, fn(&CgroupMemory) -> Option<u64>);
const CGROUP_FIGURES: &[CgroupFigure] = &[
    ("usage", "What the kernel charges the cgroup: memory.current (v2) or memory.usage_in_bytes (v1); limits and the OOM killer act on it", |c| c.usage),
    ("limit", "memory.max (v2) or memory.limit_in_bytes (v1); absent when unlimited", |c| c.limit),
    ("high", "memory.high (v2): throttling starts here; absent when unlimited or on v1", |c| c.high),
    ("peak", "memory.peak (v2) or memory.max_usage_in_bytes (v1)", |c| c.peak),
    ("working_set", "usage - inactive_file: the working set kubelet and cAdvisor report and evict by", |c| c.working_set()),
    ("swap", "memory.swap.current (v2) or memory.stat total_swap (v1)", |c| c.swap),
    ("anon", "memory.stat anon (v2) or total_rss (v1)", |c| c.anon),
    ("file", "memory.stat file (v2) or total_cache (v1): page cache charged here, shmem included", |c| c.file),
    ("active_file", "memory.stat active_file", |c| c.active_file),
    ("inactive_file", "memory.stat inactive_file", |c| c.inactive_file),
    ("shmem", "memory.stat shmem: tmpfs, /dev/shm and SysV shm charged here", |c| c.shmem),
    ("kernel", "memory.stat kernel (v2; else its parts) or memory.kmem.usage_in_bytes (v1)", |c| c.kernel),
    ("sock", "memory.stat sock (v2): network buffers", |c| c.sock),
];

/// `memtally_cgroup_charge_*_bytes{cgroup}` for the cgroup rows whose files were read.
fn cgroup_figures(reg: &mut Registry, m: &Metrics, labels_of: &dyn Fn(&MetricRow) -> Labels) {
    for (name, help, get) in CGROUP_FIGURES {
        let fam = Family::<Labels, Bytes>::default();
        let mut any = false;
        for r in &m.rows {
            if let Some(v) = r.cgroup.as_ref().and_then(get) {
                fam.get_or_create(&labels_of(r)).set(v);
                any = true;
            }
        }
        if any {
            reg.register_with_unit(
                format!("memtally_cgroup_charge_{name}"),
                format!("{help}. For the first --top cgroups by PSS"),
                Unit::Bytes,
                fam,
            );
        }
    }
    let kills = Family::<Labels, Counter<u64, AtomicU64>>::default();
    let mut any = false;
    for r in &m.rows {
        if let Some(n) = r.cgroup.as_ref().and_then(|c| c.oom_kills) {
            kills.get_or_create(&labels_of(r)).inc_by(n);
            any = true;
        }
    }
    if any {
        reg.register(
            "memtally_cgroup_charge_oom_kills",
            "Processes the OOM killer killed in the cgroup: memory.events oom_kill (v2) or memory.oom_control oom_kill (v1). For the first --top cgroups by PSS",
            kills,
        );
    }
}
