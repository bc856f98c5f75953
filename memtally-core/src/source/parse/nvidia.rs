//! `nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits`
//! output: per-process used GPU memory.

use super::ParseError;

/// Reads `pid, used_memory` lines (MiB, no units). `[N/A]` (or any
/// bracketed word) is an unknown figure. Any other line makes the whole
/// output untrusted: an error naming the line.
pub fn parse(out: &[u8]) -> Result<Vec<(u32, Option<u64>)>, ParseError> {
    let text = String::from_utf8_lossy(out);
    let mut usage: Vec<(u32, Option<u64>)> = Vec::new();
    for (n, line) in
        text.lines().enumerate().map(|(i, l)| (i + 1, l.trim())).filter(|(_, l)| !l.is_empty())
    {
        let bad = || {
            ParseError::at(n, format!(
                "nvidia-smi printed a line that is not `pid, used_memory`: {:?}; NVIDIA figures left out",
                line.chars().take(80).collect::<String>()
            ))
        };
        let (pid, mem) = line.split_once(',').ok_or_else(bad)?;
        let pid: u32 = pid.trim().parse().map_err(|_| bad())?;
        let mem = mem.trim();
        let bytes = if mem.starts_with('[') && mem.ends_with(']') {
            None
        } else {
            Some(mem.parse::<u64>().ok().and_then(|m| m.checked_mul(1 << 20)).ok_or_else(bad)?)
        };
        match usage.iter_mut().find(|(p, _)| *p == pid) {
            Some((_, b)) => {
                *b = match (*b, bytes) {
                    (Some(a), Some(c)) => Some(a.saturating_add(c)),
                    (a, c) => a.or(c),
                }
            }
            None => usage.push((pid, bytes)),
        }
    }
    Ok(usage)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_mib_lines() {
        let u = parse(b"1234, 512\n99, [N/A]\n1234, 10\n\n").unwrap();
        assert_eq!(u, vec![(1234, Some(522 << 20)), (99, None)]);
        assert_eq!(parse(b"").unwrap(), vec![]);
    }

    #[test]
    fn garbage_is_one_error() {
        let e = parse(b"1234, 512\nNo devices were found\n").unwrap_err();
        assert!(e.message.contains("No devices were found"), "{e}");
        assert_eq!(e.line, 2);
        assert!(!e.message.contains('\n'));
        assert!(parse(b"12, 3 MiB\n").is_err());
        assert!(parse(b"-1, 3\n").is_err());
        assert!(parse(b"1, 99999999999999999999\n").is_err());
    }
}
