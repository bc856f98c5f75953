//! Small readers of vmmap text: publisher decoration stripped from a
//! line, size tokens (`56.0M`, `0.20`, page counts), table rows split
//! into name, figures and note, header facts (`Key: value`) read.

use crate::model::vmmap::{Fact, Header};

/// The line without publisher decoration: indents, `//` comment and `>`
/// quote prefixes, trailing whitespace.
pub fn content(raw: &str) -> &str {
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

/// Whether `c` is a frame of a crash report's backtrace: a frame number,
/// the image, then an address (`12  AppKit  0x000000018c4a2c2c -[NSApplication
/// run] + 480`; the image and address parted by a tab or spaces).
pub(super) fn is_backtrace_frame(c: &str) -> bool {
    let mut words = c.split_whitespace();
    let number = words.next().is_some_and(|w| w.bytes().all(|b| b.is_ascii_digit()));
    let _image = words.next();
    let address = words.next().is_some_and(|w| {
        w.strip_prefix("0x")
            .is_some_and(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_hexdigit()))
    });
    number && address
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
pub fn parse_size(t: &str, bare: u64) -> Option<u64> {
    let (number, mult) = match t.as_bytes().last()? {
        b'B' => (&t[..t.len() - 1], 1u64),
        b'K' => (&t[..t.len() - 1], 1 << 10),
        b'M' => (&t[..t.len() - 1], 1 << 20),
        b'G' => (&t[..t.len() - 1], 1 << 30),
        b'T' => (&t[..t.len() - 1], 1 << 40),
        _ => (t, bare),
    };
    let dots = number.bytes().filter(|&b| b == b'.').count();
    let decimal = number.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    if !number.starts_with(|c: char| c.is_ascii_digit()) || !decimal || dots > 1 {
        return None;
    }
    if dots == 0 {
        return number.parse::<u64>().ok()?.checked_mul(mult);
    }
    // The seed computes int(float(v) * unit); f64 here gives the same bits.
    let x = number.parse::<f64>().ok()? * mult as f64;
    if !x.is_finite() || x >= 18_446_744_073_709_551_616.0 {
        return None;
    }
    Some(x as u64)
}

/// A summary column; the size columns in [`SummaryRow::steps`](crate::model::vmmap::SummaryRow::steps) order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Col {
    Virtual,
    Resident,
    Dirty,
    Swapped,
    Volatile,
    Nonvol,
    Empty,
    Count,
}

impl Col {
    pub(super) fn name(self) -> &'static str {
        match self {
            Col::Virtual => "virtual",
            Col::Resident => "resident",
            Col::Dirty => "dirty",
            Col::Swapped => "swapped",
            Col::Volatile => "volatile",
            Col::Nonvol => "nonvol",
            Col::Empty => "empty",
            Col::Count => "count",
        }
    }

    pub(super) fn from_word(w: &str) -> Option<Col> {
        Some(match w {
            "VIRTUAL" => Col::Virtual,
            "RESIDENT" => Col::Resident,
            "DIRTY" => Col::Dirty,
            "SWAPPED" => Col::Swapped,
            "VOLATILE" => Col::Volatile,
            "NONVOL" => Col::Nonvol,
            "EMPTY" => Col::Empty,
            "REGION" | "COUNT" => Col::Count,
            _ => return None,
        })
    }
}

/// Sets what a header's `Key: value` fact says (the process, its path, the
/// footprints, the page size) and keeps the fact (the first 64).
pub(super) fn set_fact(h: &mut Header, key: &str, value: &str) {
    match key {
        "Process" => {
            let (name, pid) = name_and_pid(value);
            h.process = Some(name.to_string());
            h.pid = pid.or(h.pid);
        }
        "Path" => h.path = Some(value.to_string()),
        "OS Version" => h.os_version = Some(value.to_string()),
        "Code Type" => h.code_type = Some(value.to_string()),
        "Output report format" => {
            h.report_format = value.split_whitespace().next().map(str::to_string);
        }
        "Physical footprint" => h.physical_footprint = parse_size(value, 1),
        "Physical footprint (peak)" => h.physical_footprint_peak = parse_size(value, 1),
        "VM page size" => {
            h.page_size = value.split_whitespace().next().and_then(|v| v.parse().ok());
        }
        _ => {}
    }
    if h.facts.len() < 64 {
        h.facts.push(Fact { key: key.to_string(), value: value.to_string() });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_whole_bytes_as_the_seed_computes_them() {
        assert_eq!(parse_size("10.6M", 1), Some((10.6f64 * 1048576.0) as u64));
        assert_eq!(parse_size("0.1K", 1), Some(102));
        assert_eq!(parse_size("0.5", 16384), Some(8192));
        assert_eq!(parse_size("1.5", 3), Some(4));
        assert_eq!(parse_size("5.", 1), Some(5));
        assert_eq!(parse_size("16384", 1), Some(16384));
        assert_eq!(parse_size("12", 4096), Some(12 * 4096));
        assert_eq!(parse_size("18446744073709551615", 1), Some(u64::MAX));
        assert_eq!(parse_size("18446744073709551616", 1), None);
        assert_eq!(parse_size("17179869184G", 1), None);
        assert_eq!(parse_size("16777215T", 1), Some(16_777_215 << 40));
        assert_eq!(parse_size("99999999999999999999.5", 1), None);
        for bad in ["", "K", ".5", "1.2.3", "1e5", "+1", "1/2", "12 ", "x1", "inf", "NaN"] {
            assert_eq!(parse_size(bad, 1), None, "{bad:?}");
        }
    }
}
