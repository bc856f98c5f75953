//! The options `serve` and `export` share.

use clap::Args;

use memtally_core::analyze::metrics::MetricsBy;
use memtally_core::usecase::metrics::MetricsOptions;
use memtally_core::Result;

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

    /// One series per process, or added up per program or cgroup.
    #[arg(long, value_parser = choice::<MetricsBy>(), default_value = "process")]
    pub by: MetricsBy,
}

impl MetricsArgs {
    /// The use case's options, the selection checked.
    pub fn options(&self) -> Result<MetricsOptions> {
        let select = self.select.selection(None)?;
        Ok(MetricsOptions::default().with_select(select).with_top(self.top).with_by(self.by))
    }
}
