//! Resetting a live process's referenced bits: `1` written to
//! `/proc/PID/clear_refs`. The process's directory is opened and held,
//! and the files read to check which process it is (`comm`, `stat`) and
//! the reset go through that descriptor: a held directory belongs to the
//! process it was opened for (its files fail once that process is gone),
//! so what was checked is what is reset, even if the PID is reused.

use std::ffi::CString;
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;

use crate::error::{Error, LiveOnly, Result};
use crate::source::proc_root::{read_bounded, ProcRoot, MAX_SMALL};
use crate::sys::{self, OFlags};

/// One process's `/proc` directory, held open.
#[derive(Debug)]
pub(crate) struct Held {
    pid: u32,
    dir: OwnedFd,
}

/// Holds `pid`'s directory of the kernel's procfs at `root`. A recorded
/// tree has no referenced bits: [`Error::LiveOnly`].
pub(crate) fn hold(root: &ProcRoot, pid: u32) -> Result<Held> {
    let live_only =
        || Error::LiveOnly { root: root.path().to_path_buf(), what: LiveOnly::WorkingSet };
    if !root.is_procfs() {
        return Err(live_only());
    }
    let path = CString::new(root.path().as_os_str().as_bytes()).map_err(|_| live_only())?;
    let top = sys::openat(None, &path, OFlags::RDONLY | OFlags::DIRECTORY, 0)
        .map_err(|e| Error::io(root.path(), e))?;
    // Checked on the descriptor itself: what was opened is procfs.
    if !sys::is_procfs(top.as_fd()) {
        return Err(live_only());
    }
    let name = CString::new(pid.to_string()).expect("digits have no NUL");
    let dir = sys::open_dir_at(Some(top.as_fd()), &name)
        .map_err(|e| root.explain(pid, root.path().join(pid.to_string()), e))?;
    Ok(Held { pid, dir })
}

impl Held {
    /// A small file of the held process (`comm`, `stat`), read through the
    /// held directory.
    pub(crate) fn read(&self, root: &ProcRoot, file: &str) -> Result<Vec<u8>> {
        let path = root.pid_file(self.pid, file);
        let name = CString::new(file).expect("file names have no NUL");
        let explain = |e| root.explain(self.pid, path.clone(), e);
        let fd = sys::openat(Some(self.dir.as_fd()), &name, OFlags::RDONLY | OFlags::NOFOLLOW, 0)
            .map_err(explain)?;
        let mut out = Vec::new();
        read_bounded(&mut File::from(fd), &mut out, MAX_SMALL).map_err(explain)?;
        Ok(out)
    }

    /// Resets the referenced bits of every page the process maps (the
    /// kernel's `clear_refs` value 1), so that `Referenced` counts only
    /// what is touched from now on. The file is the process's owner's
    /// (mode 0200): another user's process needs root.
    pub(crate) fn reset(&self, root: &ProcRoot) -> Result<()> {
        self.open_clear_refs(root)?.write_all(b"1").map_err(|e| self.refused(root, e))
    }

    /// Whether the reset would be allowed: `clear_refs` opened for
    /// writing, nothing written (so a refusal is told before any process
    /// of a selection is reset).
    pub(crate) fn check(&self, root: &ProcRoot) -> Result<()> {
        self.open_clear_refs(root).map(drop)
    }

    fn open_clear_refs(&self, root: &ProcRoot) -> Result<File> {
        let flags = OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::NOCTTY;
        let fd = sys::openat(Some(self.dir.as_fd()), c"clear_refs", flags, 0)
            .map_err(|e| self.refused(root, e))?;
        Ok(File::from(fd))
    }

    /// The error for a failed open of, or write to, `clear_refs`.
    fn refused(&self, root: &ProcRoot, e: std::io::Error) -> Error {
        let path = root.pid_file(self.pid, "clear_refs");
        match root.explain(self.pid, path, e) {
            Error::PermissionDenied { pid, path, owner, .. } => {
                Error::ResetDenied { pid, path, owner }
            }
            e => e,
        }
    }
}
