//! Readers: each turns one kind of input into the model. The parsers are
//! pure and apart, in [`parse`]; reading the live system goes through
//! `ProcRoot`, which hands their bytes to them.

pub(crate) mod access;
pub(crate) mod bounded;
pub(crate) mod capture;
pub(crate) mod cgroup;
pub(crate) mod cgroup_ns;
pub(crate) mod closes;
pub(crate) mod drm_sysfs;
pub mod enrich;
pub(crate) mod faults;
pub(crate) mod gpu;
pub(crate) mod libproc;
pub(crate) mod mounts;
pub(crate) mod pages;
pub mod parse;
pub(crate) mod prefetch;
pub(crate) mod proc_root;
pub(crate) mod scan;
pub mod series;
pub(crate) mod stamp;
pub(crate) mod tool;
pub(crate) mod users;
pub(crate) mod vmmap;
pub(crate) mod wss;
pub(crate) mod zram;

pub use access::withheld;
pub use bounded::bytes_read;
pub use proc_root::{ProcRoot, ReadPlan};
pub use users::UserNames;
