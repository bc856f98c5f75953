//! memtally: where does this process's memory really go?
//!
//! One process, read from the live `/proc`, its memory by category:
//!
//! ```
//! use memtally_core::{show, ProcRoot, ShowOptions, ShowView, Silent};
//!
//! let view = ShowView::Process(std::process::id());
//! let report = show(&ProcRoot::live(), &view, &ShowOptions::default(), &mut (), &Silent)?
//!     .into_regions()
//!     .expect("a process's view is its regions");
//! for (category, group) in &report.categories {
//!     println!("{:<24} {:?} bytes dirty", category.label(), group.sizes.dirty());
//! }
//! # assert!(report.totals.rss.unwrap() > 0);
//! # Ok::<(), memtally_core::Error>(())
//! ```
//!
//! [`ProcRoot::new`] reads a recorded tree instead (what `memtally
//! capture` writes) through the very same code. [`show`] hands each
//! region to a [`RegionSink`] as it is read (and lets the sink stop the
//! read), and [`ProcRoot::process`] reads one process as a [`ReadPlan`]
//! says into any sink; the other use cases (`top`, `gpu`, `diff`, `snapshot`,
//! `vmmap`) are in [`usecase`], each options in, a report out. Figures a
//! source does not give are `None`, never a made-up zero.
//!
//! Data flows one way: [`source`] reads (Linux `/proc`, macOS `vmmap`
//! text) into the [`model`] (one `Region` shape for both systems),
//! [`analyze`] groups and sums without I/O (and holds every result the
//! use cases return), and [`usecase`] does what each command does
//! (options in, results out). [`write`](mod@write)
//! creates every file written; [`error`] says what failed. Printing
//! (tables, JSON, CSV) and the command line itself live in the
//! `memtally-cli` package.
//!
//! The parsers are pure and can be used alone. For example, a mapping of
//! smaps text, its figures in exact bytes:
//!
//! ```
//! use memtally_core::{categorize, Category, SmapsReader};
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
//!
//! The option structs and reports are `#[non_exhaustive]`: options are
//! built from `default()` and their `with_*` setters, so a field added
//! later breaks no caller.

#![warn(missing_docs)]

/// `with_FIELD(value)` setters on an option struct. The option structs are
/// `#[non_exhaustive]` (a field added later breaks no caller), so outside
/// this crate they are built from `default()` and these.
macro_rules! setters {
    ($options:ident<$lt:lifetime> { $($setter:ident: $field:ident: $ty:ty),+ $(,)? }) => {
        impl<$lt> $options<$lt> {
            setters!(@each $($setter: $field: $ty),+);
        }
    };
    ($options:ty { $($setter:ident: $field:ident: $ty:ty),+ $(,)? }) => {
        impl $options {
            setters!(@each $($setter: $field: $ty),+);
        }
    };
    (@each $($setter:ident: $field:ident: $ty:ty),+) => {
            $(
                #[doc = concat!("These options with [`", stringify!($field), "`](Self::", stringify!($field), ") set.")]
                #[must_use]
                pub fn $setter(mut self, $field: $ty) -> Self {
                    self.$field = $field;
                    self
                }
            )+
    };
}

pub mod analyze;
pub mod error;
pub mod model;
pub mod source;
mod sys;
#[cfg(test)]
mod testdata;
pub mod usecase;
pub mod write;

pub use error::{Error, Result};

// The front door: what reading a process, or a recording of one, needs,
// nameable from the crate root. The modules stay the full map.
pub use analyze::diff::{Diff, DiffOptions};
pub use analyze::gpu::GpuReport;
pub use analyze::select::Selection;
pub use analyze::show::{ShowBy, ShowReport};
pub use analyze::top::{Top, TopBy, TopReport};
pub use analyze::vmmap::VmmapReport;
pub use analyze::{categorize, Category};
pub use model::snapshot::Snapshot;
pub use model::{Figure, Flow, Note, Process, Region, RegionSink, Sizes};
pub use source::parse::smaps::SmapsReader;
pub use source::parse::ParseError;
pub use source::{ProcRoot, ReadPlan};
pub use usecase::gpu::GpuOptions;
pub use usecase::select::SelectOptions;
pub use usecase::show::{show, ShowOptions, ShowView, Shown};
pub use usecase::snapshot::Taken;
pub use usecase::top::TopOptions;
pub use usecase::vmmap::VmmapOptions;
pub use usecase::{Progress, Silent};
