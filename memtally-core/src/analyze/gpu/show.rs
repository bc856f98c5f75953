//! The GPU rows of `show`: the shown processes' clients and buffers,
//! each once, with their machine-wide shares.

use std::collections::HashMap;

use serde::Serialize;

use super::{build, sum_opt, DmaBufShare, GpuEntry, GpuInput};

/// The GPU part of `show` for a set of processes: per (device, driver,
/// region) the clients of the shown processes counted once among them,
/// with each one's machine-wide proportional share; the dma-bufs they
/// hold, each once, with their machine-wide PSS; and their reclaimable
/// bytes. `None` when the shown processes have no GPU memory.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct GpuShow {
    /// Per (device, driver, region): the shown processes' clients, each once,
    /// with `proportional` their machine-wide share.
    pub entries: Vec<GpuEntry>,
    /// The dma-bufs they hold or map, each once; `pss` is their machine-wide share.
    pub dmabuf: DmaBufShare,
    /// `LazyFree` of the shown processes + Σ `drm-purgeable-*` of their clients.
    pub reclaimable: Option<u64>,
    /// Resident bytes of their GPU device and dma-buf mappings (smaps), when read.
    pub mapped: Option<u64>,
    /// Things the reader must know (files that could not be read);
    /// worded by the printer, which serializes them.
    #[serde(skip)]
    pub notes: Vec<crate::model::Note>,
}

pub(crate) fn show_view(inputs: &[GpuInput], shown: &dyn Fn(u32) -> bool) -> Option<GpuShow> {
    let wide = build(inputs, shown);
    if wide.processes.is_empty() {
        return None;
    }
    let mine: Vec<GpuInput> = inputs.iter().filter(|i| shown(i.pid)).cloned().collect();
    let local = build(&mine, &|_| true);
    let mut entries = local.totals;
    // Each (device, driver, region)'s machine-wide share, summed in one
    // pass: looked up per entry, not searched for (a process may hold
    // 100,000 regions; a search per entry was quadratic).
    let mut shares: HashMap<(&str, &str, &str), Option<u64>> = HashMap::new();
    for w in wide.processes.iter().flat_map(|p| p.gpu.iter()) {
        let s = shares.entry((&w.device, &w.driver, &w.region)).or_default();
        *s = sum_opt([*s, w.proportional].into_iter());
    }
    for e in &mut entries {
        e.proportional = shares
            .get(&(e.device.as_str(), e.driver.as_str(), e.region.as_str()))
            .copied()
            .flatten();
    }
    let dmabuf = DmaBufShare {
        count: local.dmabuf.count,
        size: local.dmabuf.size,
        pss: wide.processes.iter().map(|p| p.dmabuf.pss).fold(0, u64::saturating_add),
    };
    let reclaimable = sum_opt(
        [
            sum_opt(mine.iter().map(|i| i.gpu.lazy_free)),
            sum_opt(entries.iter().map(|e| e.memory.purgeable)),
        ]
        .into_iter(),
    );
    Some(GpuShow {
        entries,
        dmabuf,
        // Each client's purgeable bytes once, however many shown processes hold it.
        reclaimable,
        mapped: sum_opt(wide.processes.iter().map(|p| p.mapped)),
        notes: wide.notes,
    })
}
