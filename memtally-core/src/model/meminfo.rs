//! The machine's own memory accounting (`/proc/meminfo`), in bytes.

use std::collections::BTreeMap;

/// Every `Key: N kB` line of meminfo, by its meminfo name, in bytes.
/// (`HugePages_Total` and the like carry counts, not kB, and are left out.)
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemInfo {
    /// Bytes by meminfo name (`MemTotal`, `Cached`, `Slab`).
    pub fields: BTreeMap<String, u64>,
}

impl MemInfo {
    /// A field in bytes, by its meminfo name (`MemTotal`).
    pub(crate) fn get(&self, key: &str) -> Option<u64> {
        self.fields.get(key).copied()
    }
}
