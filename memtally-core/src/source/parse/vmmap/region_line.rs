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

fn is_prot(s: &str) -> bool {
    s.len() == 3 && s.bytes().all(|b| matches!(b, b'r' | b'w' | b'x' | b'-'))
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
    if s.is_empty() || s.len() > 16 {
        return None;
    }
    let mut v = 0u64;
    let mut bad = 0u8;
    for &c in s.as_bytes() {
        let d = HEX[c as usize];
        bad |= d;
        v = (v << 4) | u64::from(d & 0x0f);
    }
    (bad & 0x80 == 0).then_some(v)
}

/// Reads `TYPE  START-END  [ SIZES ]  PRT/MAX  SM=XXX  [PURGE=X]  DETAIL`.
pub fn parse_region_line(c: &str) -> Result<RegionLine<'_>, String> {
    let lb = find_byte(c, b'[').ok_or("no [ sizes ]")?;
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
