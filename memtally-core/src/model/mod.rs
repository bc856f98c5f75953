//! Plain data shared by every source, analysis and output: one `Region`
//! shape for Linux and macOS, its `Sizes`, and the process around them.

pub mod cgroup;
pub mod gpu;
pub mod group;
pub mod guard;
pub mod meminfo;
pub mod named;
pub mod note;
pub mod pages;
pub mod process;
pub mod region;
pub mod series;
pub mod sink;
pub mod sizes;
mod sizes_de;
pub mod snap_digest;
pub mod snap_lines;
pub mod snap_pages;
pub(crate) mod snap_region_de;
pub mod snapshot;
pub mod summable;
pub mod vmmap;
pub mod wss;
pub mod zram;

pub use cgroup::CgroupMemory;
pub use group::Group;
pub(crate) use group::Grouper;
pub use meminfo::MemInfo;
pub use named::Named;
pub use note::{Note, Side, Withheld};
pub(crate) use process::Needs;
pub use process::{ProcInfo, ProcMemory, Process, Scan, SizeSource, StatusSizes, Streamed};
pub use region::{Backing, Purge, Region};
pub use sink::{Flow, RegionSink};
pub use sizes::{snake_case, Figure, SizeKey, Sizes, KNOWN_KEYS};
pub use zram::ZramStat;
