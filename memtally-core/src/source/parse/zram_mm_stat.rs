//! Reads a zram device's `mm_stat` (`/sys/block/zramN/mm_stat`) into
//! [`ZramStat`]: one line of space-separated numbers, in the order of the
//! kernel's `Documentation/admin-guide/blockdev/zram.rst`:
//! orig_data_size compr_data_size mem_used_total mem_limit mem_used_max
//! same_pages pages_compacted (then huge_pages, huge_pages_since). The first
//! five are bytes, the rest page counts.

use super::ParseError;
use crate::model::ZramStat;

/// Parses the line. Kernels since 4.11 print at least the first seven
/// fields (newer ones add more at the end, which are ignored); fewer, or
/// a field that is not a number, is an error: a made-up zero would be a
/// wrong figure.
pub fn parse(input: &[u8]) -> Result<ZramStat, ParseError> {
    let text = std::str::from_utf8(input).map_err(|_| ParseError::at(1, "not UTF-8"))?;
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let line = lines.next().ok_or_else(|| ParseError::at(0, "empty mm_stat"))?;
    if lines.next().is_some() {
        return Err(ParseError::at(2, "mm_stat has one line"));
    }
    let fields: Vec<u64> = line
        .split_ascii_whitespace()
        .enumerate()
        .map(|(i, f)| {
            f.parse::<u64>()
                .map_err(|_| ParseError::at(1, format!("field {}: {f:?} is not a number", i + 1)))
        })
        .collect::<Result<_, _>>()?;
    if fields.len() < 7 {
        return Err(ParseError::at(1, format!("{} fields, mm_stat has at least 7", fields.len())));
    }
    Ok(ZramStat {
        orig_data_size: fields[0],
        compr_data_size: fields[1],
        mem_used_total: fields[2],
        mem_limit: fields[3],
        mem_used_max: fields[4],
        same_pages: fields[5],
        huge_pages: fields.get(7).copied(),
    })
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn reads_the_fields_of_a_6_18_kernel() {
        // This machine's zram swap after 64 MiB of random pages went out.
        let s = parse(
            b" 67108864 67108864 67301376        0 67301376        0        0    16384        0\n",
        )
        .unwrap();
        assert_eq!(s.orig_data_size, 64 << 20);
        assert_eq!(s.mem_used_total, 67301376);
        assert_eq!(s.huge_pages, Some(16384));
        assert_eq!(s.ratio(), Some(1.0));
        let idle = parse(
            b"       0        0        0        0        0        0        0        0        0\n",
        )
        .unwrap();
        assert_eq!(idle.ratio(), None);
    }

    #[test]
    fn an_older_kernel_has_seven_fields() {
        let s = parse(b"4096 1024 8192 0 8192 3 0\n").unwrap();
        assert_eq!((s.compr_data_size, s.same_pages, s.huge_pages), (1024, 3, None));
        assert_eq!(s.ratio(), Some(4.0));
    }

    #[test]
    fn short_or_bad_input_is_refused() {
        assert!(parse(b"").is_err());
        assert!(parse(b"1 2 3\n").is_err());
        assert!(parse(b"1 2 x 4 5 6 7\n").is_err());
        assert!(parse(b"1 2 3 4 5 6 7\n1 2 3 4 5 6 7\n").is_err());
        assert!(parse(b"1 2 3 4 5 6 99999999999999999999999\n").is_err());
        assert!(parse(&[0xff, b' ', b'1']).is_err());
    }
}
