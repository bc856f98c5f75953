//! Signed byte figures (the machine's and a cgroup's remainders, which
//! can be negative) from unsigned ones, without the `as i64` casts that
//! turned a crafted 16 EiB into `-1B`.

/// A figure as signed bytes. Past `i64::MAX` (8 EiB, more than any
/// machine has) it can only be crafted input: it stops there rather than
/// turning negative.
pub(crate) fn bytes(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// A difference worked out in i128 (exact for sums of u64 figures), as
/// signed bytes, stopping at the ends of i64.
pub(crate) fn clamp(v: i128) -> i64 {
    v.clamp(i64::MIN.into(), i64::MAX.into()) as i64
}

#[cfg(test)]
mod tests {
    #[test]
    fn stops_at_the_ends_of_i64() {
        assert_eq!(super::bytes(u64::MAX), i64::MAX);
        assert_eq!(super::bytes(4096), 4096);
        assert_eq!(super::clamp(-(u64::MAX as i128) * 2), i64::MIN);
        assert_eq!(super::clamp(-5), -5);
    }
}
