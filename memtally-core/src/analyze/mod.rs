//! Pure functions over regions: no I/O, no printing.

pub mod category;
pub mod classic;
pub mod diff;
pub mod gpu;
pub mod group;
pub mod metrics;
pub mod report;
pub mod select;
pub mod snapshot;
pub mod top;
pub mod trend;
pub mod vmmap;
pub mod vmmap_snapshot;

pub use category::{categorize, Category};
pub use group::{group_by, sort_groups, total, Group};
