//! What a name memtally is to write names, deciding between writing
//! through it and replacing it:
//!
//! - a device, FIFO or socket is written through (`/dev/null`);
//! - one of memtally's own open descriptors, named in procfs
//!   (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N` and links to them),
//!   is written through a copy of that descriptor, so the file the shell
//!   opened keeps its offset and its append mode (`>` and `>>` both work)
//!   and the link stays as it is;
//! - anything else (a regular file, nothing, a link of another user's, a
//!   link to a regular file) is replaced.
//!
//! A link is followed only as [`super::walk`] follows one.

use std::ffi::{CStr, OsStr};
use std::fs::File;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::path::Path;

use super::dir::Dir;
use super::walk::{open_link, Reached, Walk};
use crate::error::{Error, Result};
use crate::sys;

/// What a name leads to.
pub(crate) enum Target {
    /// Written through, never replaced.
    Through(File),
    /// Replaced by a new file; `keep` is the mode of the regular file it
    /// replaces, where that mode is kept.
    Replace { keep: Option<libc::mode_t> },
}

/// What `name` in `dir` leads to; `shown` is how errors name it.
pub(crate) fn target(dir: &Dir, name: &OsStr, shown: &Path) -> Result<Target> {
    let mut walk = Walk::new();
    let c = sys::c_name(name).map_err(|e| Error::io(shown, e))?;
    let at = Reached {
        fd: dir.fd().try_clone_to_owned().map_err(|e| Error::io(shown, e))?,
        path: dir.path().to_path_buf(),
    };
    match land(&mut walk, &at, &c, shown)? {
        Landing::Through(f) => Ok(Target::Through(f)),
        Landing::Directory => Err(is_a_directory(shown)),
        Landing::Regular { uid, mode } => Ok(Target::Replace { keep: kept_mode(uid, mode) }),
        Landing::Nothing | Landing::Link => Ok(Target::Replace { keep: None }),
    }
}

/// A replaced file's mode is kept only when it is memtally's own user's
/// file (a mode another user chose, world-writable perhaps, is not given
/// to memtally's file), and only its permission bits: never setuid,
/// setgid or sticky.
fn kept_mode(uid: libc::uid_t, mode: libc::mode_t) -> Option<libc::mode_t> {
    (uid == super::walk::euid()).then_some(mode & 0o777)
}

pub(crate) fn is_a_directory(shown: &Path) -> Error {
    Error::Usage(format!("{}: is a directory, not a file", shown.display()))
}

enum Landing {
    Through(File),
    Directory,
    Regular {
        uid: libc::uid_t,
        mode: libc::mode_t,
    },
    Nothing,
    /// A link (trusted) to something to replace.
    Link,
}

fn land(walk: &mut Walk, at: &Reached, name: &CStr, shown: &Path) -> Result<Landing> {
    let err = |e| Error::io(shown, e);
    if let Some(fd) = own_descriptor(at, name) {
        return through_copy(fd, shown);
    }
    let st = match sys::fstatat(at.fd.as_fd(), name, false) {
        Ok(st) => st,
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(Landing::Nothing),
        Err(e) => return Err(err(e)),
    };
    match st.st_mode & libc::S_IFMT {
        libc::S_IFDIR => Ok(Landing::Directory),
        libc::S_IFREG => Ok(Landing::Regular { uid: st.st_uid, mode: st.st_mode }),
        libc::S_IFLNK => {
            // Another user's link is replaced, never followed (as today's
            // kernels do in sticky directories).
            let link = match open_link(at, name, shown) {
                Ok(Some(link)) => link,
                Ok(None) => return Ok(Landing::Nothing),
                Err(Error::Io { source, .. })
                    if source.kind() == std::io::ErrorKind::PermissionDenied =>
                {
                    return Ok(Landing::Link)
                }
                Err(e) => return Err(e),
            };
            let (dir, last) = match walk.link_target(at, &link, shown) {
                Ok(t) => t,
                // A dangling link is replaced, as a missing file is made.
                Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                    return Ok(Landing::Link)
                }
                Err(e) => return Err(e),
            };
            let Some(last) = last else { return Ok(Landing::Directory) };
            let c = sys::c_name(&last).map_err(err)?;
            Ok(match land(walk, &dir, &c, &dir.path.join(&last))? {
                Landing::Regular { .. } | Landing::Nothing => Landing::Link,
                other => other,
            })
        }
        _ => {
            let f = sys::openat(
                Some(at.fd.as_fd()),
                name,
                libc::O_WRONLY | libc::O_NOCTTY | libc::O_NOFOLLOW,
                0,
            )
            .map_err(err)?;
            let f = File::from(f);
            let t = sys::fstat(f.as_fd()).map_err(err)?.st_mode & libc::S_IFMT;
            if t == libc::S_IFREG || t == libc::S_IFDIR {
                return Err(Error::Usage(format!(
                    "{}: changed while being opened; not written",
                    shown.display()
                )));
            }
            Ok(Landing::Through(f))
        }
    }
}

/// The descriptor `name` stands for when `at` is memtally's own
/// `/proc/self/fd` (the same directory, on procfs) and the entry is the
/// same file as memtally's descriptor of that number: its magic links are
/// never read as paths.
fn own_descriptor(at: &Reached, name: &CStr) -> Option<BorrowedFd<'static>> {
    if sys::fs_type(at.fd.as_fd()).ok()? != sys::PROC_SUPER_MAGIC {
        return None;
    }
    let own = sys::open_dir_at(None, c"/proc/self/fd").ok()?;
    let (a, b) = (sys::fstat(at.fd.as_fd()).ok()?, sys::fstat(own.as_fd()).ok()?);
    if (a.st_dev, a.st_ino) != (b.st_dev, b.st_ino) {
        return None;
    }
    let n: libc::c_int = name.to_str().ok()?.parse().ok()?;
    // SAFETY: fcntl(F_GETFD) only asks whether `n` is open.
    if n < 0 || unsafe { libc::fcntl(n, libc::F_GETFD) } < 0 {
        return None;
    }
    // SAFETY: `n` is open (checked just above); it is only borrowed for
    // the fstat and the copy that follow, while this process keeps it.
    let fd = unsafe { BorrowedFd::borrow_raw(n) };
    let mine = sys::fstat(fd).ok()?;
    let named = sys::fstatat(at.fd.as_fd(), name, true).ok()?;
    (mine.st_dev == named.st_dev && mine.st_ino == named.st_ino).then_some(fd)
}

fn through_copy(fd: BorrowedFd<'_>, shown: &Path) -> Result<Landing> {
    let st = sys::fstat(fd).map_err(|e| Error::io(shown, e))?;
    if st.st_mode & libc::S_IFMT == libc::S_IFDIR {
        return Ok(Landing::Directory);
    }
    let copy = fd.try_clone_to_owned().map_err(|e| Error::io(shown, e))?;
    debug_assert_ne!(copy.as_raw_fd(), fd.as_raw_fd());
    Ok(Landing::Through(File::from(copy)))
}
