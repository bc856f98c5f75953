//! Each selected process's regions summed by (category, mapping), one
//! process at a time: the shape of folded stacks (`snapshot --format
//! folded`). A process's sums are handed to the caller once it is read and
//! then dropped, so memory follows the largest process's distinct
//! mappings, never the selection.

use std::collections::BTreeMap;

use crate::analyze::category::{categorize, Category};
use crate::analyze::files::file_key;
use crate::analyze::select::Selection;
use crate::error::{Error, Result};
use crate::model::{Figure, Flow, Needs, Note, ProcInfo, Region, RegionSink};
use crate::source::ProcRoot;
use crate::usecase::read::ReadProcesses;
use crate::usecase::select::select;
use crate::usecase::snapshot_regions::read_process;
use crate::usecase::Progress;

/// One process's figure summed by category, then by mapping (a file's
/// path or a kind of memory, as `files` names them: `[heap]`,
/// `[anon:NAME]`, `[anonymous]`), in that order; mappings without the
/// figure are left out.
pub type MappingSums = BTreeMap<(Category, String), u64>;

/// Reads the selection one process after another and calls `each` with
/// every process read and its sums of `figure`. Returns what the sums
/// leave out (processes that could not be read), or an error when none
/// could be; an error of `each` ends the read with it.
pub fn each_process(
    root: &ProcRoot,
    sel: &Selection,
    figure: Figure,
    progress: &dyn Progress,
    each: &mut dyn FnMut(&ProcInfo, &MappingSums) -> Result<()>,
) -> Result<Vec<Note>> {
    let selected = select(root, sel, Needs { cmdline: true, ..Needs::default() })?;
    selected.require_any(root, sel)?;
    let mut read = ReadProcesses { vanished: selected.vanished, ..Default::default() };
    let mut any = false;
    progress.start("reading processes", selected.infos.len());
    for info in &selected.infos {
        let mut sums = Sums { figure, sums: MappingSums::new() };
        match read_process(root, info, &mut sums) {
            Ok(_) => {
                any = true;
                each(info, &sums.sums)?;
            }
            Err(e) => read.missed(e),
        }
        progress.step();
    }
    progress.finish();
    if !any {
        return Err(match read.require_some() {
            Err(e) => e,
            Ok(_) => Error::NotFound("no selected process could be read".into()),
        });
    }
    Ok(read.notes())
}

/// The sink that sums one process's regions.
struct Sums {
    figure: Figure,
    sums: MappingSums,
}

impl RegionSink for Sums {
    fn restart(&mut self) -> bool {
        self.sums.clear();
        true
    }

    fn region(&mut self, _line: usize, r: &Region) -> Flow {
        if let Some(bytes) = r.sizes.figure(self.figure) {
            let key = (categorize(r), file_key(r).to_string());
            *self.sums.entry(key).or_default() += bytes;
        }
        Flow::Continue
    }
}
