//! Sizes and counts for people. Tables choose units; JSON and CSV carry
//! exact bytes.

/// `1 process`, `3 processes`.
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `1536` -> `1.5K`, `0` -> `0`, in binary units with the letter vmmap and
/// pmap users know (K, M, G, T). Whole numbers below 10 units keep one
/// decimal so small differences stay visible.
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "K", "M", "G", "T"];
    if bytes == 0 {
        return "0".to_string();
    }
    if bytes < 1024 {
        return format!("{bytes}B");
    }
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    if v < 100.0 {
        format!("{v:.1}{}", UNITS[unit])
    } else {
        format!("{v:.0}{}", UNITS[unit])
    }
}

/// A figure that may be unknown: `-` says "the source does not give it",
/// which is different from `0`.
pub fn human_opt(bytes: Option<u64>) -> String {
    bytes.map_or_else(|| "-".to_string(), human)
}

/// Bytes that may be negative (a machine line), for people: `-4.0K`,
/// `1.5M`; no `+` (see [`human_signed`] for changes).
pub fn signed(b: i64) -> String {
    if b < 0 {
        format!("-{}", human(b.unsigned_abs()))
    } else {
        human(b as u64)
    }
}

/// Signed sizes for deltas: `+1.5M`, `-4.0K`, `0`.
pub fn human_signed(delta: i128) -> String {
    let mag = human(delta.unsigned_abs().min(u64::MAX as u128) as u64);
    match delta.signum() {
        1 => format!("+{mag}"),
        -1 => format!("-{mag}"),
        _ => mag,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_readable_units() {
        assert_eq!(human(0), "0");
        assert_eq!(human(512), "512B");
        assert_eq!(human(1536), "1.5K");
        assert_eq!(human(64 << 20), "64.0M");
        assert_eq!(human(300 << 20), "300M");
        assert_eq!(human(3 << 40), "3.0T");
        assert_eq!(human_opt(None), "-");
        assert_eq!(human_signed(-4096), "-4.0K");
    }
}
