//! `faults`: the page faults of a selection over a time, sampled with
//! their call stacks, by category (see `source::faults`). Linux only.

use crate::analyze::select::Selection;
use crate::error::{Error, Result, UseCase};
use crate::model::faults::FaultReport;
use crate::model::Needs;
use crate::source::ProcRoot;
use crate::usecase::select::{require_selection, select};

pub use crate::source::faults::FaultOptions;

/// Records the page faults of the selected (live) processes, and of the
/// threads and children they start meanwhile, until `opts.duration`
/// has passed, `stop()` answers true, or every selected process ended.
/// `stop` is first asked once the faults are being counted.
pub fn faults(
    root: &ProcRoot,
    sel: &Selection,
    opts: &FaultOptions,
    stop: &dyn Fn() -> bool,
) -> Result<FaultReport> {
    require_selection(sel, UseCase::Faults)?;
    if !root.is_live() {
        return Err(Error::Usage(format!(
            "faults records live processes only: {} is a recorded tree",
            root.path().display()
        )));
    }
    let selected = select(root, sel, Needs::default())?;
    selected.require_any(root, sel)?;
    let pids: Vec<u32> = selected.infos.iter().map(|i| i.pid).collect();
    crate::source::faults::record(root, &pids, opts, stop)
}
