//! Plain data shared by every source, analysis and output: one `Region`
//! shape for Linux and macOS, its `Sizes`, and the process around them.

pub mod gpu;
pub mod named;
pub mod process;
pub mod region;
pub mod sizes;
pub mod snapshot;

pub use named::Named;
pub use process::{Process, SizeSource, Streamed};
pub use region::{Backing, Purge, Region};
pub use sizes::{snake_case, SizeKey, Sizes, KNOWN_KEYS};
