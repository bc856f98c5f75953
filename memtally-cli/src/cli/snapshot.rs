//! `memtally snapshot`: everything show and top know about a selection,
//! at one moment, into one JSON file for `diff` and `plot`.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;

use memtally_core::source::ProcRoot;
use memtally_core::usecase::snapshot::{add_exact, take};
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

    /// Also store each process's exclusive figure (what it alone gives back when it ends) and the selection's: its pages' frames read once more, after the regions (live /proc, needs root or CAP_SYS_ADMIN; see docs/pages.md).
    #[arg(long)]
    pub exact: bool,

    /// Write the snapshot here (`-` or absent: standard output).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub fn run(root: &ProcRoot, args: &SnapshotArgs, out: &mut dyn Write) -> Result<()> {
    let sel = args.select.selection(args.pid)?;
    let mut taken = with_progress(|progress| take(root, &sel, progress))?;
    if args.exact {
        add_exact(root, &sel, &mut taken)?;
    }
    let snapshot = document(taken);
    let mut json = serde_json::to_vec(&snapshot).map_err(|e| Error::Usage(e.to_string()))?;
    json.push(b'\n');
    match args.output.as_deref() {
        None => out.write_all(&json).map_err(stdout_error),
        Some(p) if p == Path::new("-") => out.write_all(&json).map_err(stdout_error),
        Some(p) => write_file(p, &json),
    }
}
