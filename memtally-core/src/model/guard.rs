//! The exporter's per-process guard (issue 26): a scrape must never cost
//! the host much, whatever one process looks like. A process with more
//! mappings than a bound, or whose reads have already taken longer than a
//! budget, is not read mapping by mapping (`smaps`): it is reported from
//! what was read before (smaps_rollup, status, and its GPU fdinfo).
//!
//! Where the cost is: `smaps` costs the kernel about 10 µs a mapping
//! (measured on Linux 6.18, docs/benchmarks.md "serve: the guard's
//! default"), `maps` and `smaps_rollup` about 0.3 µs. The exporter reads
//! `smaps` only for processes with GPU files (their mapped GPU bytes and
//! `LazyFree`), after their `maps`, which gives the count for free.

use std::time::Duration;

/// Mappings past which a process is not read mapping by mapping: a
/// `smaps` of 2,000 mappings took about 20 ms here.
pub const DEFAULT_MAX_MAPPINGS: usize = 2_000;

/// Time one process's reads may take before its `smaps` read is skipped.
pub(crate) const DEFAULT_READ_BUDGET: Duration = Duration::from_millis(50);

/// The bounds of one process's reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadGuard {
    /// More mappings than this: no `smaps` read.
    pub max_mappings: usize,
    /// Reads already past this: no `smaps` read.
    pub budget: Duration,
}

impl ReadGuard {
    /// No bound (the commands a user runs on purpose: `gpu`, `show`, `top`).
    pub(crate) const NONE: ReadGuard =
        ReadGuard { max_mappings: usize::MAX, budget: Duration::MAX };
}

impl Default for ReadGuard {
    /// The exporter's defaults.
    fn default() -> ReadGuard {
        ReadGuard { max_mappings: DEFAULT_MAX_MAPPINGS, budget: DEFAULT_READ_BUDGET }
    }
}

/// Why a process was reported from its cheap files only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limited {
    /// More mappings than [`ReadGuard::max_mappings`].
    Mappings,
    /// Its reads passed [`ReadGuard::budget`].
    ReadBudget,
}

/// How many processes of one scan each reason limited.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LimitedCounts {
    /// Past the mapping bound.
    pub mappings: usize,
    /// Past the time budget.
    pub read_budget: usize,
}

impl LimitedCounts {
    /// Counts one more process limited for `why`.
    pub fn add(&mut self, why: Limited) {
        match why {
            Limited::Mappings => self.mappings += 1,
            Limited::ReadBudget => self.read_budget += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_each_reason_apart() {
        let mut c = LimitedCounts::default();
        c.add(Limited::Mappings);
        c.add(Limited::Mappings);
        c.add(Limited::ReadBudget);
        assert_eq!(c, LimitedCounts { mappings: 2, read_budget: 1 });
        assert!(ReadGuard::NONE.max_mappings > ReadGuard::default().max_mappings);
    }
}
