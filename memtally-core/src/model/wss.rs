//! The vocabulary of a working-set measurement (`wss`): how the pages
//! touched during the interval were found.

use serde::{Deserialize, Serialize};

use crate::model::Named;

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
    /// Idle page tracking (`/sys/kernel/mm/page_idle/bitmap`): no effect
    /// on reclaim. Only detected so far; see `source::wss`.
    IdlePages,
}

impl Named for WssMethod {
    const ALL: &'static [WssMethod] = &[WssMethod::ClearRefs, WssMethod::IdlePages];

    fn name(self) -> &'static str {
        match self {
            WssMethod::ClearRefs => "clear_refs",
            WssMethod::IdlePages => "idle_pages",
        }
    }

    fn help(self) -> &'static str {
        match self {
            WssMethod::ClearRefs => "reset the referenced bits (clear_refs), read smaps Referenced",
            WssMethod::IdlePages => "idle page tracking (page_idle bitmap)",
        }
    }
}

/// Whether the kernel offers idle page tracking, the method that leaves
/// reclaim alone, and whether it was used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum IdleTracking {
    /// No `/sys/kernel/mm/page_idle/bitmap` (a kernel built without
    /// `CONFIG_IDLE_PAGE_TRACKING`): `clear_refs` is the only way.
    Absent,
    /// The bitmap is there, but this build does not read it yet (it needs
    /// page frame numbers from pagemap): `clear_refs` ran instead.
    PresentUnused,
}
