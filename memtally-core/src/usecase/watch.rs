//! `watch`: a selection sampled cheaply, again and again: per process and
//! in total from the rollups; per category from full smaps when asked (by
//! default for at most 16 processes, since that read costs more).

use std::collections::BTreeMap;

use crate::analyze::category::Category;
use crate::analyze::select::Selection;
use crate::analyze::snapshot::categories;
use crate::analyze::trend::{Sample, Scope};
use crate::error::Result;
use crate::model::{Needs, Sizes};
use crate::source::ProcRoot;
use crate::usecase::read::read_rollups;
use crate::usecase::Silent;

/// Whether a sample reads categories.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Categories {
    /// For at most 16 processes.
    #[default]
    Auto,
    /// Always, however many processes.
    Always,
    /// Never: totals and processes only.
    Never,
}

/// Reads the selection once: totals and per process from the rollups,
/// per category from smaps as `categories` says. A narrowed selection
/// that finds no process is an error (nothing matched).
pub fn sample(root: &ProcRoot, sel: &Selection, cats: Categories) -> Result<Sample> {
    let (_, mut found) =
        read_rollups(root, sel, Needs { cmdline: true, ..Needs::default() }, &Silent)?;
    crate::usecase::shmem_swap::add(root, &mut found.processes);
    // Categories for the processes read (those that exited meanwhile
    // have none to give).
    let with_categories = match cats {
        Categories::Always => true,
        Categories::Never => false,
        Categories::Auto => found.processes.len() <= 16,
    };
    let pids: Vec<u32> = found.processes.iter().map(|p| p.info.pid).collect();
    let mut sample = Sample::new();
    let mut total = Sizes::default();
    for p in &found.processes {
        total.add(&p.sizes);
        sample
            .insert((Scope::Process, p.info.pid.to_string()), (p.info.command(), p.sizes.clone()));
    }
    // Sums over several processes keep the summable figures only
    // (model::summable): RSS and Shared_Dirty would count shared pages
    // once per process.
    let n = found.processes.len();
    sample.insert(
        (Scope::Total, "total".into()),
        (format!("{n} processes"), total.over_processes(n)),
    );
    if with_categories {
        let mut cats: BTreeMap<&'static str, Sizes> = BTreeMap::new();
        let read = pids.len();
        for pid in pids {
            let Ok(p) = crate::usecase::read::read_whole(root, pid) else { continue };
            for g in categories(&p.regions) {
                let key = Category::from_key(&g.key).map_or("?", Category::key);
                cats.entry(key).or_default().add(&g.sizes);
            }
        }
        for (k, s) in cats {
            sample.insert(
                (Scope::Category, k.to_string()),
                (Category::label_or_key(k).to_string(), s.over_processes(read)),
            );
        }
    }
    Ok(sample)
}
