//! One region line: `TYPE  START-END  [ SIZES ]  PRT/MAX  SM=XXX
//! [PURGE=X]  DETAIL`, its fields borrowed from the line (no allocation,
//! no regular expression).

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

/// `rwx`, `r--` ...: three bytes of `r`, `w`, `x` or `-`.
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

/// An address: 1 to 16 hex digits, either case (no sign).
fn hex(s: &str) -> Option<u64> {
    if s.len() > 16 || s.starts_with('+') {
        return None;
    }
    u64::from_str_radix(s, 16).ok()
}

/// Reads `TYPE  START-END  [ SIZES ]  PRT/MAX  SM=XXX  [PURGE=X]  DETAIL`,
/// damaged or not: what is wrong with a field other than the sizes is
/// kept as its damage; a line whose sizes or range cannot be read is an
/// error.
pub fn parse_region_line(c: &str) -> Result<RegionLine<'_>, String> {
    let lb = c.find('[').ok_or("no [ sizes ]")?;
    let rb = lb + c[lb..].find(']').ok_or("no closing ] (line cut short?)")?;
    let before = c[..lb].trim_ascii_end();
    let split = before.rfind([' ', '\t']).ok_or("no region type before the address range")?;
    let region_type = before[..split].trim_ascii();
    let range = &before[split + 1..];
    if region_type.is_empty() {
        return Err("no region type".into());
    }
    let mut damage = None;
    let dash = range.find('-').ok_or_else(|| format!("address range {range:?} has no '-'"))?;
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
    use super::*;

    #[test]
    fn a_plain_line_is_read_whole() {
        let c = "IOAccelerator (graphics) 0000000101d24000-0000000102d24000 [ 16.0M  12.0M  1408K  3584K] rw-/rwx SM=SHM PURGE=N  /usr/lib/dyld";
        let r = parse_region_line(c).unwrap();
        assert_eq!(r.region_type, "IOAccelerator (graphics)");
        assert_eq!((r.start, r.end), (Some(0x1_01d2_4000), Some(0x1_02d2_4000)));
        assert_eq!(r.sizes(), ["16.0M", "12.0M", "1408K", "3584K"]);
        assert_eq!((r.prot, r.max_prot, r.share_mode), ("rw-", Some("rwx"), Some("SHM")));
        assert_eq!(
            (r.purge, r.detail, r.damage),
            (Purge::NonVolatile, Some("/usr/lib/dyld"), None)
        );
    }

    #[test]
    fn addresses_are_one_to_sixteen_hex_digits() {
        assert_eq!(hex("ffffffffffffffff"), Some(u64::MAX));
        assert_eq!(hex("0000000100000000"), Some(1 << 32));
        assert_eq!(hex("aBc"), Some(0xabc));
        for bad in ["", "00000000000000000", "+1", "-1", "1g", "0x1", " 1"] {
            assert_eq!(hex(bad), None, "{bad:?}");
        }
    }
}
