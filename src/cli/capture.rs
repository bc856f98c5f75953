//! `memtally capture PID -o DIR`: record /proc files for later analysis.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use crate::error::{Error, Result};
use crate::source::capture::capture_process;
use crate::source::ProcRoot;

#[derive(Debug, Args)]
pub struct CaptureArgs {
    /// The process to record.
    pub pid: u32,

    /// Directory to write (created if missing); read it back with --proc-root DIR.
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
}

pub fn run(root: &ProcRoot, args: &CaptureArgs, out: &mut dyn Write) -> Result<()> {
    let report = capture_process(root, args.pid, &args.output)?;
    let io = |e| Error::io("standard output", e);
    writeln!(
        out,
        "recorded {} files of pid {} into {}",
        report.written.len(),
        args.pid,
        args.output.display()
    )
    .map_err(io)?;
    for (path, why) in &report.skipped {
        writeln!(out, "skipped {}: {why}", path.display()).map_err(io)?;
    }
    writeln!(
        out,
        "read it back with: memtally --proc-root {} show {}",
        args.output.display(),
        args.pid
    )
    .map_err(io)
}
