//! A directory where every access waits: a FUSE file system mounted with
//! nobody answering its device, as a mount whose server hung (a FUSE or
//! network file system) looks to a reader. The kernel queues every
//! request below it until the connection is initialised, which never
//! happens, so `open`, `stat` and `read` there block (killably) until the
//! mount goes. Needs root and `/dev/fuse`; `None` (with the reason)
//! otherwise.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

pub struct Stalled {
    dir: PathBuf,
    fd: i32,
}

impl Stalled {
    /// Mounts the silent file system over `dir` (an existing directory,
    /// whose contents it hides).
    pub fn mount(dir: &Path) -> Result<Stalled, String> {
        let fd = unsafe { libc::open(c"/dev/fuse".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(format!("/dev/fuse: {}", std::io::Error::last_os_error()));
        }
        let target = CString::new(dir.as_os_str().as_bytes()).unwrap();
        let opts = CString::new(format!("fd={fd},rootmode=40000,user_id=0,group_id=0")).unwrap();
        let rc = unsafe {
            libc::mount(
                c"memtally-stall".as_ptr(),
                target.as_ptr(),
                c"fuse".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV,
                opts.as_ptr().cast(),
            )
        };
        if rc != 0 {
            let e = std::io::Error::last_os_error();
            unsafe { libc::close(fd) };
            return Err(format!("mount fuse on {}: {e}", dir.display()));
        }
        Ok(Stalled { dir: dir.to_path_buf(), fd })
    }
}

impl Drop for Stalled {
    /// Detaches the mount (the directory is itself again), then closes
    /// the device. Kill whoever waits below it first: a detached mount
    /// keeps the waiters it has.
    fn drop(&mut self) {
        let target = CString::new(self.dir.as_os_str().as_bytes()).unwrap();
        unsafe {
            libc::umount2(target.as_ptr(), libc::MNT_DETACH);
            libc::close(self.fd);
        }
    }
}
