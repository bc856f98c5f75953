//! Readers: each turns one kind of input into the model. Parsers are
//! streaming and pure; reading the live system goes through `ProcRoot`.

pub mod capture;
pub mod gpu;
pub mod meminfo;
pub mod prefetch;
pub mod proc_root;
pub mod scan;
pub mod smaps;
pub mod snapshot_file;
pub mod stamp;
pub mod status;
pub mod tool;
pub mod users;
pub mod vmmap;

pub use proc_root::ProcRoot;
