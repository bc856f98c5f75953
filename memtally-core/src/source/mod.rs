//! Readers: each turns one kind of input into the model. The parsers are
//! pure and apart, in [`parse`]; reading the live system goes through
//! `ProcRoot`, which hands their bytes to them.

pub mod access;
pub mod bounded;
pub(crate) mod capture;
pub mod cgroup;
pub mod drm_sysfs;
pub mod enrich;
pub mod gpu;
pub mod mounts;
pub mod parse;
pub mod prefetch;
pub(crate) mod proc_root;
pub(crate) mod scan;
pub mod series;
pub mod snapshot_digest;
pub(crate) mod stamp;
pub(crate) mod tool;
pub mod users;
pub mod vmmap;

pub use proc_root::ProcRoot;
