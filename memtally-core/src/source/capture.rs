//! Records a process's `/proc` files into a directory laid out like
//! `/proc` itself, so `--proc-root DIR` reads it back later, anywhere.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::source::ProcRoot;

/// Files recorded per process. `smaps` is required; the rest are kept when
/// readable (a kernel without `smaps_rollup` still gives a useful capture).
pub const PROCESS_FILES: &[&str] =
    &["smaps", "maps", "smaps_rollup", "status", "statm", "stat", "cmdline", "comm"];

/// Files recorded once per tree.
pub const MACHINE_FILES: &[&str] = &["meminfo"];

/// What one capture wrote and what it had to leave out.
#[derive(Debug, Default)]
pub struct CaptureReport {
    pub written: Vec<PathBuf>,
    /// (file, why) for files that could not be read.
    pub skipped: Vec<(PathBuf, String)>,
}

/// Copies `PID`'s files from `from` into `out/PID/`, and the machine files
/// into `out/`.
pub fn capture_process(from: &ProcRoot, pid: u32, out: &Path) -> Result<CaptureReport> {
    let mut report = CaptureReport::default();
    // smaps first: if it cannot be read there is nothing worth keeping.
    let smaps = from.read(pid, "smaps")?;
    let dir = out.join(pid.to_string());
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    write(&dir.join("smaps"), &smaps, &mut report)?;
    for file in PROCESS_FILES.iter().filter(|f| **f != "smaps") {
        match from.read(pid, file) {
            Ok(bytes) => write(&dir.join(file), &bytes, &mut report)?,
            Err(e) => report.skipped.push((from.pid_file(pid, file), e.to_string())),
        }
    }
    // GPU: link targets and fdinfo of DRM and dma-buf fds (see source::gpu).
    match crate::source::gpu::record(from, pid, &dir) {
        Ok(files) => report.written.extend(files),
        Err(e) => report.skipped.push((from.pid_file(pid, "fd"), e.to_string())),
    }
    for file in MACHINE_FILES {
        let src = from.path().join(file);
        match std::fs::read(&src) {
            Ok(bytes) => write(&out.join(file), &bytes, &mut report)?,
            Err(e) => report.skipped.push((src, e.to_string())),
        }
    }
    Ok(report)
}

fn write(path: &Path, bytes: &[u8], report: &mut CaptureReport) -> Result<()> {
    std::fs::write(path, bytes).map_err(|e| Error::io(path, e))?;
    report.written.push(path.to_path_buf());
    Ok(())
}
