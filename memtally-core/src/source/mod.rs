//! Readers: each turns one kind of input into the model. Parsers are
//! streaming and pure; reading the live system goes through `ProcRoot`.

pub mod access;
pub mod bounded;
pub(crate) mod capture;
pub mod cgroup;
pub mod drm_sysfs;
pub mod gpu;
pub mod meminfo;
pub mod mounts;
pub mod prefetch;
pub(crate) mod proc_root;
pub(crate) mod scan;
pub mod series;
pub mod smaps;
pub mod snapshot_digest;
pub mod snapshot_file;
pub(crate) mod stamp;
pub(crate) mod status;
pub(crate) mod tool;
pub mod users;
pub mod vmmap;

pub use proc_root::ProcRoot;
