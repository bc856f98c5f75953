//! What a zram device says of the RAM it uses (`/sys/block/zramN/mm_stat`),
//! in bytes: zram pages live in RAM that no meminfo field counts.

use serde::Serialize;

/// One zram device's `mm_stat`, in bytes (the kernel's page counts
/// turned into bytes by the page size of the machine that wrote them).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ZramStat {
    /// `orig_data_size`: the data stored, uncompressed (zero-filled and
    /// same-filled pages excluded).
    pub orig_data_size: u64,
    /// `compr_data_size`: the same data, compressed.
    pub compr_data_size: u64,
    /// `mem_used_total`: the RAM the device's allocator holds for it,
    /// metadata and fragmentation included: what it costs the machine.
    pub mem_used_total: u64,
    /// `mem_limit`: the most it may use; 0 = no limit.
    pub mem_limit: u64,
    /// `mem_used_max`: the most it has used since it was reset.
    pub mem_used_max: u64,
    /// `same_pages`: pages stored as one repeated word, with no RAM (a count).
    pub same_pages: u64,
    /// `huge_pages`: pages that would not compress, stored whole (a
    /// count; kernels since 4.20).
    pub huge_pages: Option<u64>,
}

impl ZramStat {
    /// How many times smaller the data is compressed: orig / compr;
    /// `None` when nothing is stored.
    pub fn ratio(&self) -> Option<f64> {
        (self.compr_data_size > 0).then(|| self.orig_data_size as f64 / self.compr_data_size as f64)
    }
}
