//! A directory memtally writes into, held open: every file made in it and
//! every directory made beneath it is made relative to its descriptor, so
//! whatever happens to the path it was opened by meanwhile (a component
//! swapped for a link) changes nothing about where the writes go.

use std::ffi::OsStr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

use super::walk::{refused, trusted, Missing, Reached, Walk};
use crate::error::{Error, Result};
use crate::sys;

/// A directory held open (see the module docs).
pub struct Dir {
    fd: OwnedFd,
    /// The path it is shown by in messages and reports.
    path: PathBuf,
}

impl Dir {
    /// Opens the existing directory `path` to write into (links of root
    /// and of memtally's user followed, no other), refused when another
    /// user could replace what is written there (see [`Dir::check`]).
    pub fn open(path: &Path) -> Result<Dir> {
        let dir = Dir::walk(path, Missing::Fail)?;
        dir.check()?;
        Ok(dir)
    }

    /// As [`Dir::open`], making the directory and its missing parents
    /// (`mkdir -p`), each beneath the one before, never by path.
    pub fn create(path: &Path) -> Result<Dir> {
        let dir = Dir::walk(path, Missing::Create)?;
        dir.check()?;
        Ok(dir)
    }

    /// The directory `path` names, not checked.
    pub(crate) fn walk(path: &Path, missing: Missing) -> Result<Dir> {
        let Reached { fd, .. } = Walk::default().open(path, missing)?;
        Ok(Dir { fd, path: path.to_path_buf() })
    }

    pub(crate) fn new(fd: OwnedFd, path: PathBuf) -> Dir {
        Dir { fd, path }
    }

    /// The path it is shown by.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path that leads to this very directory: the one it is shown
    /// by while that still does, else where it is now (its path was
    /// swapped for another directory or link meanwhile: what was written
    /// is there, not behind the path given).
    pub(crate) fn written_path(&self) -> PathBuf {
        let same = match (std::fs::metadata(&self.path), sys::fstat(self.fd())) {
            (Ok(m), Ok(st)) => {
                use std::os::unix::fs::MetadataExt;
                (m.dev(), m.ino()) == (st.dev, st.ino)
            }
            _ => false,
        };
        match same {
            true => self.path.clone(),
            false => sys::path_of(self.fd()).unwrap_or_else(|_| self.path.clone()),
        }
    }

    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    pub(crate) fn try_clone(&self) -> Result<Dir> {
        let fd = self.fd.try_clone().map_err(|e| Error::io(&self.path, e))?;
        Ok(Dir { fd, path: self.path.clone() })
    }

    /// Refuses a directory another user could replace memtally's files in
    /// (or swap the names of its directories in): one owned by a user
    /// other than root and memtally's own, or writable by its group or by
    /// everyone without the sticky bit (`/tmp` has it, and is fine).
    pub fn check(&self) -> Result<()> {
        let st = sys::fstat(self.fd()).map_err(|e| Error::io(&self.path, e))?;
        if !trusted(st.uid) {
            return Err(refused(
                &self.path,
                &format!(
                    "not written: the directory belongs to uid {}, who could replace what memtally writes there (memtally runs as uid {}); write into a directory of root's or your own",
                    st.uid,
                    sys::euid()
                ),
            ));
        }
        let writable = st.perm & 0o022;
        if writable != 0 && st.perm & 0o1000 == 0 {
            let who = if writable & 0o002 != 0 { "everyone" } else { "its group" };
            return Err(refused(
                &self.path,
                &format!(
                    "not written: the directory is writable by {who} (mode {:o}) without the sticky bit, so others could replace what memtally writes there; chmod go-w or +t it, or write elsewhere",
                    st.perm
                ),
            ));
        }
        Ok(())
    }

    /// The directory `rel` beneath this one, made where missing, each
    /// component beneath the last: never through a link (an error names
    /// it), never above this one (`..` and `/` are refused), each one
    /// checked as [`Dir::check`] does.
    pub fn beneath(&self, rel: &Path) -> Result<Dir> {
        let mut at = self.try_clone()?;
        for c in rel.components() {
            let name = match c {
                Component::Normal(n) => n,
                Component::CurDir => continue,
                _ => {
                    return Err(Error::Usage(format!(
                        "{}: leaves the directory {}; not written",
                        self.path.join(rel).display(),
                        self.path.display()
                    )))
                }
            };
            at = at.child(name)?;
        }
        Ok(at)
    }

    /// The directory `name` in this one, made if missing, never a link.
    fn child(&self, name: &OsStr) -> Result<Dir> {
        let shown = self.path.join(name);
        let c = sys::c_name(name).map_err(|e| Error::io(&shown, e))?;
        match sys::mkdirat(self.fd(), &c, 0o777) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::EEXIST) => {}
            Err(e) => return Err(Error::io(&shown, e)),
        }
        let fd = match sys::open_dir_at(Some(self.fd()), &c) {
            Ok(fd) => fd,
            // O_DIRECTORY | O_NOFOLLOW on a link: ENOTDIR (or ELOOP).
            Err(e)
                if matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR))
                    && sys::fstatat(self.fd(), &c, false)
                        .is_ok_and(|st| st.kind == sys::Kind::Link) =>
            {
                return Err(refused(
                    &shown,
                    "a symbolic link where memtally writes a directory, not followed; remove it, or write into a new directory",
                ))
            }
            Err(e) => return Err(Error::io(&shown, e)),
        };
        let dir = Dir { fd, path: shown };
        dir.check()?;
        Ok(dir)
    }

    /// Removes the file `name` in this directory, never following a link
    /// (a link there is removed itself); one already gone is no error.
    pub fn remove_file(&self, name: &OsStr) -> Result<()> {
        let shown = self.path.join(name);
        let c = sys::c_name(name).map_err(|e| Error::io(&shown, e))?;
        match sys::unlinkat(self.fd(), &c) {
            Err(e) if e.raw_os_error() != Some(libc::ENOENT) => Err(Error::io(&shown, e)),
            _ => Ok(()),
        }
    }

    /// Removes this directory when it is empty and still the one its path
    /// names (its parent opened as [`Dir::open`] walks, the entry compared
    /// by device and inode): for a command that made it and then wrote
    /// nothing into it. Whether it was removed.
    pub(crate) fn remove_if_empty(self) -> bool {
        let Some((parent, name)) = super::walk::split(&self.path) else { return false };
        let (Ok(parent), Ok(c)) = (Dir::walk(parent, Missing::Fail), sys::c_name(name)) else {
            return false;
        };
        let same = match (sys::fstat(self.fd()), sys::fstatat(parent.fd(), &c, false)) {
            (Ok(a), Ok(b)) => a.same_file(&b),
            _ => false,
        };
        same && sys::rmdirat(parent.fd(), &c).is_ok()
    }

    /// Makes durable the names made or renamed in it.
    pub(crate) fn sync(&self) {
        let _ = sys::fsync(self.fd());
    }
}
