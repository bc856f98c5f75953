//! Builds a snapshot from processes read in full (pure: the caller reads).

use std::collections::BTreeMap;

use crate::analyze::category::{categorize, Category};
use crate::analyze::group::{add_region, process_total};
use crate::model::snapshot::{SnapGroup, SnapProcess, SnapRegion, Snapshot, SNAPSHOT_VERSION};
use crate::model::{Process, Region, Sizes};

/// Facts about the moment and the machine.
#[derive(Debug, Clone, Default)]
pub struct Moment {
    pub time: Option<String>,
    pub unix_time: Option<f64>,
    pub host: Option<String>,
    pub kernel: Option<String>,
    pub proc_root: Option<String>,
    pub machine: Option<BTreeMap<String, u64>>,
}

/// The categories of some regions, in table order, only those present.
pub fn categories<'a>(regions: impl IntoIterator<Item = &'a Region>) -> Vec<SnapGroup> {
    let mut sums: Vec<(usize, Sizes)> = vec![(0, Sizes::default()); Category::ALL.len()];
    for r in regions {
        let i = Category::ALL.iter().position(|c| *c == categorize(r)).unwrap_or(0);
        sums[i].0 += 1;
        add_region(&mut sums[i].1, r);
    }
    Category::ALL
        .iter()
        .zip(sums)
        .filter(|(_, (n, _))| *n > 0)
        .map(|(c, (regions, sizes))| SnapGroup { category: c.key().to_string(), regions, sizes })
        .collect()
}

fn region(r: &Region) -> SnapRegion {
    SnapRegion {
        start: r.start,
        end: r.end,
        perms: r.perms.clone(),
        path: r.path.clone(),
        category: categorize(r).key().to_string(),
        region_type: r.region_type.clone(),
        purge: None,
        offset: r.offset,
        inode: r.inode,
        sizes: Sizes { kernel_page_size: None, mmu_page_size: None, ..r.sizes.clone() },
    }
}

/// Sums groups of the same category across processes, keeping first-seen order.
pub fn merge_groups<'a>(groups: impl IntoIterator<Item = &'a SnapGroup>) -> Vec<SnapGroup> {
    let mut out: Vec<SnapGroup> = Vec::new();
    for g in groups {
        match out.iter_mut().find(|o| o.category == g.category) {
            Some(o) => {
                o.regions += g.regions;
                o.sizes.add(&g.sizes);
            }
            None => out.push(g.clone()),
        }
    }
    out
}

/// A snapshot of Linux processes.
pub fn linux_snapshot(processes: &[Process], moment: Moment, notes: Vec<String>) -> Snapshot {
    let procs: Vec<SnapProcess> = processes
        .iter()
        .map(|p| SnapProcess {
            pid: Some(p.pid),
            ppid: None,
            user: None,
            comm: p.comm.clone(),
            command: p.command(),
            source: serde_json::to_value(p.source)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default(),
            totals: process_total(p),
            categories: categories(&p.regions),
            regions: p.regions.iter().map(region).collect(),
        })
        .collect();
    let mut totals = Sizes::default();
    for p in &procs {
        totals.add(&p.totals);
    }
    let categories = merge_groups(procs.iter().flat_map(|p| p.categories.iter()));
    Snapshot {
        memtally_snapshot: SNAPSHOT_VERSION,
        kind: "linux".into(),
        time: moment.time,
        unix_time: moment.unix_time,
        host: moment.host,
        kernel: moment.kernel,
        proc_root: moment.proc_root,
        processes: procs,
        totals,
        categories,
        machine: moment.machine,
        notes,
    }
}
