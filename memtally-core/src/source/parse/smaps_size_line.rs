//! The fast path of the smaps reader: a key line in the kernel's usual
//! `Key:   N kB` shape, read by one masked comparison against the key
//! expected next, a space skip eight bytes a step and one digit loop
//! (`smaps.rs`'s module comment says why by hand; the figures are in
//! docs/benchmarks.md, show --format json). Any other line is `None`,
//! and the general path in `smaps.rs` reads it to the same result.

use super::smaps_fields::{skip_spaces, MAX_LINE};

/// The size line `buf` starts with, when it is the key expected at
/// `hint` in its usual shape (`Key:`, spaces, digits, ` kB`, newline),
/// read to its newline without searching for it: the key's index, its
/// bytes and the line's length with the newline. The same lines give the
/// same figures as the general path; a line past [`MAX_LINE`] is left to it.
#[inline(always)]
pub(super) fn size_line(buf: &[u8], hint: usize) -> Option<(usize, u64, usize)> {
    let (i, mut at) = expected_key(buf, hint)?;
    at = skip_spaces(buf, at);
    let digits = at;
    let mut kb: u64 = 0;
    while let Some(&b) = buf.get(at).filter(|b| b.is_ascii_digit()) {
        kb = kb.checked_mul(10)?.checked_add((b - b'0') as u64)?;
        at += 1;
    }
    if at == digits || buf.get(at..at + 4)? != b" kB\n" || at + 3 > MAX_LINE {
        return None;
    }
    Some((i, kb.checked_mul(1024)?, at + 4))
}

/// Which of the keys from `hint` on (a window of [`EXPECTED_WINDOW`])
/// `text` starts with, colon included: its index and where its value
/// starts. A key and its colon are at most 16 bytes, so each key is one
/// masked 16-byte comparison (no call to `memcmp` per key line: 6% of
/// `show --format json`'s user time when it was `starts_with`).
#[inline(always)]
pub(super) fn expected_key(text: &[u8], hint: usize) -> Option<(usize, usize)> {
    let end = KEY_PATTERNS.len().min(hint + EXPECTED_WINDOW);
    let window = KEY_PATTERNS.get(hint..end)?;
    let head = text.first_chunk::<16>().map(|h| u128::from_le_bytes(*h));
    window.iter().enumerate().find_map(|(i, k)| {
        let found = match head {
            _ if k.len == 0 => false,
            Some(h) => h & k.mask == k.bits,
            // Shorter than 16 bytes: only the end of a buffer or a file.
            None => text.get(..k.len) == Some(&k.bytes[..k.len]),
        };
        found.then_some((hint + i, k.len))
    })
}

/// A known key with its colon (`Rss:`) as the first bytes of a line:
/// the bytes, the same as a little-endian `u128`, and the mask of their
/// length. `len` 0: a key smaps never prints.
pub(super) struct KeyPattern {
    bytes: [u8; 16],
    bits: u128,
    mask: u128,
    len: usize,
}

/// Beside each of `KNOWN_KEYS`, its [`KeyPattern`], made at compile time.
static KEY_PATTERNS: [KeyPattern; crate::model::sizes::KNOWN_KEYS.len()] = {
    let keys = crate::model::sizes::KNOWN_KEYS;
    let mut out = [const { KeyPattern { bytes: [0; 16], bits: 0, mask: 0, len: 0 } }; {
        crate::model::sizes::KNOWN_KEYS.len()
    }];
    let mut i = 0;
    while i < keys.len() {
        let key = keys[i].smaps.as_bytes();
        // Every smaps key is under 16 bytes; a longer one would fail
        // the build here rather than be matched wrongly.
        assert!(key.len() < 16);
        if !key.is_empty() {
            let mut bytes = [0u8; 16];
            let mut ones = [0u8; 16];
            let mut j = 0;
            while j < key.len() {
                bytes[j] = key[j];
                ones[j] = 0xff;
                j += 1;
            }
            bytes[key.len()] = b':';
            ones[key.len()] = 0xff;
            out[i] = KeyPattern {
                bytes,
                bits: u128::from_le_bytes(bytes),
                mask: u128::from_le_bytes(ones),
                len: key.len() + 1,
            };
        }
        i += 1;
    }
    out
};

/// How many keys from the hint on [`size_line`] tries.
pub(super) const EXPECTED_WINDOW: usize = 4;
