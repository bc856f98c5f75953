//! `capture`: records the `/proc` files memtally reads (and the GPU fd
//! targets and fdinfo) into a directory laid out like `/proc`, to analyse
//! later with `--proc-root DIR`. Every file goes through [`crate::write`].

use std::path::{Path, PathBuf};

use crate::analyze::select::Selection;
use crate::error::{Error, Result};
use crate::model::Needs;
use crate::source::capture::{MACHINE_FILES, PROCESS_FILES};
use crate::source::gpu::{self, FD_TARGETS};
use crate::source::ProcRoot;
use crate::usecase::select::select;
use crate::write::write_file;

/// What one process's capture wrote and what it had to leave out.
#[derive(Debug, Default)]
pub struct CaptureReport {
    /// The files written, in order.
    pub written: Vec<PathBuf>,
    /// (file, why) for files that could not be read.
    pub skipped: Vec<(PathBuf, String)>,
}

/// What a capture of a selection did, process by process.
#[derive(Debug, Default)]
pub struct Captured {
    /// (pid, what was written) of each process recorded.
    pub recorded: Vec<(u32, CaptureReport)>,
    /// (pid, why) of each selected process that could not be recorded.
    pub skipped: Vec<(u32, Error)>,
    /// The memory cgroup files of the recorded processes (under
    /// `sys/fs/cgroup/`), and (file, why) for those that could not be read.
    pub cgroups: crate::usecase::cgroup::Recorded,
}

/// Records the selected processes into `out`. One named PID must be
/// recorded (its error is returned); in a wider selection a process that
/// exits or is not readable is skipped and said.
pub fn capture(root: &ProcRoot, sel: &Selection, out: &Path) -> Result<Captured> {
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
        select(root, sel, Needs::default())?.infos.iter().map(|p| p.pid).collect()
    };
    let mut done = Captured::default();
    for &pid in &pids {
        match capture_process(root, pid, out) {
            Ok(r) => done.recorded.push((pid, r)),
            Err(e) if pids.len() > 1 => done.skipped.push((pid, e)),
            Err(e) => return Err(e),
        }
    }
    if done.recorded.is_empty() {
        return Err(Error::NotFound("no selected process could be recorded".into()));
    }
    let recorded: Vec<u32> = done.recorded.iter().map(|(pid, _)| *pid).collect();
    done.cgroups = crate::usecase::cgroup::record(root, &recorded, out)?;
    Ok(done)
}

/// Copies `pid`'s files from `from` into `out/PID/`, and the machine files
/// into `out/`.
fn capture_process(from: &ProcRoot, pid: u32, out: &Path) -> Result<CaptureReport> {
    let mut report = CaptureReport::default();
    // smaps first: if it cannot be read there is nothing worth keeping.
    let smaps = from.read(pid, "smaps")?;
    let dir = out.join(pid.to_string());
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    keep(&dir.join("smaps"), &smaps, &mut report)?;
    for file in PROCESS_FILES.iter().filter(|f| **f != "smaps") {
        match from.read(pid, file) {
            Ok(bytes) => keep(&dir.join(file), &bytes, &mut report)?,
            Err(e) => report.skipped.push((from.pid_file(pid, file), e.to_string())),
        }
    }
    // GPU: link targets and fdinfo of DRM and dma-buf fds (see source::gpu).
    match gpu::recording(from, pid) {
        Ok(Some(rec)) => {
            if !rec.fdinfo.is_empty() {
                let fdinfo = dir.join("fdinfo");
                std::fs::create_dir_all(&fdinfo).map_err(|e| Error::io(&fdinfo, e))?;
                for (fd, bytes) in &rec.fdinfo {
                    keep(&fdinfo.join(fd.to_string()), bytes, &mut report)?;
                }
            }
            // Always written, even empty: it says "this process had no GPU fds".
            keep(&dir.join(FD_TARGETS), rec.fd_targets.as_bytes(), &mut report)?;
        }
        Ok(None) => {}
        Err(e) => report.skipped.push((from.pid_file(pid, "fd"), e.to_string())),
    }
    for file in MACHINE_FILES {
        let src = from.path().join(file);
        match std::fs::read(&src) {
            Ok(bytes) => keep(&out.join(file), &bytes, &mut report)?,
            Err(e) => report.skipped.push((src, e.to_string())),
        }
    }
    Ok(report)
}

fn keep(path: &Path, bytes: &[u8], report: &mut CaptureReport) -> Result<()> {
    write_file(path, bytes)?;
    report.written.push(path.to_path_buf());
    Ok(())
}
