//! cgroup `memory.stat` (v1 and v2): `key value` lines.

use super::ParseError;

/// The `key value` lines of memory.stat, in file order. Accepts any bytes
/// (UTF-8, read lossily): a line without a space or whose value is not a
/// number is skipped, so it never fails; the `Result` is the one signature
/// of the parsers in this folder.
pub fn parse(input: &[u8]) -> Result<Vec<(String, u64)>, ParseError> {
    Ok(String::from_utf8_lossy(input)
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(' ')?;
            Some((k.to_string(), v.trim().parse().ok()?))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_key_value_lines_and_skips_the_rest() {
        let stat = super::parse(b"anon 10\nfile x\nshmem 5\n\nnospace\n").unwrap();
        assert_eq!(stat, [("anon".to_string(), 10), ("shmem".to_string(), 5)]);
    }
}
