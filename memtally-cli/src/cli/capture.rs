//! `memtally capture`: record /proc files for later analysis, of one
//! process or a whole selection.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use memtally_core::source::ProcRoot;
use memtally_core::usecase::capture::capture;
use memtally_core::Result;

use crate::cli::select::SelectArgs;
use crate::render::stdout_error;

#[derive(Debug, Args)]
pub struct CaptureArgs {
    /// The process to record; or record a whole selection (--tree, --pid, --name, --user, --cgroup).
    pub pid: Option<u32>,

    #[command(flatten)]
    pub select: SelectArgs,

    /// Directory to write (created if missing; refused if another user owns it or may write it without the sticky bit); read it back with --proc-root DIR.
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
}

pub fn run(root: &ProcRoot, args: &CaptureArgs, out: &mut dyn Write) -> Result<()> {
    let sel = args.select.selection(args.pid)?;
    let done = capture(root, &sel, &args.output, &|| crate::signal::received().is_some())?;
    if done.stopped {
        eprintln!(
            "memtally: capture stopped by a signal: {} of {} selected processes kept in {}, marked incomplete (read back as partial)",
            done.recorded.len(),
            done.selected,
            done.dir.display()
        );
    } else {
        // Whole: a signal that came meanwhile does not make it a failure.
        crate::signal::whole();
    }
    let mut say = || -> std::io::Result<()> {
        for (pid, e) in &done.skipped {
            writeln!(out, "skipped pid {pid}: {e}")?;
        }
        for (pid, report) in &done.recorded {
            writeln!(out, "recorded {} files of pid {pid}", report.written.len())?;
            if let Some(why) = &report.incomplete {
                writeln!(
                    out,
                    "  incomplete: pid {pid} {why}; marked so, and read back as partial"
                )?;
            }
            for (path, why) in &report.skipped {
                writeln!(out, "  left out {}: {why}", path.display())?;
            }
        }
        if !done.cgroups.0.is_empty() {
            writeln!(out, "recorded {} memory cgroup files (sys/fs/cgroup)", done.cgroups.0.len())?;
        }
        for (path, why) in &done.cgroups.1 {
            writeln!(out, "  left out {}: {why}", path.display())?;
        }
        if !done.zram.0.is_empty() {
            writeln!(out, "recorded {} zram mm_stat files (sys/block)", done.zram.0.len())?;
        }
        for (path, why) in &done.zram.1 {
            writeln!(out, "  left out {}: {why}", path.display())?;
        }
        for path in &done.nvidia.0 {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            writeln!(out, "recorded nvidia-smi -q -x ({name})")?;
        }
        for (path, why) in &done.nvidia.1 {
            writeln!(out, "  left out {}: {why}", path.display())?;
        }
        let dir = done.dir.display();
        match done.recorded.as_slice() {
            [] => Ok(()),
            [(one, _)] => writeln!(
                out,
                "into {dir}; read it back with: memtally --proc-root {dir} show {one}"
            ),
            many => writeln!(
                out,
                "{} processes into {dir}; read it back with: memtally --proc-root {dir} top",
                many.len()
            ),
        }
    };
    say().map_err(stdout_error)
}
