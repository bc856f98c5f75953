//! memtally: where does this process's memory really go?
//!
//! Data flows one way: [`source`] reads (Linux `/proc`, macOS `vmmap`
//! text) into the [`model`] (one `Region` shape for both systems),
//! [`analyze`] groups and sums without I/O, and [`render`] prints tables,
//! JSON and CSV. [`cli`] wires them to the command line.

pub mod analyze;
pub mod cli;
pub mod error;
pub mod model;
pub mod render;
pub mod source;

pub use error::{Error, Result};
