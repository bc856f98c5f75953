//! Idle page tracking: present on kernels built with
//! `CONFIG_IDLE_PAGE_TRACKING`, as one bitmap file of every page frame.

use std::path::Path;

use crate::model::wss::IdleTracking;

/// The bitmap idle page tracking reads and writes (one bit per frame).
const BITMAP: &str = "/sys/kernel/mm/page_idle/bitmap";

/// Whether this kernel offers idle page tracking. Marking pages idle
/// through it needs each page's frame number (pagemap, root only) and
/// this build does not do that yet, so where it is there it is reported
/// as present and unused, and `clear_refs` runs.
pub(crate) fn detect() -> IdleTracking {
    if Path::new(BITMAP).exists() {
        IdleTracking::PresentUnused
    } else {
        IdleTracking::Absent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detection_agrees_with_the_file() {
        let there = Path::new(BITMAP).exists();
        assert_eq!(detect() == IdleTracking::PresentUnused, there);
    }
}
