//! `memtally capture`: record /proc files for later analysis, of one
//! process or a whole selection.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use crate::cli::select::{select, SelectArgs};
use crate::error::{Error, Result};
use crate::source::capture::capture_process;
use crate::source::scan::Needs;
use crate::source::ProcRoot;

#[derive(Debug, Args)]
pub struct CaptureArgs {
    /// The process to record; or record a whole selection (--tree, --pid, --name, --user, --cgroup).
    pub pid: Option<u32>,

    #[command(flatten)]
    pub select: SelectArgs,

    /// Directory to write (created if missing); read it back with --proc-root DIR.
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
}

pub fn run(root: &ProcRoot, args: &CaptureArgs, out: &mut dyn Write) -> Result<()> {
    let io = |e| Error::io("standard output", e);
    let mut sel = args.select.selection()?;
    sel.pids.extend(args.pid);
    if sel.is_everything() {
        return Err(Error::Usage(
            "capture needs a PID or a selection (--pid, --tree, --name, --user, --cgroup)".into(),
        ));
    }
    let only_pids =
        sel.trees.is_empty() && sel.name.is_none() && sel.uids.is_empty() && sel.cgroup.is_none();
    let pids: Vec<u32> = if only_pids {
        sel.pids.clone()
    } else {
        select(root, &sel, Needs::default())?.infos.iter().map(|p| p.pid).collect()
    };
    let mut recorded = Vec::new();
    for &pid in &pids {
        let report = match capture_process(root, pid, &args.output) {
            Ok(r) => r,
            // In a selection, a process that exits or is not ours is
            // skipped and said; one named process must be recorded.
            Err(e) if pids.len() > 1 => {
                writeln!(out, "skipped pid {pid}: {e}").map_err(io)?;
                continue;
            }
            Err(e) => return Err(e),
        };
        writeln!(out, "recorded {} files of pid {pid}", report.written.len()).map_err(io)?;
        for (path, why) in &report.skipped {
            writeln!(out, "  left out {}: {why}", path.display()).map_err(io)?;
        }
        recorded.push(pid);
    }
    if recorded.is_empty() {
        return Err(Error::NotFound("no selected process could be recorded".into()));
    }
    let dir = args.output.display();
    match recorded.as_slice() {
        [one] => {
            writeln!(out, "into {dir}; read it back with: memtally --proc-root {dir} show {one}")
        }
        _ => writeln!(
            out,
            "{} processes into {dir}; read it back with: memtally --proc-root {dir} top",
            recorded.len()
        ),
    }
    .map_err(io)
}
