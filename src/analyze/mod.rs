//! Pure functions over regions: no I/O, no printing.

pub mod category;
pub mod classic;
pub mod group;
pub mod report;
pub mod vmmap;
pub mod select;
pub mod top;

pub use category::{categorize, Category};
pub use group::{group_by, sort_groups, total, Group};
