//! The fields of an smaps (or maps) line, read from its bytes: decimal
//! and hex numbers, the kernel's space padding, trimmed and UTF-8 text.
//! The leaf beneath the smaps reader (`smaps.rs`), its header line
//! (`smaps_header.rs`) and its fast size-line path (`smaps_size_line.rs`).

use std::borrow::Cow;

/// The longest line read (a real smaps line is under 5 KiB: a path is
/// at most 4 KiB).
pub(crate) const MAX_LINE: usize = 1 << 20;

pub(super) fn parse_hex(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 16 {
        return None;
    }
    let mut v: u64 = 0;
    for &b in s {
        let d = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => return None,
        };
        v = (v << 4) | d as u64;
    }
    Some(v)
}

pub(super) fn parse_dec(s: &[u8]) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    for &b in s {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((b - b'0') as u64)?;
    }
    Some(v)
}

/// Where the first byte at or after `at` that is not a space is (or the
/// end). Eight bytes a step: the kernel pads each key to 16 columns and
/// its figure to 8, some 19 spaces a line, and a byte a step was half of
/// the size line's instructions.
#[inline(always)]
pub(super) fn skip_spaces(buf: &[u8], mut at: usize) -> usize {
    const SPACES: u64 = u64::from_le_bytes([b' '; 8]);
    while let Some(eight) = buf.get(at..).and_then(|b| b.first_chunk::<8>()) {
        // Zero bytes where `eight` has a space; the lowest other byte is
        // the first that is not one.
        let other = u64::from_le_bytes(*eight) ^ SPACES;
        if other != 0 {
            return at + (other.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while buf.get(at) == Some(&b' ') {
        at += 1;
    }
    at
}

pub(super) fn trim(s: &[u8]) -> &[u8] {
    let start = s.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(s.len());
    let end = s.iter().rposition(|b| !b.is_ascii_whitespace()).map_or(start, |e| e + 1);
    &s[start..end]
}

/// `bytes` as text, a byte that is not UTF-8 replaced as
/// `String::from_utf8_lossy` replaces it. Valid text (every field the
/// kernel prints but a path, and nearly every path) takes the plain
/// check: the lossy path's chunk iterator cost some 80 instructions for
/// a 4-byte `perms`, four times a mapping.
pub(super) fn text(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// `bytes` as the text of `to` (as [`text`] makes it), which keeps its
/// memory. A region is read into the memory of the one two mappings
/// before, whose perms, device, flags and often path are the same bytes:
/// those are kept as they are, no check or copy made.
pub(super) fn set_text(to: &mut String, bytes: &[u8]) {
    if to.as_bytes() != bytes {
        to.clear();
        to.push_str(&text(bytes));
    }
}

/// [`set_text`] into an optional field: its string reused when it has
/// one, else `spare`'s (a string the reader keeps for a field that is
/// set now and then, a mapping's path: so neither allocates again).
pub(super) fn set_opt_text(to: &mut Option<String>, bytes: &[u8], spare: &mut String) {
    let s = to.get_or_insert_with(|| std::mem::take(spare));
    set_text(s, bytes);
}

/// Empties an optional field, its string kept in `spare` for the next
/// [`set_opt_text`].
pub(super) fn clear_opt_text(to: &mut Option<String>, spare: &mut String) {
    if let Some(s) = to.take() {
        if s.capacity() > spare.capacity() {
            *spare = s;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spaces_are_skipped_to_the_first_other_byte() {
        for n in 0..40 {
            for tail in ["", "7", "\t", "\n"] {
                let text = format!("ab{}{tail}", " ".repeat(n));
                assert_eq!(skip_spaces(text.as_bytes(), 2), 2 + n, "{text:?}");
            }
        }
        assert_eq!(skip_spaces(b"  ", 5), 5);
    }

    #[test]
    fn optional_text_keeps_its_memory_across_fields() {
        let (mut field, mut spare) = (None, String::new());
        set_opt_text(&mut field, b"/usr/lib/libc.so.6", &mut spare);
        assert_eq!(field.as_deref(), Some("/usr/lib/libc.so.6"));
        let memory = field.as_deref().map(str::as_ptr);
        clear_opt_text(&mut field, &mut spare);
        assert_eq!(field, None);
        set_opt_text(&mut field, b"caf\xe9", &mut spare);
        set_opt_text(&mut field, b"caf\xe9", &mut spare);
        assert_eq!(field.as_deref(), Some("caf\u{fffd}"));
        assert_eq!(field.as_deref().map(str::as_ptr), memory, "the same string again");
        let mut s = String::from("old");
        set_text(&mut s, b"rw-p");
        assert_eq!(s, "rw-p");
        set_text(&mut s, b"rw-p");
        assert_eq!(s, "rw-p");
        set_text(&mut s, b"r-");
        assert_eq!(s, "r-");
    }
}
