//! Reads `/proc/meminfo` text into [`MemInfo`].

use crate::model::MemInfo;

/// Parses meminfo text: every `Key: N kB` line, in bytes.
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

#[cfg(test)]
mod tests {
    #[test]
    fn reads_kb_fields_and_skips_counts() {
        let m = super::parse("MemTotal:       16384 kB\nHugePages_Total:       0\n");
        assert_eq!(m.get("MemTotal"), Some(16384 * 1024));
        assert_eq!(m.get("HugePages_Total"), None);
    }
}
