//! JSON values written straight into an output buffer, byte for byte as
//! serde_json writes them: what the region encoder writes a mapping's
//! numbers, strings and keys with, a region per mapping or line and no
//! value built first.

/// An integer, or `null`.
#[inline]
pub(super) fn opt_u64(w: &mut Vec<u8>, v: Option<u64>) {
    match v {
        Some(v) => decimal(w, v),
        None => w.extend_from_slice(b"null"),
    }
}

/// Two-digit decimal strings `00` to `99`, one after the other.
const DIGIT_PAIRS: &[u8; 200] = b"\
    0001020304050607080910111213141516171819\
    2021222324252627282930313233343536373839\
    4041424344454647484950515253545556575859\
    6061626364656667686970717273747576777879\
    8081828384858687888990919293949596979899";

/// `v` in decimal digits, as serde_json prints integers. One digit (most
/// of smaps' figures are 0) is one byte, written where it is called;
/// more go to [`digits`].
#[inline]
pub(super) fn decimal(w: &mut Vec<u8>, v: u64) {
    if v < 10 {
        w.push(b'0' + v as u8);
    } else {
        digits(w, v);
    }
}

/// `v` (10 or more) in decimal digits: two digits a division, and
/// appended as a fixed 20 bytes then cut to length, which the compiler
/// writes as two stores where a copy of the digits' own length was a
/// call to `memmove` per number. Not the `itoa` crate: it hands back the
/// digits as a `&str` of their own length, whose copy is that same call.
#[inline(never)]
fn digits(w: &mut Vec<u8>, mut v: u64) {
    let len = v.checked_ilog10().map_or(1, |l| l as usize + 1);
    let mut digits = [0u8; 20];
    let mut i = len;
    while v >= 100 {
        let pair = (v % 100) as usize * 2;
        v /= 100;
        i -= 2;
        digits[i..i + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    }
    if v >= 10 {
        let pair = v as usize * 2;
        digits[i - 2..i].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    } else {
        digits[i - 1] = b'0' + v as u8;
    }
    let at = w.len();
    w.extend_from_slice(&digits);
    w.truncate(at + len);
}

/// How long a [`ShortBytes`] may be: room for `,"shmem_pmd_mapped":`
/// and any longer key smaps or vmmap print today.
pub(super) const SHORT_BYTES: usize = 32;

/// A few bytes written often (a key with its punctuation, `,"rss":`),
/// kept in a fixed array and written whole, then cut to length: two
/// stores, where a copy of a slice of its own length is a call to
/// `memmove` (30 keys a region; 2.3% of `show --format json`'s
/// instructions, callgrind). The buffer needs [`SHORT_BYTES`] of room
/// beyond what it holds, which one reserve a region can give.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ShortBytes {
    bytes: [u8; SHORT_BYTES],
    len: usize,
}

impl ShortBytes {
    /// `bytes`, or `None` when longer than [`SHORT_BYTES`].
    pub(super) fn new(bytes: &[u8]) -> Option<ShortBytes> {
        let mut fixed = [0u8; SHORT_BYTES];
        fixed.get_mut(..bytes.len())?.copy_from_slice(bytes);
        Some(ShortBytes { bytes: fixed, len: bytes.len() })
    }

    /// `,"name":`, the bytes before a value of key `name`, made at
    /// compile time: a name that needs escaping or does not fit fails
    /// the build.
    pub(super) const fn key(name: &str) -> ShortBytes {
        let name = name.as_bytes();
        assert!(name.len() + 4 <= SHORT_BYTES, "a key longer than a ShortBytes holds");
        let mut bytes = [0u8; SHORT_BYTES];
        bytes[0] = b',';
        bytes[1] = b'"';
        let mut i = 0;
        while i < name.len() {
            assert!(name[i] >= 0x20 && name[i] != b'"' && name[i] != b'\\', "a key to escape");
            bytes[2 + i] = name[i];
            i += 1;
        }
        bytes[2 + i] = b'"';
        bytes[3 + i] = b':';
        ShortBytes { bytes, len: name.len() + 4 }
    }

    /// Appends the bytes.
    #[inline]
    pub(super) fn write(&self, w: &mut Vec<u8>) {
        let at = w.len();
        w.extend_from_slice(&self.bytes);
        w.truncate(at + self.len);
    }

    /// How many bytes it holds.
    pub(super) fn len(&self) -> usize {
        self.len
    }
}

/// A string. Text without quotes, backslashes or control characters
/// (nearly every path, type and flag) is written as it is, as serde_json
/// writes it; anything else goes through serde_json's escaper.
pub(super) fn string(w: &mut Vec<u8>, s: &str) {
    if plain(s.as_bytes()) {
        w.reserve(s.len() + 2);
        w.push(b'"');
        w.extend_from_slice(s.as_bytes());
        w.push(b'"');
    } else {
        // A `str` into a `Vec`: serde_json cannot fail here.
        let _ = serde_json::to_writer(&mut *w, s);
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

/// A string, or `null`.
pub(super) fn opt_string(w: &mut Vec<u8>, s: Option<&str>) {
    match s {
        Some(s) => string(w, s),
        None => w.extend_from_slice(b"null"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_bytes_write_what_they_hold_and_refuse_more_than_their_room() {
        let mut w = b"{".to_vec();
        for key in [&b""[..], b",\"rss\":", &[b'k'; SHORT_BYTES]] {
            let short = ShortBytes::new(key).unwrap();
            assert_eq!(short.len(), key.len());
            let at = w.len();
            short.write(&mut w);
            assert_eq!(&w[at..], key);
        }
        assert_eq!(ShortBytes::new(&[b'k'; SHORT_BYTES + 1]), None);
        let mut w = Vec::new();
        ShortBytes::key("shmem_pmd_mapped").write(&mut w);
        assert_eq!(w, b",\"shmem_pmd_mapped\":");
    }

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
            string(&mut w, s);
            assert_eq!(w, serde_json::to_vec(s).unwrap(), "{s:?}");
        }
        let mut values = vec![None, Some(0), Some(9), Some(10), Some(u64::MAX)];
        // Every length, and each side of every power of ten.
        for k in 0..20 {
            let p = 10u64.pow(k);
            values.extend([Some(p - 1), Some(p), Some(p + 1), Some(p.wrapping_mul(7) / 3)]);
        }
        values.extend(
            (0..1000).map(|x: u64| Some(x.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (x % 64))),
        );
        for v in values {
            let mut w = Vec::new();
            opt_u64(&mut w, v);
            assert_eq!(w, serde_json::to_vec(&v).unwrap(), "{v:?}");
        }
    }
}
