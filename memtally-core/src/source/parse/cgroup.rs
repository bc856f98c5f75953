//! cgroup files: `memory.stat`'s `key value` lines.

/// `key value` lines of memory.stat.
pub fn parse_stat(text: &str) -> Vec<(String, u64)> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(' ')?;
            Some((k.to_string(), v.trim().parse().ok()?))
        })
        .collect()
}
