//! `/proc/mounts` and `/proc/PID/mounts`: which file system is mounted where.

use super::ParseError;

/// (mount point, file system type) of each line of a mounts file, with
/// the octal escapes (`\040` for a space) undone. Accepts any bytes (UTF-8,
/// read lossily): a line of fewer than three fields is skipped, so it never
/// fails; the `Result` is the one signature of the parsers in this folder.
pub fn parse(input: &[u8]) -> Result<Vec<(String, String)>, ParseError> {
    Ok(String::from_utf8_lossy(input)
        .lines()
        .filter_map(|l| {
            let mut f = l.split(' ');
            let (_dev, point, fstype) = (f.next()?, f.next()?, f.next()?);
            Some((unescape(point), fstype.to_string()))
        })
        .collect())
}

fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let oct = b.get(i + 1..i + 4).filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match (b[i], oct) {
            (b'\\', Some(d)) => {
                out.push(((d[0] - b'0') << 6) | ((d[1] - b'0') << 3) | (d[2] - b'0'));
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    #[test]
    fn mounts_are_split_and_unescaped() {
        let m =
            super::parse(b"tmpfs /dev/shm tmpfs rw 0 0\nx /a\\040b ext4 rw 0 0\nshort\n").unwrap();
        assert_eq!(m, [("/dev/shm".into(), "tmpfs".into()), ("/a b".into(), "ext4".into())]);
    }
}
