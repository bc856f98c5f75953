//! JSON values written straight into an output buffer, byte for byte as
//! serde_json writes them: the hot paths of the streamed documents
//! (`show` and `vmmap` with `--format json`), which print a region per
//! mapping or line without building a value first.

pub(crate) fn opt_u64(w: &mut Vec<u8>, v: Option<u64>) {
    match v {
        Some(v) => {
            // Decimal digits, as serde_json prints integers.
            let mut digits = [0u8; 20];
            let mut i = digits.len();
            let mut v = v;
            loop {
                i -= 1;
                digits[i] = b'0' + (v % 10) as u8;
                v /= 10;
                if v == 0 {
                    break;
                }
            }
            w.extend_from_slice(&digits[i..]);
        }
        None => w.extend_from_slice(b"null"),
    }
}

pub(crate) fn string(w: &mut Vec<u8>, s: &str) -> std::io::Result<()> {
    // Text without quotes, backslashes or control characters (nearly every
    // path, type and flag) is written as it is, as serde_json writes it;
    // anything else goes through serde_json's escaper.
    if plain(s.as_bytes()) {
        w.reserve(s.len() + 2);
        w.push(b'"');
        w.extend_from_slice(s.as_bytes());
        w.push(b'"');
        Ok(())
    } else {
        serde_json::to_writer(&mut *w, s).map_err(std::io::Error::from)
    }
}

/// No byte that JSON escapes: a control character, `"` or `\\`.
fn plain(s: &[u8]) -> bool {
    // One pass without an early exit, which the compiler vectorizes.
    let mut escaped = false;
    for &b in s {
        escaped |= (b < 0x20) | (b == b'"') | (b == b'\\');
    }
    !escaped
}

pub(crate) fn opt_string(w: &mut Vec<u8>, s: Option<&str>) -> std::io::Result<()> {
    match s {
        Some(s) => string(w, s),
        None => {
            w.extend_from_slice(b"null");
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_written_as_serde_json_writes_them() {
        let cases = [
            "",
            "plain",
            "caf\u{e9} \u{1f600}",
            "q\"uote",
            "back\\slash",
            "tab\tnl\ncr\r",
            "\u{0}\u{1f}\u{7f}",
            "\u{8}\u{c}",
        ];
        for s in cases {
            let mut w = Vec::new();
            string(&mut w, s).unwrap();
            assert_eq!(w, serde_json::to_vec(s).unwrap(), "{s:?}");
        }
        for v in [None, Some(0), Some(9), Some(10), Some(u64::MAX)] {
            let mut w = Vec::new();
            opt_u64(&mut w, v);
            assert_eq!(w, serde_json::to_vec(&v).unwrap(), "{v:?}");
        }
    }
}
