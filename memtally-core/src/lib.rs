//! memtally: where does this process's memory really go?
//!
//! Data flows one way: [`source`] reads (Linux `/proc`, macOS `vmmap`
//! text) into the [`model`] (one `Region` shape for both systems),
//! [`analyze`] groups and sums without I/O, and [`usecase`] does what
//! each command does (options in, results out). [`write`](mod@write)
//! creates every file written; [`error`] says what failed and which exit
//! code that is. Printing (tables, JSON, CSV) and the command line itself
//! live in the `memtally-cli` package.
//!
//! The library reads what the tool reads. For example, a mapping of smaps
//! text, its figures in exact bytes:
//!
//! ```
//! use memtally_core::analyze::{categorize, Category};
//! use memtally_core::source::parse::smaps::SmapsReader;
//!
//! let smaps = "\
//! 7f00a000-7f00e000 rw-p 00000000 00:00 0          [heap]
//! Size:                 16 kB
//! Rss:                  12 kB
//! Private_Dirty:         8 kB
//! Shared_Dirty:          0 kB
//! ";
//! let regions = SmapsReader::new(smaps.as_bytes()).read_all().unwrap();
//! assert_eq!(regions[0].sizes.rss, Some(12 * 1024));
//! assert_eq!(regions[0].sizes.dirty(), Some(8 * 1024));
//! assert_eq!(regions[0].sizes.pss, None); // not in the text: unknown, not 0
//! assert_eq!(categorize(&regions[0]), Category::Heap);
//! ```

#![warn(missing_docs)]

pub mod analyze;
pub mod error;
pub mod model;
pub mod source;
mod sys;
pub mod usecase;
pub mod write;

pub use error::{Error, Result};
