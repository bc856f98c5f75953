//! Plain data shared by every source, analysis and output: one `Region`
//! shape for Linux and macOS, its `Sizes`, and the process around them.

pub(crate) mod cgroup;
// The samples serve the fault recording, which is Linux-only.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) mod faults;
pub mod gpu;
pub(crate) mod group;
pub mod guard;
pub(crate) mod html_page;
pub(crate) mod meminfo;
pub(crate) mod named;
pub(crate) mod note;
pub mod pages;
pub(crate) mod process;
pub(crate) mod region;
pub mod region_json;
pub mod series;
pub(crate) mod sink;
pub(crate) mod sizes;
mod sizes_de;
pub mod snap_digest;
pub mod snap_lines;
pub(crate) mod snap_pages;
pub(crate) mod snap_region_de;
pub mod snapshot;
pub(crate) mod summable;
pub(crate) mod users;
pub mod vmmap;
pub mod wss;
pub(crate) mod zram;

pub use cgroup::CgroupMemory;
pub use group::Group;
pub(crate) use group::Grouper;
pub use html_page::{FAULTS_ELEMENT, SNAPSHOT_ELEMENT};
pub use meminfo::MemInfo;
pub use named::Named;
pub use note::{Note, Side, Status, Withheld};
pub(crate) use process::Needs;
pub use process::{ProcInfo, ProcMemory, Process, Scan, SizeSource, StatusSizes, Streamed};
pub use region::{Backing, Purge, Region};
pub use sink::{Flow, RegionSink};
pub use sizes::{snake_case, Figure, SizeKey, Sizes, KNOWN_KEYS};
pub use users::Users;
pub use zram::ZramStat;
