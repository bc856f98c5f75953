//! A directory filled under a random name and then installed under its
//! real one in one rename (`capture`'s `DIR/PID`): a reader sees the old
//! recording or the new one, never half of one, and nothing is ever
//! written through a link planted at the real name or inside it.

use std::ffi::CString;
use std::path::PathBuf;

use super::dir::Dir;
use super::name;
use super::remove::remove_tree;
use super::unfinished::{self, Registered};
use super::Access;
use crate::error::{Error, Result};
use crate::sys;

/// A directory being filled; removed if dropped before [`Staged::install`].
pub struct Staged {
    parent: Dir,
    name: CString,
    dir: Dir,
    installed: bool,
    /// Noted as unfinished until installed (see [`super::unfinished`]).
    unfinished: Registered,
}

impl Staged {
    /// Makes a new private (0700) directory `.memtally-capture-XXXX` in
    /// `parent`, to be installed as `parent/NAME`; `shown` is the path
    /// it will have, by which its files are named in errors and reports.
    pub fn new(parent: &Dir, shown: PathBuf) -> Result<Staged> {
        let err = |e| Error::io(&shown, e);
        let ((), name) =
            name::create_unique(".memtally-capture-", "", |c| sys::mkdirat(parent.fd(), c, 0o700))
                .map_err(err)?;
        let parent = parent.try_clone()?;
        let fd = match sys::open_dir_at(Some(parent.fd()), &name) {
            Ok(fd) => fd,
            Err(e) => {
                let _ = remove_tree(parent.fd(), &name);
                return Err(err(e));
            }
        };
        let unfinished = unfinished::register(parent.fd(), &name);
        Ok(Staged { parent, name, dir: Dir::new(fd, shown), installed: false, unfinished })
    }

    /// The directory to fill.
    pub fn dir(&self) -> &Dir {
        &self.dir
    }

    /// Gives the directory the mode 0755 (0700 when `access` is
    /// [`Access::Private`]) and the name `name` in its
    /// parent: renamed only if the name is free (`RENAME_NOREPLACE` on
    /// Linux, `RENAME_EXCL` on macOS), else swapped with what is there in
    /// one step (`RENAME_EXCHANGE`, `RENAME_SWAP`: the name is never
    /// missing), after which what was there (an earlier recording, a
    /// link, a file) is at the random name and removed without following
    /// its links.
    pub fn install(mut self, name: &str, access: Access) -> Result<()> {
        let shown = self.dir.path().to_path_buf();
        let err = |e| Error::io(&shown, e);
        let to = sys::c_name(name.as_ref()).map_err(err)?;
        let mode = match access {
            Access::Umask => 0o755,
            Access::Private => 0o700,
        };
        sys::fchmod(self.dir.fd(), mode).map_err(err)?;
        let p = self.parent.fd();
        let rename = || match sys::rename_noreplace(p, &self.name, &to) {
            Ok(()) => Ok(false),
            Err(e) if e.raw_os_error() == Some(libc::EEXIST) => {
                sys::rename_exchange(p, &self.name, &to).map(|()| true)
            }
            Err(e) => Err(e),
        };
        let exchanged = self.unfinished.install(rename).map_err(err)?;
        self.installed = true;
        if exchanged {
            // What was there is at the random name now.
            remove_tree(p, &self.name).map_err(err)?;
        }
        self.parent.sync();
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.installed {
            let _ = remove_tree(self.parent.fd(), &self.name);
        }
    }
}
