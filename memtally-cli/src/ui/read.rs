//! The process list's reads: `usecase::top::top`'s own steps (select,
//! `scan::read_all` over smaps_rollup, GPU, `analyze::top::build`), so the
//! figures are the same, with one saving a refresh every second earns:
//! a process's command line is read once, when it first appears (or
//! changes its name), not at every refresh.

use std::collections::HashMap;

use memtally_core::analyze::select::Selection;
use memtally_core::analyze::top::{build, TopBy, TOP_SORT_FIELDS};
use memtally_core::model::Needs;
use memtally_core::source::users::UserNames;
use memtally_core::source::{scan, ProcRoot};
use memtally_core::usecase::gpu::add_to_top;
use memtally_core::usecase::select::select;
use memtally_core::usecase::top::{check_sort, Top};
use memtally_core::Result;

/// Command lines and program names by (PID, name), of the last refresh.
#[derive(Debug, Default)]
pub struct Reader {
    cmdlines: HashMap<(u32, String), (String, String)>,
}

impl Reader {
    /// Every process, grouped and sorted as `top --by BY --sort SORT --all`.
    pub fn top(&mut self, root: &ProcRoot, by: TopBy, sort: &str, cgroups: bool) -> Result<Top> {
        let sort = [sort.to_string()];
        check_sort(&sort, TOP_SORT_FIELDS)?;
        let needs = Needs { cmdline: false, cgroup: cgroups || by == TopBy::Cgroup };
        let selected = select(root, &Selection::default(), needs)?;
        let threads = scan::default_threads();
        let mut found = scan::read_all(root, selected.infos, threads, &|| {});
        found.vanished += selected.vanished;
        add_to_top(root, &mut found.processes);
        let mut missing = Vec::new();
        for (i, p) in found.processes.iter_mut().enumerate() {
            match self.cmdlines.get(&(p.info.pid, p.info.comm.clone())) {
                Some((cmdline, program)) => {
                    p.info.cmdline = cmdline.clone();
                    p.info.program = program.clone();
                }
                None => missing.push(i),
            }
        }
        scan::fill_cmdlines(root, &mut found.processes, &missing, threads);
        self.cmdlines = found
            .processes
            .iter()
            .map(|p| {
                (
                    (p.info.pid, p.info.comm.clone()),
                    (p.info.cmdline.clone(), p.info.program.clone()),
                )
            })
            .collect();
        let meminfo = root.meminfo();
        let users = UserNames::default();
        let report =
            build(&found.processes, by, &sort, None, &|uid| users.name(uid), meminfo.as_ref());
        Ok(Top { report, scan: found, kernel_threads: selected.kernel_threads, users })
    }
}
