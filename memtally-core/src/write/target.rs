//! What a name memtally is to write names, deciding between writing
//! through it and replacing it:
//!
//! - a device, FIFO or socket is written through (`/dev/null`);
//! - one of memtally's own open descriptors, named in procfs on Linux or
//!   in `/dev/fd` on macOS (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`
//!   and links to them; `sys::own_descriptor`),
//!   is written through a copy of that descriptor, so the file the shell
//!   opened keeps its offset and its append mode (`>` and `>>` both work)
//!   and the link stays as it is;
//! - anything else (a regular file, nothing, a link of another user's, a
//!   link to a regular file) is replaced.
//!
//! A link is followed only as [`super::walk`] follows one.

use std::ffi::{CStr, OsStr};
use std::fs::File;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

use super::dir::Dir;
use super::walk::{open_link, Reached, Walk};
use crate::error::{Error, Result};
use crate::sys::{self, Kind, OFlags};

/// What a name leads to.
pub(crate) enum Target {
    /// Written through, never replaced.
    Through(File),
    /// Replaced by a new file; `keep` is the mode of the regular file it
    /// replaces, where that mode is kept.
    Replace { keep: Option<u32> },
}

/// What `name` in `dir` leads to; `shown` is how errors name it.
pub(crate) fn target(dir: &Dir, name: &OsStr, shown: &Path) -> Result<Target> {
    let mut walk = Walk::default();
    let c = sys::c_name(name).map_err(|e| Error::io(shown, e))?;
    let at = Reached {
        fd: dir.fd().try_clone_to_owned().map_err(|e| Error::io(shown, e))?,
        path: dir.path().to_path_buf(),
    };
    match land(&mut walk, &at, &c, shown)? {
        Landing::Through(f) => Ok(Target::Through(f)),
        Landing::Directory => Err(is_a_directory(shown)),
        Landing::Regular { uid, perm } => Ok(Target::Replace { keep: kept_mode(uid, perm) }),
        Landing::Nothing | Landing::Link => Ok(Target::Replace { keep: None }),
    }
}

/// A replaced file's mode is kept only when it is memtally's own user's
/// file (a mode another user chose, world-writable perhaps, is not given
/// to memtally's file), and only its permission bits: never setuid,
/// setgid or sticky.
fn kept_mode(uid: u32, perm: u32) -> Option<u32> {
    (uid == crate::sys::euid()).then_some(perm & 0o777)
}

pub(crate) fn is_a_directory(shown: &Path) -> Error {
    Error::Usage(format!("{}: is a directory, not a file", shown.display()))
}

enum Landing {
    Through(File),
    Directory,
    Regular {
        uid: u32,
        perm: u32,
    },
    Nothing,
    /// A link (trusted) to something to replace.
    Link,
}

fn land(walk: &mut Walk, at: &Reached, name: &CStr, shown: &Path) -> Result<Landing> {
    let err = |e| Error::io(shown, e);
    if let Some(fd) = sys::own_descriptor(at.fd.as_fd(), name) {
        return through_copy(fd, shown);
    }
    let st = match sys::fstatat(at.fd.as_fd(), name, false) {
        Ok(st) => st,
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(Landing::Nothing),
        Err(e) => return Err(err(e)),
    };
    match st.kind {
        Kind::Dir => Ok(Landing::Directory),
        Kind::File => Ok(Landing::Regular { uid: st.uid, perm: st.perm }),
        Kind::Link => {
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
        Kind::Other => {
            let f = sys::openat(
                Some(at.fd.as_fd()),
                name,
                OFlags::WRONLY | OFlags::NOCTTY | OFlags::NOFOLLOW,
                0,
            )
            .map_err(err)?;
            let f = File::from(f);
            let kind = sys::fstat(f.as_fd()).map_err(err)?.kind;
            if matches!(kind, Kind::File | Kind::Dir) {
                return Err(Error::Usage(format!(
                    "{}: changed while being opened; not written",
                    shown.display()
                )));
            }
            Ok(Landing::Through(f))
        }
    }
}

/// A copy of one of memtally's own descriptors (`/dev/stdout`): written
/// through, unless it is a directory.
fn through_copy(copy: OwnedFd, shown: &Path) -> Result<Landing> {
    if sys::fstat(copy.as_fd()).map_err(|e| Error::io(shown, e))?.kind == Kind::Dir {
        return Ok(Landing::Directory);
    }
    Ok(Landing::Through(File::from(copy)))
}
