//! The `show` use case's views of one process and of a selection, as
//! the tests read them.

use memtally_core::usecase::Silent;
use memtally_core::{
    show, ProcRoot, RegionSink, Result, Selection, ShowOptions, ShowReport, ShowView,
};

/// One process, each region handed to `sink` as it is read.
pub fn show_one_with(
    root: &ProcRoot,
    pid: u32,
    opts: &ShowOptions,
    sink: &mut impl RegionSink,
) -> Result<ShowReport> {
    regions(show(root, &ShowView::Process(pid), opts, sink, &Silent)?)
}

/// One process.
pub fn show_one(root: &ProcRoot, pid: u32, opts: &ShowOptions) -> Result<ShowReport> {
    show_one_with(root, pid, opts, &mut ())
}

/// A selection, each process read whole.
pub fn show_many(root: &ProcRoot, sel: &Selection, opts: &ShowOptions) -> Result<ShowReport> {
    regions(show(root, &ShowView::Selection(sel.clone()), opts, &mut (), &Silent)?)
}

fn regions(shown: memtally_core::Shown) -> Result<ShowReport> {
    Ok(shown.into_regions().expect("a view of processes' regions"))
}
