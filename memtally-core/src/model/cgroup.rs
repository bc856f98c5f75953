//! One cgroup's own memory accounting (memory.current / usage_in_bytes,
//! limits, memory.stat), in bytes, the same shape for cgroup v1 and v2.

use serde::Serialize;

/// What the kernel charges to one cgroup (itself and its descendants).
/// A figure the hierarchy does not give is `None` (v1 has no `high`, no
/// slab split; v2's root has no `memory.current`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CgroupMemory {
    /// The path as `/proc/PID/cgroup` names it (`/system.slice/x.service`).
    pub path: String,
    /// 1 (the v1 memory controller) or 2 (the unified hierarchy).
    pub version: u8,
    /// memory.current (v2) or memory.usage_in_bytes (v1).
    pub usage: Option<u64>,
    /// memory.max (v2) or memory.limit_in_bytes (v1); `None` when unlimited.
    pub limit: Option<u64>,
    /// memory.high (v2); `None` when unlimited or on v1.
    pub high: Option<u64>,
    /// memory.peak (v2) or memory.max_usage_in_bytes (v1).
    pub peak: Option<u64>,
    /// Processes the OOM killer killed in it: memory.events `oom_kill`
    /// (v2) or memory.oom_control `oom_kill` (v1, Linux 4.13 and later).
    /// A count, not bytes.
    pub oom_kills: Option<u64>,
    /// memory.swap.current (v2) or memory.stat total_swap (v1).
    pub swap: Option<u64>,
    /// memory.stat: anon (v2) / total_rss (v1).
    pub anon: Option<u64>,
    /// memory.stat: file (v2) / total_cache (v1); includes shmem.
    pub file: Option<u64>,
    /// memory.stat: active_file (v2) / total_active_file (v1).
    pub active_file: Option<u64>,
    /// memory.stat: inactive_file (v2) / total_inactive_file (v1): what reclaim takes first.
    pub inactive_file: Option<u64>,
    /// memory.stat: shmem (tmpfs, /dev/shm, SysV shm charged here).
    pub shmem: Option<u64>,
    /// memory.stat: file_mapped (v2) / total_mapped_file (v1).
    pub file_mapped: Option<u64>,
    /// memory.stat: slab_reclaimable (v2).
    pub slab_reclaimable: Option<u64>,
    /// memory.stat: slab_unreclaimable (v2).
    pub slab_unreclaimable: Option<u64>,
    /// memory.stat: kernel_stack (v2).
    pub kernel_stack: Option<u64>,
    /// memory.stat: pagetables (v2).
    pub pagetables: Option<u64>,
    /// Network socket buffers (v2).
    pub sock: Option<u64>,
    /// All kernel memory: memory.stat `kernel` (v2, 5.18+) or the sum of
    /// its parts; memory.kmem.usage_in_bytes (v1).
    pub kernel: Option<u64>,
}

impl CgroupMemory {
    /// The working set kubelet and cAdvisor report (and evict by):
    /// usage − inactive file pages, never below 0.
    pub fn working_set(&self) -> Option<u64> {
        Some(self.usage?.saturating_sub(self.inactive_file.unwrap_or(0)))
    }

    /// Whether the usage leaves kernel memory out: the v1 root's
    /// `memory.usage_in_bytes` is the machine's rss + cache (the kernel
    /// computes it from page counts, charging nothing to the root), so
    /// its `memory.kmem.usage_in_bytes` is beside the usage, not in it.
    pub(crate) fn usage_excludes_kernel(&self) -> bool {
        self.version == 1 && self.path.trim_end_matches('/').is_empty()
    }
}
