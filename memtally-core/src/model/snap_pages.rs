//! The page-level figures a snapshot may carry (`snapshot --exact`,
//! `snapshot --wss`): how and when they were read. Each process's own figure is on the
//! process ([`SnapProcess::exclusive`](super::snapshot::SnapProcess));
//! a snapshot without them (older ones, or taken without asking) has
//! none, never zeros.

use serde::{Deserialize, Serialize};

use super::pages::Exclusive;
use super::wss::WssMethod;

/// How the exclusive figures were found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ExactMethod {
    /// Frame numbers from `/proc/PID/pagemap`, the frames' map counts
    /// from `/proc/kpagecount` and flags from `/proc/kpageflags`: a page
    /// is a process's when every mapping of it is that process's.
    PagemapKpagecount,
}

/// The exclusive figures of a snapshot: when they were read (after the
/// regions: a page can change between the two reads), how, and the
/// selection's own figure as one group (what ending every selected
/// process gives back, which is not the sum of the processes' figures:
/// pages they share among themselves are no one process's).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SnapExact {
    /// How they were read.
    pub method: ExactMethod,
    /// When the pages were read, RFC 3339 UTC.
    pub time: Option<String>,
    /// The same, seconds since the Unix epoch.
    pub unix_time: Option<f64>,
    /// Every process of the snapshot as one group.
    pub selection: Exclusive,
}

/// The working-set measurement of a snapshot (`snapshot --wss DURATION`):
/// how, and over how long. The figures themselves (`touched`,
/// `working_set`, `cold`) are size keys of the measured processes'
/// totals and categories.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SnapWss {
    /// How touched pages were found.
    pub method: WssMethod,
    /// The interval asked for, seconds (the snapshot's regions were read
    /// at its end).
    pub interval_s: f64,
}
