//! `memtally export`: the metrics of `memtally serve`, once, for
//! node_exporter's textfile collector (`--textfile DIR` writes
//! `DIR/memtally.prom` atomically) or on standard output.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use memtally_core::source::ProcRoot;
use memtally_core::usecase::metrics::collect;
use memtally_core::write::Dir;
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
    let opts = args.metrics.options_for(root)?;
    // Opened (and refused, where another user could replace the file)
    // before the scan; held, so the file lands in this very directory.
    let dir = match &args.textfile {
        Some(dir) => Some(Dir::open(dir).map_err(|e| not_a_directory(dir, e))?),
        None => None,
    };
    if let Some(w) = crate::cli::serve::start_withheld(root) {
        eprintln!("memtally: its {w}");
    }
    let metrics = collect(root, &opts)?;
    let text = encode(&metrics, Exposition::Text);
    match &dir {
        Some(dir) => dir.write_file(TEXTFILE_NAME.as_ref(), text.as_bytes())?,
        None => out.write_all(text.as_bytes()).map_err(stdout_error)?,
    }
    // Whole: a signal that came meanwhile does not make it a failure.
    crate::signal::whole();
    Ok(())
}

/// A file given where the directory should be: said as such.
fn not_a_directory(dir: &std::path::Path, e: Error) -> Error {
    match e {
        Error::Io { source, .. } if source.raw_os_error() == Some(libc::ENOTDIR) => {
            Error::Usage(format!(
                "--textfile {}: not a directory (give node_exporter's --collector.textfile.directory)",
                dir.display()
            ))
        }
        e => e,
    }
}
