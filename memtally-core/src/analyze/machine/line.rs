//! The words of the machine's waterfall: each line's name (JSON, CSV, the
//! Prometheus `line` label) and the group its short form adds it to.

use serde::Serialize;

/// Declares the lines once: each with its stable name and its group.
macro_rules! lines {
    ($( $(#[$doc:meta])* $line:ident = $name:literal in $group:ident; )*) => {
        /// A line of the waterfall, in waterfall order.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
        #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
        pub enum Line {
            $( $(#[$doc])* #[serde(rename = $name)] $line, )*
        }

        impl Line {
            /// Every line the waterfall can have, in order (the Prometheus
            /// `line` label's whole set).
            pub const ALL: &'static [Line] = &[ $( Line::$line, )* ];

            /// The stable name.
            pub fn name(self) -> &'static str {
                match self { $( Line::$line => $name, )* }
            }

            /// The group the short form adds it to.
            pub fn group(self) -> LineGroup {
                match self { $( Line::$line => LineGroup::$group, )* }
            }
        }
    };
}

lines! {
    /// MemFree.
    Free = "free" in Free;
    /// Σ Pss_Anon of the processes read.
    ProcessAnon = "process_anon" in Processes;
    /// Σ Pss_File of the processes read.
    ProcessFile = "process_file" in Processes;
    /// Σ Pss_Shmem of the processes read.
    ProcessShmem = "process_shmem" in Processes;
    /// PSS a rollup gives but does not split.
    ProcessUnsplit = "process_unsplit" in Processes;
    /// AnonPages no process read accounts for.
    AnonUnread = "anon_unread" in Processes;
    /// Page cache no process read maps.
    PageCacheUnmapped = "page_cache_unmapped" in Cache;
    /// Shmem no process read maps.
    ShmemUnmapped = "shmem_unmapped" in Cache;
    /// SwapCached.
    SwapCache = "swap_cache" in Cache;
    /// zswap's compressed pool.
    Zswap = "zswap" in Swap;
    /// zram devices' RAM.
    Zram = "zram" in Swap;
    /// SReclaimable.
    SlabReclaimable = "slab_reclaimable" in Kernel;
    /// KReclaimable beyond the slab.
    KernelReclaimableOther = "kernel_reclaimable_other" in Kernel;
    /// SUnreclaim.
    SlabUnreclaimable = "slab_unreclaimable" in Kernel;
    /// KernelStack.
    KernelStack = "kernel_stack" in Kernel;
    /// PageTables + SecPageTables.
    PageTables = "page_tables" in Kernel;
    /// VmallocUsed.
    Vmalloc = "vmalloc" in Kernel;
    /// Percpu.
    Percpu = "percpu" in Kernel;
    /// Huge pages of the hugetlbfs pool in use.
    HugetlbUsed = "hugetlb_used" in Hugetlb;
    /// Huge pages reserved in the pool, unused.
    HugetlbFree = "hugetlb_free" in Hugetlb;
    /// GPU driver system memory (GTT).
    GpuGtt = "gpu_gtt" in Drivers;
    /// MemTotal less every other line.
    Unexplained = "unexplained" in Unexplained;
}

/// The short form's groups, in waterfall order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum LineGroup {
    /// Free memory.
    Free,
    /// The processes' PSS, and anonymous memory of processes not read.
    Processes,
    /// Page cache and tmpfs no process read maps.
    Cache,
    /// RAM compressed swap holds.
    Swap,
    /// The kernel's own memory.
    Kernel,
    /// The hugetlbfs pool.
    Hugetlb,
    /// Memory drivers report.
    Drivers,
    /// What no line explains.
    Unexplained,
}

impl LineGroup {
    /// The stable name.
    pub fn name(self) -> &'static str {
        match self {
            LineGroup::Free => "free",
            LineGroup::Processes => "processes",
            LineGroup::Cache => "cache",
            LineGroup::Swap => "swap",
            LineGroup::Kernel => "kernel",
            LineGroup::Hugetlb => "hugetlb",
            LineGroup::Drivers => "drivers",
            LineGroup::Unexplained => "unexplained",
        }
    }
}

impl std::fmt::Display for Line {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

impl std::fmt::Display for LineGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_what_json_prints() {
        for l in Line::ALL {
            assert_eq!(serde_json::to_value(l).unwrap(), l.name());
            assert_eq!(serde_json::to_value(l.group()).unwrap(), l.group().name());
        }
        assert_eq!(Line::ALL.len(), 22);
    }
}
