//! `memtally snapshot`: everything show and top know about a selection,
//! at one moment, into one JSON file for `diff` and `plot`.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use clap::Args;

use memtally_core::source::ProcRoot;
use memtally_core::usecase::snapshot_stream::{take_into, Output};
use memtally_core::write::NewFile;
use memtally_core::{Error, Result};

use crate::cli::progress::with_progress;
use crate::cli::select::SelectArgs;
use crate::render::notes::word;
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
    // Written as it is read (usecase::snapshot_stream): a file through
    // its new name, renamed over the target once whole.
    let take = |out: &mut dyn Write, error: &dyn Fn(std::io::Error) -> Error| {
        let output = Output { out, word: &word, error };
        with_progress(|progress| take_into(root, &sel, progress, output))
    };
    match args.output.as_deref() {
        Some(p) if p != Path::new("-") => {
            let mut file = NewFile::create(p)?;
            let error = |e: std::io::Error| Error::io(p, e);
            let mut buffered = BufWriter::with_capacity(64 << 10, &mut file);
            take(&mut buffered, &error)?;
            buffered.flush().map_err(error)?;
            drop(buffered);
            file.commit()
        }
        _ => {
            take(out, &stdout_error)?;
            out.flush().map_err(stdout_error)
        }
    }
}
