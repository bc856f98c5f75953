//! Reads `/proc/meminfo` text into [`MemInfo`].

use super::ParseError;
use crate::model::MemInfo;

/// Parses meminfo text: every `Key: N kB` line, in bytes; lines without a
/// unit (`HugePages_Total: 4`) as counts. Accepts any bytes (UTF-8, read
/// lossily): a line that is not `Key: number [kB]` is skipped, so it never
/// fails; the `Result` is the one signature of the parsers in this folder.
pub fn parse(input: &[u8]) -> Result<MemInfo, ParseError> {
    let mut m = MemInfo::default();
    for l in String::from_utf8_lossy(input).lines() {
        let Some((k, v)) = l.split_once(':') else { continue };
        let (k, v) = (k.trim().to_string(), v.trim());
        if let Some(kb) = v.strip_suffix("kB") {
            if let Some(bytes) = kb.trim().parse::<u64>().ok().and_then(|kb| kb.checked_mul(1024)) {
                m.fields.insert(k, bytes);
            }
        } else if let Ok(n) = v.parse::<u64>() {
            m.counts.insert(k, n);
        }
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_kb_fields_and_counts_apart() {
        let m = super::parse(b"MemTotal:       16384 kB\nHugePages_Total:       3\nbad\n").unwrap();
        assert_eq!(m.get("MemTotal"), Some(16384 * 1024));
        assert_eq!(m.get("HugePages_Total"), None);
        assert_eq!(m.count("HugePages_Total"), Some(3));
    }
}
