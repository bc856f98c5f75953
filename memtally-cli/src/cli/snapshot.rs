//! `memtally snapshot`: everything show and top know about a selection,
//! at one moment, into one JSON file for `diff` and `plot`.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;

use memtally_core::source::ProcRoot;
use memtally_core::usecase::snapshot::take;
use memtally_core::write::write_file;
use memtally_core::{Error, Result};

use crate::cli::progress::with_progress;
use crate::cli::select::SelectArgs;
use crate::render::notes::document;
use crate::render::stdout_error;

#[derive(Debug, Args)]
pub struct SnapshotArgs {
    /// One process; or a selection (--tree, --pid, --name, --user, --cgroup); every process when none.
    pub pid: Option<u32>,

    #[command(flatten)]
    pub select: SelectArgs,

    /// Write the snapshot here (`-` or absent: standard output).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub fn run(root: &ProcRoot, args: &SnapshotArgs, out: &mut dyn Write) -> Result<()> {
    let sel = args.select.selection(args.pid)?;
    let snapshot = document(with_progress(|progress| take(root, &sel, progress))?);
    let mut json = serde_json::to_vec(&snapshot).map_err(|e| Error::Usage(e.to_string()))?;
    json.push(b'\n');
    match args.output.as_deref() {
        None => out.write_all(&json).map_err(stdout_error),
        Some(p) if p == Path::new("-") => out.write_all(&json).map_err(stdout_error),
        Some(p) => write_file(p, &json),
    }
}
