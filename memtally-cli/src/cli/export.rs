//! `memtally export`: the metrics of `memtally serve`, once, for
//! node_exporter's textfile collector (`--textfile DIR` writes
//! `DIR/memtally.prom` atomically) or on standard output.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use memtally_core::source::ProcRoot;
use memtally_core::usecase::metrics::collect;
use memtally_core::write::write_file;
use memtally_core::{Error, Result};

use crate::cli::metrics::MetricsArgs;
use crate::render::prometheus::{encode, Exposition};
use crate::render::stdout_error;

/// The file written in the textfile directory.
pub const TEXTFILE_NAME: &str = "memtally.prom";

#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(flatten)]
    pub metrics: MetricsArgs,

    /// Write DIR/memtally.prom (a new file renamed into place, so
    /// node_exporter never reads half a file; it reads only `*.prom`, so
    /// the new file's `.memtally-*.tmp` name is never read) instead of
    /// printing to standard output.
    #[arg(long, value_name = "DIR")]
    pub textfile: Option<PathBuf>,
}

pub fn run(root: &ProcRoot, args: &ExportArgs, out: &mut dyn Write) -> Result<()> {
    let opts = args.metrics.options()?;
    if let Some(dir) = &args.textfile {
        let meta = std::fs::metadata(dir).map_err(|e| Error::io(dir, e))?;
        if !meta.is_dir() {
            return Err(Error::Usage(format!(
                "--textfile {}: not a directory (give node_exporter's --collector.textfile.directory)",
                dir.display()
            )));
        }
    }
    let metrics = collect(root, &opts)?;
    let text = encode(&metrics, Exposition::Text);
    match &args.textfile {
        Some(dir) => write_file(&dir.join(TEXTFILE_NAME), text.as_bytes()),
        None => out.write_all(text.as_bytes()).map_err(stdout_error),
    }
}
