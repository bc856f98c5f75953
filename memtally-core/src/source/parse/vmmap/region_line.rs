//! One region line: `TYPE  START-END  [ SIZES ]  PRT/MAX  SM=XXX
//! [PURGE=X]  DETAIL`, its fields borrowed from the line. The hot path of
//! the reader: no allocation, no regular expression.

use super::tokens::find_byte;
use crate::model::Purge;

/// The fields of a region line, borrowed from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionLine<'a> {
    pub region_type: &'a str,
    pub start: Option<u64>,
    pub end: Option<u64>,
    /// The size tokens in `[ ]`: the first `n_sizes` are set.
    pub size_tokens: [&'a str; 4],
    pub n_sizes: usize,
    pub prot: &'a str,
    pub max_prot: Option<&'a str>,
    pub share_mode: Option<&'a str>,
    pub purge: Purge,
    pub detail: Option<&'a str>,
    /// What was wrong with a field other than the sizes.
    pub damage: Option<String>,
}

impl<'a> RegionLine<'a> {
    /// The size tokens in `[ ]`.
    pub fn sizes(&self) -> &[&'a str] {
        &self.size_tokens[..self.n_sizes]
    }
}

/// `rwx`, `r--` ...: three bytes of `r`, `w`, `x` or `-`. Inlined: twice
/// a region line, where a call each cost about 25 instructions.
#[inline(always)]
fn is_prot(s: &str) -> bool {
    let p = |b: u8| matches!(b, b'r' | b'w' | b'x' | b'-');
    matches!(s.as_bytes(), &[a, b, c] if p(a) && p(b) && p(c))
}

fn split_token(s: &str) -> (&str, &str) {
    let s = s.trim_ascii_start();
    match s.bytes().position(|b| b.is_ascii_whitespace()) {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, ""),
    }
}

/// `trim_ascii_end` that steps over runs of spaces 8 bytes at a time (the
/// type column's padding).
fn trim_end_fast(s: &str) -> &str {
    let b = s.as_bytes();
    let mut end = b.len();
    while end >= 8 && b[end - 8..end] == [b' '; 8] {
        end -= 8;
    }
    s[..end].trim_ascii_end()
}

/// Hex digit values; 0xff for anything else.
const HEX: [u8; 256] = {
    let mut t = [0xffu8; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

fn hex(s: &str) -> Option<u64> {
    hex_bytes(s.as_bytes())
}

/// Reads `TYPE  START-END  [ SIZES ]  PRT/MAX  SM=XXX  [PURGE=X]  DETAIL`.
pub fn parse_region_line(c: &str) -> Result<RegionLine<'_>, String> {
    let lb = find_byte(c, b'[').ok_or("no [ sizes ]")?;
    parse_region_line_at(c, lb)
}

/// [`parse_region_line`] for a line whose first `[` is at `lb` (the caller
/// has looked for it already).
pub fn parse_region_line_at(c: &str, lb: usize) -> Result<RegionLine<'_>, String> {
    match well_formed(c, lb) {
        Some(line) => Ok(line),
        None => parse_any(c, lb),
    }
}

/// What the one pass tells bytes apart by: [`u8::is_ascii_whitespace`]
/// and the `]` that ends the sizes, one load a byte.
const SPACE: u8 = 1;
const CLOSE: u8 = 2;
const CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        if (i as u8).is_ascii_whitespace() {
            t[i] = SPACE;
        }
        i += 1;
    }
    t[b']' as usize] = CLOSE;
    t
};

fn is_space(b: u8) -> bool {
    CLASS[b as usize] == SPACE
}

/// The first index at or after `i` that is not ASCII whitespace (or the end).
fn skip_spaces(b: &[u8], i: usize) -> usize {
    let rest = b.get(i..).unwrap_or_default();
    i + rest.iter().position(|&x| !is_space(x)).unwrap_or(rest.len())
}

/// The first index at or after `i` whose byte's class is in `stop` (or the end).
fn scan_to(b: &[u8], i: usize, stop: u8) -> usize {
    let rest = b.get(i..).unwrap_or_default();
    i + rest.iter().position(|&x| CLASS[x as usize] & stop != 0).unwrap_or(rest.len())
}

/// The first index at or after `i` that is ASCII whitespace (or the end).
fn token_end(b: &[u8], i: usize) -> usize {
    scan_to(b, i, SPACE)
}

/// The region line as nearly every line of a report is written, in one
/// forward pass over its bytes: a hex address range that ends after it
/// starts, 1, 2 or 4 sizes, `PRT/MAX` with both readable, an optional
/// `SM=`, an optional `PURGE=` of N, V or E. `None` for anything else,
/// which [`parse_any`] reads (with its damage and its errors): this gives
/// the same [`RegionLine`] as that would, only sooner.
fn well_formed(c: &str, lb: usize) -> Option<RegionLine<'_>> {
    let b = c.as_bytes();
    // The address range: the token that ends where the spaces before `[` start.
    let mut range_end = lb;
    while range_end > 0 && is_space(b[range_end - 1]) {
        range_end -= 1;
    }
    let (range_start, start, end) = match full_width_range(&b[..range_end]) {
        Some(r) => r,
        None => {
            // After the last space or tab, as `parse_any` cuts it.
            let mut range_start = range_end;
            while range_start > 0 && !matches!(b[range_start - 1], b' ' | b'\t') {
                range_start -= 1;
            }
            let range = &b[range_start..range_end];
            let dash = memchr::memchr(b'-', range)?;
            (range_start, hex_bytes(&range[..dash])?, hex_bytes(&range[dash + 1..])?)
        }
    };
    if end < start {
        return None;
    }
    let region_type = trim_end_fast(&c[..range_start]).trim_ascii();
    if region_type.is_empty() {
        return None;
    }
    // The sizes, up to the first `]`.
    let mut size_tokens = [""; 4];
    let mut n_sizes = 0;
    let mut i = lb + 1;
    let rb = loop {
        i = skip_spaces(b, i);
        match b.get(i) {
            None => return None,
            Some(b']') => break i,
            Some(_) => {}
        }
        let from = i;
        i = scan_to(b, i, SPACE | CLOSE);
        if n_sizes == 4 {
            return None;
        }
        size_tokens[n_sizes] = &c[from..i];
        n_sizes += 1;
    };
    if !matches!(n_sizes, 1 | 2 | 4) {
        return None;
    }
    // `PRT/MAX`, both readable, as one token.
    let p = skip_spaces(b, rb + 1);
    let prot_end = token_end(b, p);
    if prot_end - p != 7 || b[p + 3] != b'/' {
        return None;
    }
    let (prot, max_prot) = (&c[p..p + 3], &c[p + 4..p + 7]);
    if !is_prot(prot) || !is_prot(max_prot) {
        return None;
    }
    let mut rest = prot_end;
    let mut share_mode = None;
    let t = skip_spaces(b, rest);
    if b[t..].starts_with(b"SM=") {
        let t_end = token_end(b, t);
        share_mode = Some(&c[t + 3..t_end]);
        rest = t_end;
    }
    let mut purge = Purge::Unmarked;
    let t = skip_spaces(b, rest);
    if b[t..].starts_with(b"PURGE=") {
        let t_end = token_end(b, t);
        let code = &c[t + 6..t_end];
        if !matches!(code, "N" | "V" | "E") {
            return None;
        }
        purge = Purge::from_code(code);
        rest = t_end;
    }
    let detail = c[rest..].trim_ascii();
    Some(RegionLine {
        region_type,
        start: Some(start),
        end: Some(end),
        size_tokens,
        n_sizes,
        prot,
        max_prot: Some(max_prot),
        share_mode,
        purge,
        detail: (!detail.is_empty()).then_some(detail),
        damage: None,
    })
}

/// The range as 64-bit vmmap prints it, `{16 hex digits}-{16 hex digits}`
/// after a space or tab, at the end of `before`: where it starts and its
/// two addresses. Read with fixed offsets (no scan for its start or its
/// `-`); `None` for any other range.
fn full_width_range(before: &[u8]) -> Option<(usize, u64, u64)> {
    const WIDTH: usize = 16 + 1 + 16;
    let range_start = before.len().checked_sub(WIDTH).filter(|&s| s > 0)?;
    let range = &before[range_start..];
    if range[16] != b'-' || !matches!(before[range_start - 1], b' ' | b'\t') {
        return None;
    }
    Some((range_start, hex16(&range[..16])?, hex16(&range[17..])?))
}

/// Eight bytes whose every byte has its high bit set: what the lane tests
/// below leave where a byte passed.
const HIGH: u64 = 0x8080_8080_8080_8080;
/// One in every byte.
const ONES: u64 = 0x0101_0101_0101_0101;

/// The high bit of each byte of `x` (every byte below 0x80) that lies in
/// `lo..=hi`: adding `0x80 - lo` sets it from `lo` up, adding `0x7f - hi`
/// from above `hi`, and no byte carries into the next.
fn in_range(x: u64, lo: u8, hi: u8) -> u64 {
    let from_lo = x.wrapping_add(ONES * u64::from(0x80 - lo));
    let above_hi = x.wrapping_add(ONES * u64::from(0x7f - hi));
    from_lo & !above_hi & HIGH
}

/// Eight hex digits (either case) as one number, all eight told apart
/// and added up at once in a `u64` rather than a byte at a time (the 32
/// digits of a 64-bit range were 250 of a region line's instructions).
/// `None` when any byte is not a hex digit.
fn hex8(b: [u8; 8]) -> Option<u64> {
    // The first digit in the lowest byte.
    let x = u64::from_le_bytes(b);
    if x & HIGH != 0 {
        return None;
    }
    // `| 0x20` lowers `A`-`F` to `a`-`f`, and nothing else below 0x80
    // into `a`-`f`.
    let hex = in_range(x, b'0', b'9') | in_range(x | 0x2020_2020_2020_2020, b'a', b'f');
    if hex != HIGH {
        return None;
    }
    // A digit's value: its low four bits, plus 9 for a letter (bit 6 set).
    let n = (x & 0x0f0f_0f0f_0f0f_0f0f) + 9 * ((x >> 6) & ONES);
    // Pairs of digits, then pairs of pairs, each first one the higher.
    let n = ((n << 4) + (n >> 8)) & 0x00ff_00ff_00ff_00ff;
    let n = ((n << 8) + (n >> 16)) & 0x0000_ffff_0000_ffff;
    Some(((n << 16) + (n >> 32)) & 0xffff_ffff)
}

/// Sixteen hex digits: [`hex_bytes`] of a full-width address, by [`hex8`].
fn hex16(s: &[u8]) -> Option<u64> {
    let (hi, lo) = s.split_first_chunk::<8>()?;
    let lo: [u8; 8] = lo.try_into().ok()?;
    Some(hex8(*hi)? << 32 | hex8(lo)?)
}

/// [`hex`] of bytes.
fn hex_bytes(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 16 {
        return None;
    }
    let mut v = 0u64;
    let mut bad = 0u8;
    for &c in s {
        let d = HEX[c as usize];
        bad |= d;
        v = (v << 4) | u64::from(d & 0x0f);
    }
    (bad & 0x80 == 0).then_some(v)
}

/// Any region line, damaged or not: what [`well_formed`] leaves.
fn parse_any(c: &str, lb: usize) -> Result<RegionLine<'_>, String> {
    let rb = lb + find_byte(&c[lb..], b']').ok_or("no closing ] (line cut short?)")?;
    let before = trim_end_fast(&c[..lb]);
    let split = memchr::memrchr2(b' ', b'\t', before.as_bytes())
        .ok_or("no region type before the address range")?;
    let region_type = trim_end_fast(&before[..split]).trim_ascii();
    let range = &before[split + 1..];
    if region_type.is_empty() {
        return Err("no region type".into());
    }
    let mut damage = None;
    let dash =
        find_byte(range, b'-').ok_or_else(|| format!("address range {range:?} has no '-'"))?;
    let (a, b) = (&range[..dash], &range[dash + 1..]);
    let (start, end) = match (hex(a), hex(b)) {
        (Some(s), Some(e)) if e >= s => (Some(s), Some(e)),
        (Some(_), Some(_)) => {
            // The sizes in [ ] stand on their own; the addresses are unknown.
            damage = Some(format!("address range {range:?} ends before it starts"));
            (None, None)
        }
        _ if !a.is_empty()
            && !b.is_empty()
            && a.bytes().chain(b.bytes()).all(|x| x.is_ascii_hexdigit()) =>
        {
            damage = Some(format!("address range {range:?} does not fit in 64 bits"));
            (None, None)
        }
        _ if !a.is_empty()
            && !b.is_empty()
            && a.bytes().chain(b.bytes()).all(|x| x.is_ascii_alphabetic())
            && !a.bytes().chain(b.bytes()).all(|x| x.is_ascii_hexdigit()) =>
        {
            (None, None) // a placeholder such as `kernel-kernel`
        }
        _ => return Err(format!("address range {range:?} is not hex")),
    };
    let mut size_tokens = [""; 4];
    let mut n_sizes = 0;
    for tok in c[lb + 1..rb].split_ascii_whitespace() {
        if n_sizes == 4 {
            return Err("more than 4 sizes in [ ]".into());
        }
        size_tokens[n_sizes] = tok;
        n_sizes += 1;
    }
    if !matches!(n_sizes, 1 | 2 | 4) {
        return Err(format!("{n_sizes} sizes in [ ] (expected 1, 2 or 4)"));
    }
    let (prot_tok, mut rest) = split_token(&c[rb + 1..]);
    if prot_tok.is_empty() {
        return Err("nothing after the sizes (line cut short?)".into());
    }
    let (prot, max_glued) = match prot_tok.split_once('/') {
        Some((p, m)) if is_prot(p) => (p, m),
        // The sizes are whole; the protection is damaged or cut short.
        _ => {
            damage = Some(format!("bad protection {prot_tok:?}"));
            (prot_tok, "")
        }
    };
    let mut share_mode = None;
    let glued = if is_prot(max_glued) || damage.is_some() { None } else { max_glued.find("SM=") };
    let max_prot = match glued {
        // `r--/rwSM=COW`: a `- ` was lost (seen in a mangled copy).
        Some(i) => {
            let (m, sm) = max_glued.split_at(i);
            share_mode = Some(&sm[3..]);
            damage = Some(format!("protection and share mode run together in {max_glued:?}"));
            if is_prot(m) {
                Some(m)
            } else {
                None
            }
        }
        None if is_prot(max_glued) => Some(max_glued),
        None if damage.is_some() => None,
        None => {
            damage = Some(format!("bad max protection {max_glued:?}"));
            None
        }
    };
    if share_mode.is_none() {
        let (tok, r) = split_token(rest);
        if let Some(sm) = tok.strip_prefix("SM=") {
            share_mode = Some(sm);
            rest = r;
        }
    }
    let mut purge = Purge::Unmarked;
    let (tok, r) = split_token(rest);
    if let Some(p) = tok.strip_prefix("PURGE=") {
        purge = Purge::from_code(p);
        if !matches!(p, "N" | "V" | "E") {
            damage = Some(format!("unknown purge state {tok:?}"));
        }
        rest = r;
    }
    let detail = rest.trim_ascii();
    Ok(RegionLine {
        region_type,
        start,
        end,
        size_tokens,
        n_sizes,
        prot,
        max_prot,
        share_mode,
        purge,
        detail: (!detail.is_empty()).then_some(detail),
        damage,
    })
}

#[cfg(test)]
mod tests {
    use super::super::tokens::content;
    use super::*;

    /// Whether the one-pass reader agrees with the general one on `c`:
    /// every line it reads is read the same by [`parse_any`].
    fn agrees(c: &str) -> bool {
        let Some(lb) = find_byte(c, b'[') else { return true };
        match well_formed(c, lb) {
            Some(fast) => parse_any(c, lb).as_ref() == Ok(&fast),
            None => true,
        }
    }

    #[test]
    fn one_pass_reads_a_plain_line_as_the_general_reader() {
        let c = "IOAccelerator (graphics) 0000000101d24000-0000000102d24000 [ 16.0M  12.0M  1408K  3584K] rw-/rwx SM=SHM PURGE=N  /usr/lib/dyld";
        let lb = find_byte(c, b'[').unwrap();
        let fast = well_formed(c, lb).expect("a plain line takes the one pass");
        assert_eq!(fast.region_type, "IOAccelerator (graphics)");
        assert_eq!(fast.sizes(), ["16.0M", "12.0M", "1408K", "3584K"]);
        assert_eq!((fast.purge, fast.detail), (Purge::NonVolatile, Some("/usr/lib/dyld")));
        assert_eq!(Ok(fast), parse_any(c, lb));
    }

    /// Lines at the edges of what the one pass takes: each is read as
    /// the general reader reads it, or left to it.
    #[test]
    fn one_pass_agrees_on_edge_lines() {
        let lines = [
            "__TEXT 1000-2000 [ 16K] r-x/r-x SM=COW",
            "__TEXT 1000-2000 [16K 8K]r-x/r-x",
            "__TEXT\t1000-2000\t[ 16K ]\tr-x/r-x\tSM=COW\tPURGE=V\td e t",
            "__TEXT 1000-2000\x0c[ 16K] r-x/r-x SM=COW",
            "__TEXT 1000\x0c-2000 [ 16K] r-x/r-x SM=COW",
            "__TEXT x1000-2000 [ 16K] r-x/r-x SM=COW",
            "__TEXT 2000-1000 [ 16K] r-x/r-x SM=COW",
            "__TEXT 1000-2000 [ 16K 1K 2K] r-x/r-x",
            "__TEXT 1000-2000 [ 16K 1K 2K 3K 4K] r-x/r-x",
            "__TEXT 1000-2000 [ ] r-x/r-x",
            "__TEXT 1000-2000 [ 16K",
            "__TEXT 1000-2000 [ 16K] rwx",
            "__TEXT 1000-2000 [ 16K] rwx/rw",
            "__TEXT 1000-2000 [ 16K] r-x/rwSM=COW",
            "__TEXT 1000-2000 [ 16K] r-x/r-x SM=",
            "__TEXT 1000-2000 [ 16K] r-x/r-x SM=COW PURGE=Q",
            "__TEXT 1000-2000 [ 16K] r-x/r-x SM=COW PURGE=",
            "__TEXT 1000-2000 [ 16K] r-x/r-x PURGE=E",
            "__TEXT 1000-2000 [ 16K] r-x/r-x  é/ü ",
            "__TEXT 1000-2000 [ 16K] é-x/r-x",
            "1000-2000 [ 16K] r-x/r-x",
            " 1000-2000 [ 16K] r-x/r-x",
            "kernel-kernel [ 16K] r-x/r-x",
            "stuff kernel-kernel [ 16K] r-x/r-x",
            "__TEXT 00000000000000000-1 [ 16K] r-x/r-x",
            "__TEXT 0-ffffffffffffffff [ 16K] r-x/r-x",
            "__TEXT -1 [ 16K] r-x/r-x",
            "__TEXT 1- [ 16K] r-x/r-x",
            "unused __DATA   1000-2000 [ 16K] ]  r-x/r-x",
        ];
        for c in lines {
            assert!(agrees(c), "{c:?}");
        }
        // The plain ones take the one pass (so this test covers it).
        assert!(well_formed(lines[0], 16).is_some());
        assert!(well_formed(lines[2], 17).is_some());
    }

    /// Sixteen digits read eight at a time as one at a time: every byte
    /// at every place among hex digits, and digits of every value.
    #[test]
    fn hex16_reads_as_hex_bytes() {
        let digits = b"0123456789abcdefABCDEF";
        for place in 0..16 {
            for byte in 0..=255u8 {
                let mut s = *b"0f9A3c00d1E2b7F8";
                s[place] = byte;
                assert_eq!(hex16(&s), hex_bytes(&s), "{s:?}");
            }
        }
        let mut s = [b'0'; 16];
        for k in 0..4096usize {
            for (i, c) in s.iter_mut().enumerate() {
                *c = digits[(k * 7 + i * 13 + k / (i + 1)) % digits.len()];
            }
            assert_eq!(hex16(&s), hex_bytes(&s), "{s:?}");
        }
        assert_eq!(hex16(b"ffffffffffffffff"), Some(u64::MAX));
        assert_eq!(hex16(b"0000000100000000"), Some(1 << 32));
        assert_eq!(hex16(b"000000010000000"), None, "15 digits");
    }

    /// Every line of every recorded report the tests hold.
    #[test]
    fn one_pass_agrees_on_every_recorded_line() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut dirs = vec![root.join("testdata"), root.join("../shared/fixtures/vmmap")];
        let (mut lines, mut fast) = (0, 0);
        while let Some(dir) = dirs.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            for e in entries.flatten() {
                let path = e.path();
                if path.is_dir() {
                    dirs.push(path);
                    continue;
                }
                let Ok(text) = std::fs::read(&path) else { continue };
                for raw in String::from_utf8_lossy(&text).lines() {
                    let c = content(raw);
                    lines += 1;
                    assert!(agrees(c), "{}: {c:?}", path.display());
                    fast += find_byte(c, b'[').and_then(|lb| well_formed(c, lb)).is_some() as usize;
                }
            }
        }
        assert!(lines > 1000 && fast > 100, "{lines} lines, {fast} in one pass");
    }
}
