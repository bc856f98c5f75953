//! `/proc/meminfo`: the machine's own memory accounting, in bytes.

use std::collections::BTreeMap;

/// Every `Key: N kB` line of meminfo, by its meminfo name, in bytes.
/// (`HugePages_Total` and the like carry counts, not kB, and are left out.)
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemInfo {
    pub fields: BTreeMap<String, u64>,
}

impl MemInfo {
    pub fn parse(text: &str) -> MemInfo {
        let fields = text
            .lines()
            .filter_map(|l| {
                let (k, v) = l.split_once(':')?;
                let kb: u64 = v.trim().strip_suffix("kB")?.trim().parse().ok()?;
                Some((k.trim().to_string(), kb.checked_mul(1024)?))
            })
            .collect();
        MemInfo { fields }
    }

    /// A field in bytes, by its meminfo name (`MemTotal`).
    pub fn get(&self, key: &str) -> Option<u64> {
        self.fields.get(key).copied()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_kb_fields_and_skips_counts() {
        let m = super::MemInfo::parse("MemTotal:       16384 kB\nHugePages_Total:       0\n");
        assert_eq!(m.get("MemTotal"), Some(16384 * 1024));
        assert_eq!(m.get("HugePages_Total"), None);
    }
}
