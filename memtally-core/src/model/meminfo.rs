//! The machine's own memory accounting (`/proc/meminfo`), in bytes.

use std::collections::BTreeMap;

/// Every `Key: N kB` line of meminfo, by its meminfo name, in bytes, and
/// the lines that carry counts instead (`HugePages_Total`, `HugePages_Free`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemInfo {
    /// Bytes by meminfo name (`MemTotal`, `Cached`, `Slab`).
    pub fields: BTreeMap<String, u64>,
    /// Lines without a unit: page counts (`HugePages_Total: 4`).
    pub counts: BTreeMap<String, u64>,
}

impl MemInfo {
    /// A field in bytes, by its meminfo name (`MemTotal`).
    pub(crate) fn get(&self, key: &str) -> Option<u64> {
        self.fields.get(key).copied()
    }

    /// A unitless count, by its meminfo name (`HugePages_Free`).
    pub fn count(&self, key: &str) -> Option<u64> {
        self.counts.get(key).copied()
    }
}
