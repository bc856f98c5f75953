//! Pure functions over the model: no I/O, no printing. Categories,
//! group-by, the views (`show`, `top`, GPU, vmmap tallies), snapshots,
//! diffs, growth trends, the published metrics, and which processes a
//! selection takes.

pub mod category;
pub mod cgroup;
pub mod classic;
pub mod diff;
pub mod diff_exact;
pub mod diff_regions;
pub(crate) mod exclusive;
pub mod fault_report;
// Serves the fault recording, which is Linux-only; tested everywhere.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) mod faults;
pub mod files;
pub mod gpu;
pub mod group;
pub mod machine;
pub mod metrics;
pub mod page_states;
pub mod plot;
pub mod report;
pub mod rounding;
pub mod select;
pub mod sharing;
pub(crate) mod shmem_swap;
pub mod show;
mod signed;
pub mod snapshot;
pub(crate) mod swap_used;
#[cfg(test)]
mod test_support;
pub mod top;
pub mod trend;
pub mod vmmap;
pub mod wss;

pub use category::{categorize, Category};
