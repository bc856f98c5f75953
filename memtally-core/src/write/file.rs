//! A file being written: a new file under a random name in the target's
//! directory (held open), renamed over the target at commit, removed if
//! dropped before; and [`Dir`]'s way to write one.

use std::ffi::{CString, OsStr};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use super::dir::Dir;
use super::name;
use super::target::{is_a_directory, target, Target};
use super::unfinished::{self, Registered};
use super::walk::{split, Missing};
use super::Access;
use crate::error::{Error, Result};
use crate::sys::{self, OFlags};

/// A file being written: it takes the target's name only at
/// [`commit`](NewFile::commit); dropped before that, it is removed.
pub struct NewFile {
    path: PathBuf,
    kind: Kind,
}

enum Kind {
    /// A new file beside the target, renamed over it at commit.
    Temp { file: BufWriter<File>, temp: Temp, target: CString },
    /// A device, pipe, socket or open descriptor, written as it is.
    Through(BufWriter<File>),
}

/// The new file's name in its directory; unlinked on drop unless renamed.
struct Temp {
    dir: Dir,
    name: CString,
    renamed: bool,
    /// Noted as unfinished until renamed (see [`super::unfinished`]).
    unfinished: Registered,
}

impl Drop for Temp {
    fn drop(&mut self) {
        if !self.renamed {
            let _ = sys::unlinkat(self.dir.fd(), &self.name);
        }
    }
}

impl Dir {
    /// Writes `bytes` to the file `name` in this directory (see [`NewFile`]).
    pub fn write_file(&self, name: &OsStr, bytes: &[u8]) -> Result<()> {
        let shown = self.path().join(name);
        let mut f = NewFile::create_in(self, name, &shown, Access::Umask)?;
        f.write_all(bytes).map_err(|e| Error::io(shown, e))?;
        f.commit()
    }
}

impl NewFile {
    /// Starts writing `path` (see [`crate::write`]).
    pub fn create(path: &Path) -> Result<NewFile> {
        NewFile::create_as(path, Access::Umask)
    }

    /// [`NewFile::create`], readable as `access` says (a private file is
    /// 0600 from its creation: no one else ever opens it).
    pub fn create_as(path: &Path, access: Access) -> Result<NewFile> {
        let Some((parent, name)) = split(path) else { return Err(is_a_directory(path)) };
        let dir = Dir::walk(parent, Missing::Fail)?;
        NewFile::create_in(&dir, name, path, access)
    }

    /// Starts writing `name` in `dir`; errors name `shown`.
    pub(crate) fn create_in(
        dir: &Dir,
        name: &OsStr,
        shown: &Path,
        access: Access,
    ) -> Result<NewFile> {
        let err = |e| Error::io(shown, e);
        let keep = match target(dir, name, shown)? {
            Target::Through(f) => {
                return Ok(NewFile {
                    path: shown.to_path_buf(),
                    kind: Kind::Through(BufWriter::new(f)),
                })
            }
            Target::Replace { keep } => keep,
        };
        // Only here is a file made in `dir`: only here must its owner be
        // trusted (a device in another user's directory is written as it is).
        dir.check()?;
        let target = sys::c_name(name).map_err(err)?;
        // A new file gets 0666 less the umask, as any program's new file
        // does; one that replaces a file of memtally's user gets its
        // permission bits, set on the open file before it has a name
        // anyone else could open.
        let keep = match access {
            Access::Umask => keep,
            // Never more than its owner's bits (and at most 0600 new).
            Access::Private => Some(keep.map_or(0o600, |m| m & 0o700)),
        };
        let create_mode = if keep.is_some() { 0o600 } else { 0o666 };
        let (fd, temp) = name::create_unique(".memtally-", ".tmp", |c| {
            sys::openat(
                Some(dir.fd()),
                c,
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW,
                create_mode,
            )
        })
        .map_err(err)?;
        let unfinished = unfinished::register(dir.fd(), &temp);
        let temp = Temp { dir: dir.try_clone()?, name: temp, renamed: false, unfinished };
        if let Some(mode) = keep {
            sys::fchmod(fd.as_fd(), mode).map_err(err)?;
        }
        let file = BufWriter::new(File::from(fd));
        Ok(NewFile { path: shown.to_path_buf(), kind: Kind::Temp { file, temp, target } })
    }

    /// Finishes: synced and renamed over the target (a device is flushed).
    pub fn commit(self) -> Result<()> {
        let path = self.path;
        let err = |e| Error::io(&path, e);
        match self.kind {
            Kind::Through(mut w) => w.flush().map_err(err),
            Kind::Temp { file, mut temp, target } => {
                // On failure `temp` is dropped, which removes the file.
                let file = file.into_inner().map_err(|e| err(e.into_error()))?;
                file.sync_all().map_err(err)?;
                let d = temp.dir.fd();
                let rename = || sys::renameat(d, &temp.name, d, &target);
                temp.unfinished.install(rename).map_err(err)?;
                temp.renamed = true;
                // The rename itself is durable once the directory is synced.
                temp.dir.sync();
                Ok(())
            }
        }
    }
}

impl Write for NewFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match &mut self.kind {
            Kind::Temp { file, .. } => file.write(buf),
            Kind::Through(w) => w.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.kind {
            Kind::Temp { file, .. } => file.flush(),
            Kind::Through(w) => w.flush(),
        }
    }
}
