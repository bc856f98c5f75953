//! Gives every process read from its rollup its share of the selection's
//! swapped shared memory (`analyze::shmem_swap`). The rollup cannot tell
//! a shmem object's swap from a private page's, so smaps is read, but
//! only for the processes whose rollup says there may be any: `Swap`
//! above `SwapPss` (shmem swap has no SwapPss; private swap has all of
//! it, copy-on-write shared swap part of it). Everyone else's is 0.

use std::collections::BTreeMap;

use crate::analyze::shmem_swap::{of_regions, shares};
use crate::model::ProcMemory;
use crate::source::proc_root::RegionsFile;
use crate::source::ProcRoot;

/// Sets `shmem_swap` of every process with smaps figures (a status-only
/// process has none to give: it stays unknown).
pub(crate) fn add(root: &ProcRoot, processes: &mut [ProcMemory]) {
    let objects: Vec<BTreeMap<_, u64>> = processes
        .iter()
        .map(|p| {
            let s = &p.sizes;
            let maybe = s.swap.unwrap_or(0) > s.swap_pss.unwrap_or(0);
            if !maybe || s.pss.is_none() {
                return BTreeMap::new();
            }
            // Gone or refused since its rollup was read: nothing to add.
            root.read_regions(p.info.pid, RegionsFile::Smaps, Vec::new())
                .map(|r| of_regions(&r))
                .unwrap_or_default()
        })
        .collect();
    for (p, share) in processes.iter_mut().zip(shares(&objects)) {
        if p.sizes.pss.is_some() {
            p.sizes.shmem_swap = Some(share);
        }
    }
}
