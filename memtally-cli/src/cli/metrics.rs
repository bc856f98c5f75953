//! The options `serve` and `export` share.

use std::time::Duration;

use clap::Args;

use memtally_core::analyze::metrics::MetricsBy;
use memtally_core::model::guard::{ReadGuard, DEFAULT_MAX_MAPPINGS};
use memtally_core::source::ProcRoot;
use memtally_core::usecase::metrics::MetricsOptions;
use memtally_core::Result;

use crate::render::errors::Worded;

use crate::cli::choice::choice;
use crate::cli::select::SelectArgs;

#[derive(Debug, Clone, Args)]
pub struct MetricsArgs {
    #[command(flatten)]
    pub select: SelectArgs,

    /// Publish the first N rows by PSS; the rest are added up in
    /// memtally_other_processes_* (bounds the number of series).
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub top: usize,

    /// One series per process, or added up per program or cgroup. Given
    /// again, each grouping is published beside the first (`--by program
    /// --by cgroup`: per program, and per cgroup with its charge), from one
    /// scan; memtally_other_processes_* are the first grouping's rest.
    #[arg(long, value_parser = choice::<MetricsBy>(), default_value = "process", action = clap::ArgAction::Append)]
    pub by: Vec<MetricsBy>,

    /// A process with more mappings than N is not read mapping by mapping
    /// (smaps, which the GPU figures read for processes with GPU files):
    /// it is reported from smaps_rollup, status and its GPU fdinfo, and
    /// counted in memtally_processes_limited{reason="mappings"}. The
    /// default is a smaps read of about 20 ms (docs/benchmarks.md).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_MAPPINGS)]
    pub max_mappings: usize,

    /// A process whose reads have taken longer than this is not read
    /// further (no smaps): counted in
    /// memtally_processes_limited{reason="read_budget"}.
    #[arg(long, value_name = "DURATION", default_value = "50ms", value_parser = crate::cli::duration::duration)]
    pub read_budget: Duration,

    /// Also publish each row's exclusive bytes (memtally_process_exclusive_bytes,
    /// or per --by program / cgroup): resident pages and swap slots no process
    /// outside the row maps, what ending it gives back. Reads the rows'
    /// pages (pagemap, kpagecount) at each scan, about 60 ms per resident
    /// GiB, so only when asked; needs root (CAP_SYS_ADMIN). A process past
    /// --max-mappings, or whose resident + swapped bytes at 80 ms per GiB
    /// pass --read-budget, is not read: its row has no exclusive figure,
    /// and it is counted in memtally_pages_limited.
    #[arg(long)]
    pub pages: bool,
}

impl MetricsArgs {
    /// The use case's options, the selection checked.
    pub fn options(&self) -> Result<MetricsOptions> {
        let select = self.select.selection(None)?;
        let guard = ReadGuard { max_mappings: self.max_mappings, budget: self.read_budget };
        Ok(MetricsOptions::default()
            .with_select(select)
            .with_top(self.top)
            .with_by(self.by.first().copied().unwrap_or_default())
            .with_also(self.by.iter().skip(1).copied().collect())
            .with_guard(guard)
            .with_pages(self.pages))
    }

    /// The options, with `--pages` dropped where the page read is refused
    /// here (no CAP_SYS_ADMIN, a recorded tree): said in one stderr line
    /// at start, and no exclusive figure published (never zeros).
    pub fn options_for(&self, root: &ProcRoot) -> Result<MetricsOptions> {
        let opts = self.options()?;
        if !opts.pages {
            return Ok(opts);
        }
        match memtally_core::usecase::metrics_pages::probe(root) {
            Ok(()) => Ok(opts),
            Err(e) => {
                eprintln!("memtally: --pages: {}; no exclusive metrics published", Worded(&e));
                Ok(opts.with_pages(false))
            }
        }
    }
}
