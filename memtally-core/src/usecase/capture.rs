//! `capture`: records the `/proc` files memtally reads (and the GPU fd
//! targets and fdinfo) into a directory laid out like `/proc`, to analyse
//! later with `--proc-root DIR`. Every file goes through [`crate::write`].

use std::fs::Permissions;
use std::io::ErrorKind;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

use crate::analyze::select::Selection;
use crate::error::{Error, Result};
use crate::model::Needs;
use crate::source::capture::{INCOMPLETE, MACHINE_FILES, PROCESS_FILES};
use crate::source::gpu::{self, FD_TARGETS};
use crate::source::proc_root::MAX_SMAPS;
use crate::source::{stamp, ProcRoot};
use crate::usecase::select::select;
use crate::write::write_file;

/// What one process's capture wrote and what it had to leave out.
#[derive(Debug, Default)]
pub struct CaptureReport {
    /// The files written, in order.
    pub written: Vec<PathBuf>,
    /// (file, why) for files that could not be read.
    pub skipped: Vec<(PathBuf, String)>,
    /// Why the process could not be recorded consistently (it exited, or
    /// exec'd on the second try too): the recording is kept, marked with
    /// `memtally-incomplete`, and read back as partial.
    pub incomplete: Option<String>,
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
        let selected = select(root, sel, Needs::default())?;
        selected.require_any(root, sel)?;
        selected.infos.iter().map(|p| p.pid).collect()
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
/// Records one process into `out/PID`, and the machine files into `out`.
///
/// The process's files are written into a fresh directory with a random
/// name inside `out`, then that directory takes the name `out/PID` in one
/// rename: nothing is ever written through a symlink planted at `out/PID`
/// or inside it. An earlier capture of the same PID is replaced whole
/// (exchanged, then removed without following its links); whatever sits at
/// `out/PID` (a symlink, a file) is removed, never followed.
///
/// A live process is stamped before and after (see
/// [`crate::source::stamp`]): one that exec'd while being recorded is
/// recorded once more; one that exited (or exec'd again) is kept with an
/// [`INCOMPLETE`] mark saying so, so a tree cut short is never left
/// behind as if complete.
fn capture_process(from: &ProcRoot, pid: u32, out: &Path) -> Result<CaptureReport> {
    let mut tries = 0;
    let (staging, mut report) = loop {
        let (staging, mut report, change) = record(from, pid, out)?;
        let why = match change {
            stamp::Change::Same => break (staging, report),
            // Dropped: the new directory goes with it.
            stamp::Change::Execed if tries == 0 => {
                tries += 1;
                continue;
            }
            stamp::Change::Execed => "ran a new program while being recorded, twice",
            stamp::Change::Gone => "exited while being recorded",
        };
        // Written into the new directory before it is installed: the
        // recording never appears without its mark.
        write_file(&staging.path().join(INCOMPLETE), format!("{why}\n").as_bytes()).map_err(
            |e| match e {
                Error::Io { source, .. } => Error::io(out.join(pid.to_string()), source),
                e => e,
            },
        )?;
        report.written.push(out.join(pid.to_string()).join(INCOMPLETE));
        report.incomplete = Some(why.to_string());
        break (staging, report);
    };
    let dest = out.join(pid.to_string());
    install(staging, &dest)?;
    for file in MACHINE_FILES {
        let src = from.path().join(file);
        match from.read_path(&src) {
            Ok(bytes) => keep(&out.join(file), &bytes, &mut report)?,
            Err(e) => report.skipped.push((src, e.to_string())),
        }
    }
    Ok(report)
}

/// Records one process into a new directory inside `out`: the directory
/// (removed if anything fails or it is dropped), what was written, named
/// by the paths the files get once installed, and whether the process
/// stayed the same meanwhile.
fn record(
    from: &ProcRoot,
    pid: u32,
    out: &Path,
) -> Result<(TempDir, CaptureReport, stamp::Change)> {
    let before = stamp::stamp(from, pid)?;
    // smaps first: if it cannot be read there is nothing worth keeping.
    let smaps = from.read_up_to(pid, "smaps", MAX_SMAPS)?;
    std::fs::create_dir_all(out).map_err(|e| Error::io(out, e))?;
    let staging = tempfile::Builder::new()
        .prefix(".memtally-capture-")
        .tempdir_in(out)
        .map_err(|e| Error::io(out, e))?;
    let dir = staging.path();
    let shown = out.join(pid.to_string());
    let mut report = CaptureReport::default();
    let keep_in = |name: &Path, bytes: &[u8], report: &mut CaptureReport| {
        // Errors name where the file was to go, never the new directory.
        write_file(&dir.join(name), bytes).map_err(|e| match e {
            Error::Io { source, .. } => Error::io(shown.join(name), source),
            e => e,
        })?;
        report.written.push(shown.join(name));
        Ok::<(), Error>(())
    };
    keep_in(Path::new("smaps"), &smaps, &mut report)?;
    for file in PROCESS_FILES.iter().filter(|f| **f != "smaps") {
        match from.read(pid, file) {
            Ok(bytes) => keep_in(Path::new(file), &bytes, &mut report)?,
            Err(e) => report.skipped.push((from.pid_file(pid, file), e.to_string())),
        }
    }
    // GPU: link targets and fdinfo of DRM and dma-buf fds (see source::gpu).
    match gpu::recording(from, pid) {
        Ok(Some(rec)) => {
            if !rec.fdinfo.is_empty() {
                let fdinfo = dir.join("fdinfo");
                std::fs::create_dir(&fdinfo).map_err(|e| Error::io(shown.join("fdinfo"), e))?;
                for (fd, bytes) in &rec.fdinfo {
                    keep_in(&Path::new("fdinfo").join(fd.to_string()), bytes, &mut report)?;
                }
            }
            // Always written, even empty: it says "this process had no GPU fds".
            keep_in(Path::new(FD_TARGETS), rec.fd_targets.as_bytes(), &mut report)?;
        }
        Ok(None) => {}
        Err(e) => report.skipped.push((from.pid_file(pid, "fd"), e.to_string())),
    }
    let comm =
        String::from_utf8_lossy(&from.read(pid, "comm").unwrap_or_default()).trim().to_string();
    let change = match stamp::check(from, pid, &comm, before.as_ref()) {
        Ok(c) => c,
        Err(Error::Exited { .. }) => stamp::Change::Gone,
        Err(e) => return Err(e),
    };
    Ok((staging, report, change))
}

/// Moves the new directory `staging` to `dest` (see [`capture_process`]).
fn install(staging: TempDir, dest: &Path) -> Result<()> {
    let err = |e| Error::io(dest, e);
    let new = staging.path();
    std::fs::set_permissions(new, Permissions::from_mode(0o755)).map_err(err)?;
    match std::fs::symlink_metadata(dest) {
        Err(e) if e.kind() == ErrorKind::NotFound => {
            rename_noreplace(new, dest).map_err(err)?;
            // The directory is installed: nothing to remove any more.
            let _ = staging.keep();
        }
        Err(e) => return Err(err(e)),
        Ok(_) => {
            // Swap the two in one step: `dest` is never missing, and the
            // old one (directory, symlink or file) ends at the new one's
            // random name, from where it is removed without following links.
            exchange(new, dest).map_err(err)?;
            let old = staging.keep();
            let gone = match std::fs::symlink_metadata(&old) {
                Ok(m) if m.is_dir() => std::fs::remove_dir_all(&old),
                _ => std::fs::remove_file(&old),
            };
            gone.map_err(err)?;
        }
    }
    if let Some(parent) = dest.parent() {
        if let Ok(d) = std::fs::File::open(parent) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

fn c_path(p: &Path) -> std::io::Result<std::ffi::CString> {
    std::ffi::CString::new(p.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from(ErrorKind::InvalidInput))
}

fn renameat2(from: &Path, to: &Path, flags: libc::c_uint) -> std::io::Result<()> {
    let (a, b) = (c_path(from)?, c_path(to)?);
    // The system call itself rather than the C library's wrapper: the musl
    // that Rust's static target links has no renameat2() (glibc does).
    // SAFETY: renameat2(2) with two NUL-terminated paths valid for the call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            flags,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

fn rename_noreplace(from: &Path, to: &Path) -> std::io::Result<()> {
    renameat2(from, to, libc::RENAME_NOREPLACE)
}

fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    renameat2(a, b, libc::RENAME_EXCHANGE)
}

fn keep(path: &Path, bytes: &[u8], report: &mut CaptureReport) -> Result<()> {
    write_file(path, bytes)?;
    report.written.push(path.to_path_buf());
    Ok(())
}
