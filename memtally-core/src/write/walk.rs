//! Walking a path to a directory one component at a time, each one opened
//! relative to the last with `O_DIRECTORY | O_NOFOLLOW`: the kernel never
//! follows a link on memtally's behalf. A symbolic link is followed only
//! when root or memtally's own user owns it (the rule of
//! `fs.protected_symlinks`, applied everywhere): another user's link is
//! refused, as are more than [`MAX_LINKS`] links in one walk.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

use crate::error::{Error, Result};
use crate::sys;

/// Links followed in one walk at most (the kernel's own limit).
pub(crate) const MAX_LINKS: u32 = 40;

/// What to do with a missing directory.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Missing {
    /// An error.
    Fail,
    /// Made (`mkdir -p`), beneath the directory held, never by path.
    Create,
}

/// One step of a walk.
enum Step {
    Root,
    Up,
    Name(OsString),
}

/// A directory reached: its descriptor, and the path it was reached by
/// (every link resolved), for messages.
pub(crate) struct Reached {
    pub fd: OwnedFd,
    pub path: PathBuf,
}

/// The state of one walk, shared by the walks a link's target needs.
#[derive(Default)]
pub(crate) struct Walk {
    /// Links followed so far.
    pub links: u32,
}

impl Walk {
    /// Opens the directory `path` names, from `/` or the working
    /// directory.
    pub(crate) fn open(&mut self, path: &Path, missing: Missing) -> Result<Reached> {
        let start = if path.is_absolute() { Path::new("/") } else { Path::new(".") };
        let c = sys::c_name(start.as_os_str()).map_err(|e| Error::io(path, e))?;
        let fd = sys::open_dir_at(None, &c).map_err(|e| Error::io(start, e))?;
        let from = Reached { fd, path: if path.is_absolute() { "/".into() } else { "".into() } };
        self.from(from, steps(path), missing)
    }

    /// Follows the link `link_path` (a link of root's or memtally's user,
    /// open at `link`) from the directory it is in, to the directory its
    /// target's parent names: that directory and the target's last name
    /// (`None` when the target names a directory itself, as `..` does).
    pub(crate) fn link_target(
        &mut self,
        dir: &Reached,
        link: &sys::Link,
        link_path: &Path,
    ) -> Result<(Reached, Option<OsString>)> {
        self.count(link_path)?;
        let target = PathBuf::from(sys::read_link(link).map_err(|e| Error::io(link_path, e))?);
        let mut steps = steps(&target);
        let last = match steps.back() {
            Some(Step::Name(n)) if !target.as_os_str().as_encoded_bytes().ends_with(b"/") => {
                Some(n.clone())
            }
            _ => None,
        };
        if last.is_some() {
            steps.pop_back();
        }
        let fd = dir.fd.try_clone().map_err(|e| Error::io(&dir.path, e))?;
        let from = Reached { fd, path: dir.path.clone() };
        Ok((self.from(from, steps, Missing::Fail)?, last))
    }

    fn count(&mut self, at: &Path) -> Result<()> {
        self.links += 1;
        if self.links > MAX_LINKS {
            return Err(Error::io(at, io::Error::from_raw_os_error(libc::ELOOP)));
        }
        Ok(())
    }

    fn from(
        &mut self,
        mut at: Reached,
        mut todo: VecDeque<Step>,
        missing: Missing,
    ) -> Result<Reached> {
        // Each retry is a race lost (a name that changed between two
        // calls); a bounded number of them, then the error stands.
        let mut retries = 0;
        while let Some(step) = todo.pop_front() {
            match step {
                Step::Root => {
                    let fd = sys::open_dir_at(None, c"/").map_err(|e| Error::io("/", e))?;
                    at = Reached { fd, path: "/".into() };
                }
                Step::Up => {
                    let fd = sys::open_dir_at(Some(at.fd.as_fd()), c"..")
                        .map_err(|e| Error::io(at.path.join(".."), e))?;
                    let path = match at.path.file_name() {
                        Some(_) => at.path.parent().unwrap_or(Path::new("")).to_path_buf(),
                        None if at.path == Path::new("/") => at.path.clone(),
                        None => at.path.join(".."),
                    };
                    at = Reached { fd, path };
                }
                Step::Name(name) => {
                    let shown = at.path.join(&name);
                    let c = sys::c_name(&name).map_err(|e| Error::io(&shown, e))?;
                    match sys::open_dir_at(Some(at.fd.as_fd()), &c) {
                        Ok(fd) => at = Reached { fd, path: shown },
                        Err(e)
                            if e.raw_os_error() == Some(libc::ENOENT)
                                && missing == Missing::Create =>
                        {
                            match sys::mkdirat(at.fd.as_fd(), &c, 0o777) {
                                Ok(()) => {}
                                // Made meanwhile by someone else: opened (and checked) as any.
                                Err(e) if e.raw_os_error() == Some(libc::EEXIST) => {}
                                Err(e) => return Err(Error::io(&shown, e)),
                            }
                            retry(&mut retries, &shown, e)?;
                            todo.push_front(Step::Name(name));
                        }
                        Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR)) => {
                            let Some(link) = open_link(&at, &c, &shown)? else {
                                // Not a link: not a directory either (an
                                // error), or it changed meanwhile.
                                if e.raw_os_error() == Some(libc::ENOTDIR) {
                                    return Err(Error::io(&shown, e));
                                }
                                retry(&mut retries, &shown, e)?;
                                todo.push_front(Step::Name(name));
                                continue;
                            };
                            self.count(&shown)?;
                            let target = match sys::read_link(&link) {
                                Ok(t) => PathBuf::from(t),
                                // Swapped while read (macOS): another turn.
                                Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                                    self.links -= 1;
                                    retry(&mut retries, &shown, e)?;
                                    todo.push_front(Step::Name(name));
                                    continue;
                                }
                                Err(e) => return Err(Error::io(&shown, e)),
                            };
                            for s in steps(&target).into_iter().rev() {
                                todo.push_front(s);
                            }
                        }
                        Err(e) => return Err(Error::io(&shown, e)),
                    }
                }
            }
        }
        Ok(at)
    }
}

fn retry(retries: &mut u32, shown: &Path, e: io::Error) -> Result<()> {
    *retries += 1;
    if *retries > 8 {
        return Err(Error::io(shown, e));
    }
    Ok(())
}

/// The link `name` in `at`, held open (`sys::open_link`) once checked
/// that root or memtally's user owns it; `None` when `name` is no link.
pub(crate) fn open_link(
    at: &Reached,
    name: &std::ffi::CStr,
    shown: &Path,
) -> Result<Option<sys::Link>> {
    let Some(link) = sys::open_link(at.fd.as_fd(), name).map_err(|e| Error::io(shown, e))? else {
        return Ok(None);
    };
    let st = link.meta();
    if !trusted(st.uid) {
        return Err(refused(
            shown,
            &format!(
                "a symbolic link owned by uid {}, not followed (memtally follows only links of root or of its own user, uid {}); name the directory it points to, if you trust it",
                st.uid,
                sys::euid()
            ),
        ));
    }
    Ok(Some(link))
}

/// Root and memtally's own user: the owners whose links, and whose
/// directories, memtally trusts.
pub(crate) fn trusted(uid: u32) -> bool {
    uid == 0 || uid == sys::euid()
}

/// A refusal on `path`: exit 4 (permission), with the reason.
pub(crate) fn refused(path: &Path, why: &str) -> Error {
    Error::io(path, io::Error::new(io::ErrorKind::PermissionDenied, why.to_string()))
}

fn steps(path: &Path) -> VecDeque<Step> {
    path.components()
        .filter_map(|c| match c {
            Component::RootDir => Some(Step::Root),
            Component::ParentDir => Some(Step::Up),
            Component::Normal(n) => Some(Step::Name(n.to_os_string())),
            Component::CurDir | Component::Prefix(_) => None,
        })
        .collect()
}

/// `path` split into the directory it is in and its last name; `None`
/// when it names no file (`/`, `..`, `dir/`).
pub(crate) fn split(path: &Path) -> Option<(&Path, &OsStr)> {
    let bytes = path.as_os_str().as_encoded_bytes();
    if bytes.ends_with(b"/") || bytes.ends_with(b"/.") || bytes == b"." {
        return None;
    }
    match path.components().next_back()? {
        Component::Normal(name) => {
            let parent = path.parent().unwrap_or(Path::new(""));
            Some((parent, name))
        }
        _ => None,
    }
}
