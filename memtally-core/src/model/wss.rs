//! The vocabulary of a working-set measurement (`wss`): how the pages
//! touched during the interval were found.

use serde::{Deserialize, Serialize};

/// How `wss` tells touched pages from untouched ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum WssMethod {
    /// `/proc/PID/clear_refs` (value 1) resets the referenced bits of the
    /// process's pages; `Referenced` in its smaps after the interval is
    /// what was touched. It changes what the kernel thinks is recently
    /// used, so reclaim may choose differently afterwards.
    ClearRefs,
    /// Idle page tracking (`/sys/kernel/mm/page_idle/bitmap`): the frames
    /// of the process's resident pages (from pagemap) are marked idle, and
    /// after the interval a page whose frame is no longer idle was
    /// touched. No effect on reclaim; needs root and a kernel built with
    /// `CONFIG_IDLE_PAGE_TRACKING`.
    IdlePages,
}

super::named::named!(WssMethod {
    ClearRefs => "clear_refs", "reset the referenced bits (clear_refs), read smaps Referenced";
    IdlePages => "idle_pages", "idle page tracking (page_idle bitmap)";
});

/// Whether the kernel offers idle page tracking, the method that leaves
/// reclaim alone, and whether it was used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum IdleTracking {
    /// No `/sys/kernel/mm/page_idle/bitmap` (a kernel built without
    /// `CONFIG_IDLE_PAGE_TRACKING`): `clear_refs` is the only way.
    Absent,
    /// The bitmap is there but was not used: memtally may not open it
    /// (it is root's), or `--method referenced` was asked for.
    PresentUnused,
    /// The bitmap is there and the measurement used it.
    Used,
}

/// Which method `wss` is asked to use (`--method`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum WssChoice {
    /// Idle page tracking where the kernel has it and memtally may use it,
    /// else the referenced bits.
    Auto,
    /// Idle page tracking, or an error saying why it cannot run.
    Idle,
    /// The referenced bits (`clear_refs`), even where idle tracking is there.
    Referenced,
}

super::named::named!(WssChoice {
    Auto => "auto",
        "idle page tracking where the kernel has it (and as root), else referenced";
    Idle => "idle",
        "idle page tracking (/sys/kernel/mm/page_idle/bitmap): leaves reclaim alone";
    Referenced => "referenced", "reset the referenced bits (clear_refs), read smaps Referenced";
});
