//! Small readers of vmmap text: publisher decoration stripped from a
//! line, size tokens (`56.0M`, `0.20`, page counts), table rows split
//! into name, figures and note.

/// The line without publisher decoration: indents, `//` comment and `>`
/// quote prefixes, trailing whitespace.
pub fn content(raw: &str) -> &str {
    // Nearly every line starts and ends with a printable ASCII byte that
    // is no prefix: nothing to strip, and no character to decode.
    if let (Some(&first), Some(&last)) = (raw.as_bytes().first(), raw.as_bytes().last()) {
        let printable = |b: u8| (b'!'..=b'~').contains(&b);
        if printable(first) && first != b'/' && first != b'>' && printable(last) {
            return raw;
        }
    }
    strip_decoration(raw)
}

/// [`content`] of any line, character by character.
fn strip_decoration(raw: &str) -> &str {
    let mut t = raw.trim_start();
    loop {
        if let Some(r) = t.strip_prefix("//") {
            t = r.trim_start();
        } else if let Some(r) = t.strip_prefix('>') {
            if r.is_empty() || r.starts_with(' ') {
                t = r.trim_start();
            } else {
                break;
            }
        } else {
            break;
        }
    }
    t.trim_end()
}

pub(super) fn is_elision(c: &str) -> bool {
    c.starts_with("...") && c.trim_start_matches('.').trim().is_empty()
}

/// `$ vmmap --wide 123`, `host:~ user$ vmmap -pages 1`, `vmmap 53799`.
pub(super) fn prompt_command(c: &str) -> Option<&str> {
    if c.starts_with("vmmap ") || c == "vmmap" {
        return Some(c);
    }
    for marker in ["$ vmmap", "% vmmap", "# vmmap"] {
        if let Some(i) = c.find(marker) {
            return Some(&c[i + 2..]);
        }
    }
    None
}

pub(super) fn name_and_pid(value: &str) -> (&str, Option<u32>) {
    if let (Some(a), Some(b)) = (value.rfind('['), value.rfind(']')) {
        if a < b {
            return (value[..a].trim(), value[a + 1..b].trim().parse().ok());
        }
    }
    (value, None)
}

/// A `Key: value` line of the header or the summary footer: the key
/// and the value, trimmed.
pub(super) fn fact(c: &str) -> Option<(&str, &str)> {
    let (key, value) = c.split_once(':')?;
    let plausible = !key.is_empty()
        && key.len() <= 40
        && key.starts_with(|ch: char| ch.is_ascii_alphabetic())
        && key.chars().all(|ch| ch.is_ascii_alphabetic() || " ()/-".contains(ch));
    plausible.then(|| (key, value.trim()))
}

pub(super) fn looks_like_region(c: &str) -> bool {
    if c.contains("SM=") {
        return true;
    }
    match c.find('[') {
        Some(i) => {
            let before = c[..i].trim_end();
            before.split_whitespace().count() >= 2
                && before.rsplit(char::is_whitespace).next().is_some_and(|r| r.contains('-'))
        }
        None => false,
    }
}

/// Splits a table row into its name, `n` figures and a trailing note. The
/// name is the shortest prefix followed by `n` size tokens (the last one an
/// integer when `count_last`), then nothing or a note.
pub(super) fn split_row(
    c: &str,
    n: usize,
    count_last: bool,
) -> Option<(&str, Vec<&str>, Option<&str>)> {
    // Token spans, so the name and note keep their inner spacing.
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut start = None;
    for (i, ch) in c.char_indices() {
        if ch.is_whitespace() {
            if let Some(s) = start.take() {
                spans.push((s, i));
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        spans.push((s, c.len()));
    }
    for first in 1..spans.len() {
        if first + n > spans.len() {
            break;
        }
        let toks: Vec<&str> = spans[first..first + n].iter().map(|&(a, b)| &c[a..b]).collect();
        let ok = toks.iter().enumerate().all(|(k, t)| {
            if count_last && k == n - 1 {
                t.bytes().all(|b| b.is_ascii_digit())
            } else {
                is_size_token(t)
            }
        });
        if ok {
            let name = c[..spans[first - 1].1].trim();
            let note = spans.get(first + n).map(|&(a, _)| c[a..].trim());
            return Some((name, toks, note));
        }
    }
    None
}

/// `12`, `0.20`, `56.0M`, `8K`, `1.5T`, `100B`.
pub fn is_size_token(t: &str) -> bool {
    let b = t.as_bytes();
    let digits = match b.last() {
        Some(b'B' | b'K' | b'M' | b'G' | b'T') => &b[..b.len() - 1],
        _ => b,
    };
    let mut dots = 0;
    !digits.is_empty()
        && digits[0].is_ascii_digit()
        && digits.iter().all(|&c| {
            dots += (c == b'.') as u32;
            c.is_ascii_digit() || c == b'.'
        })
        && dots <= 1
}

/// A size in bytes: a number with an optional unit B, K, M, G or T; a bare
/// number is multiplied by `bare` (1 for bytes, the page size for page
/// counts). Fractions are truncated to whole bytes, as the seed does.
///
/// Inlined where it is called, for the sizes nearly every region line has
/// (digits only, with or without a unit: four a line, where a call each
/// cost about a fifth of the size's reading); the rest is
/// [`parse_fraction`], out of line.
#[inline(always)]
pub fn parse_size(t: &str, bare: u64) -> Option<u64> {
    let b = t.as_bytes();
    let (digits, mult) = match b.last()? {
        b'B' => (&b[..b.len() - 1], 1u64),
        b'K' => (&b[..b.len() - 1], 1 << 10),
        b'M' => (&b[..b.len() - 1], 1 << 20),
        b'G' => (&b[..b.len() - 1], 1 << 30),
        b'T' => (&b[..b.len() - 1], 1 << 40),
        _ => (b, bare),
    };
    match whole_number(digits) {
        Some(v) => v.checked_mul(mult),
        None => parse_fraction(t, digits, mult),
    }
}

/// [`parse_size`] of a size that is not digits only (or has over 18):
/// `t`'s `digits` (without the unit) times `mult`.
#[inline(never)]
fn parse_fraction(t: &str, digits: &[u8], mult: u64) -> Option<u64> {
    if digits.first().is_none_or(|c| !c.is_ascii_digit()) {
        return None;
    }
    let mut v: u64 = 0;
    let mut dot = false;
    // The first few digits after the dot, and how many there are.
    let (mut frac, mut frac_digits) = (0u64, 0u32);
    for &c in digits {
        match c {
            b'0'..=b'9' if !dot => v = v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?,
            b'0'..=b'9' => {
                if frac_digits < 4 {
                    frac = frac * 10 + u64::from(c - b'0');
                }
                frac_digits += 1;
            }
            b'.' if !dot => dot = true,
            _ => return None,
        }
    }
    if !dot {
        return v.checked_mul(mult);
    }
    if let Some(x) = decimal_times_pow2(v, frac, frac_digits, mult) {
        return Some(x);
    }
    // The seed computes int(float(v) * unit); f64 here gives the same bits.
    let f: f64 = t[..digits.len()].parse().ok()?;
    let x = f * mult as f64;
    if !x.is_finite() || x >= 18_446_744_073_709_551_616.0 {
        return None;
    }
    Some(x as u64)
}

/// Digits only, 1 to 18 of them (so no overflow): their value, read
/// without a branch a digit (what nearly every size of a report is; the
/// general loop's checks cost about twice as much). `None` for anything
/// else.
#[inline(always)]
fn whole_number(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || digits.len() > 18 {
        return None;
    }
    let (mut v, mut bad) = (0u64, false);
    for &c in digits {
        let d = c.wrapping_sub(b'0');
        bad |= d > 9;
        v = v.wrapping_mul(10).wrapping_add(u64::from(d));
    }
    (!bad).then_some(v)
}

/// `int(float("V.FRAC") * mult)` in integers, for the sizes vmmap prints
/// (`10.6M`: one to three decimals, a power-of-two unit or page size, under
/// a terabyte); `None` outside that, where the float path decides. The
/// same value: a result that is a whole number is exact in binary too, and
/// any other lies at least 1/10^3 from a whole number, while the float's
/// rounding error is below 2^40 * 2^-53 = 2^-13.
fn decimal_times_pow2(v: u64, frac: u64, frac_digits: u32, mult: u64) -> Option<u64> {
    if !(1..=3).contains(&frac_digits) || !mult.is_power_of_two() {
        return None;
    }
    let scale = 10u128.pow(frac_digits);
    let exact = (u128::from(v) * scale + u128::from(frac)) * u128::from(mult) / scale;
    (exact < 1 << 40).then_some(exact as u64)
}

pub(crate) fn find_byte(s: &str, b: u8) -> Option<usize> {
    memchr::memchr(b, s.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The seed's `int(float(t) * unit)`, as `parse_size` computed it
    /// before the integer path.
    fn by_float(t: &str, mult: u64) -> u64 {
        (t.parse::<f64>().unwrap() * mult as f64) as u64
    }

    #[test]
    fn decimals_in_integers_are_the_floats_truncated() {
        let mults = [1, 2, 1024, 4096, 16384, 1 << 20, 1 << 30];
        let ints = (0..64u64).chain([99, 100, 127, 1000, 1023, 1024, 4095, 9999, 65535, 1 << 20]);
        for int in ints {
            for digits in 1..=3u32 {
                for frac in (0..10u64.pow(digits)).step_by(if digits == 3 { 7 } else { 1 }) {
                    let t = format!("{int}.{frac:0width$}", width = digits as usize);
                    for mult in mults {
                        let got = decimal_times_pow2(int, frac, digits, mult);
                        if let Some(got) = got {
                            assert_eq!(got, by_float(&t, mult), "{t} * {mult}");
                        }
                    }
                }
            }
        }
        assert_eq!(parse_size("10.6M", 1), Some(by_float("10.6", 1 << 20)));
        assert_eq!(parse_size("0.1K", 1), Some(102));
        assert_eq!(parse_size("0.5", 16384), Some(8192));
        // Outside the integer path: the float decides.
        assert_eq!(decimal_times_pow2(1, 5, 1, 3), None);
        assert_eq!(decimal_times_pow2(1, 2345, 4, 1024), None);
        assert_eq!(decimal_times_pow2(2048, 5, 1, 1 << 30), None);
        assert_eq!(parse_size("1.5", 3), Some(4));
        assert_eq!(parse_size("1.2345K", 1), Some(by_float("1.2345", 1024)));
    }

    /// The shortcut for a line with nothing to strip gives what the
    /// general strip does, at the edges of what it takes.
    #[test]
    fn content_shortcut_strips_as_the_general_strip() {
        let lines = [
            "",
            "x",
            "/",
            "//",
            ">",
            "> x",
            ">x",
            "// x",
            "/x",
            "x ",
            " x",
            "x\t",
            "x\u{a0}",
            "\u{a0}x",
            "x\u{2003}",
            "\u{85}x",
            "é",
            "xé",
            "éx",
            "~x~",
            "!x!",
            "\u{7f}x",
            "x\u{1c}",
            "__TEXT 1-2 [ 4K] r-x/r-x",
            "Stack  ",
        ];
        for l in lines {
            assert_eq!(content(l), strip_decoration(l), "{l:?}");
        }
    }

    #[test]
    fn whole_numbers_read_as_the_general_loop_reads_them() {
        assert_eq!(whole_number(b"0"), Some(0));
        assert_eq!(whole_number(b"16384"), Some(16384));
        assert_eq!(whole_number(b"999999999999999999"), Some(999_999_999_999_999_999));
        // Left to the general loop: too long to be sure of, not digits.
        for t in ["", "1234567890123456789", "12.5", "1/2", "12 ", "١٢", "x1", "9:"] {
            assert_eq!(whole_number(t.as_bytes()), None, "{t:?}");
        }
        assert_eq!(parse_size("18446744073709551615", 1), Some(u64::MAX));
        assert_eq!(parse_size("18446744073709551616", 1), None);
        assert_eq!(parse_size("17179869184G", 1), None);
        assert_eq!(parse_size("16777215T", 1), Some(16_777_215 << 40));
    }
}
