//! Removing a tree memtally swapped out (an earlier recording) or gave
//! up on (a staging directory), by descriptors: each directory opened
//! `O_NOFOLLOW` beneath the last, each entry unlinked relative to it, so a
//! link met on the way is removed itself, never followed.

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};

use crate::sys;

/// Directories deeper than this are left (a recording is two deep): an
/// error, rather than a descriptor held open per level without end.
const MAX_DEPTH: u32 = 32;

/// Removes `name` in `dir`, whatever it is, and all beneath it.
pub(crate) fn remove_tree(dir: BorrowedFd<'_>, name: &CStr) -> io::Result<()> {
    remove(dir, name, 0)
}

fn remove(dir: BorrowedFd<'_>, name: &CStr, depth: u32) -> io::Result<()> {
    // A name that changes between the calls (a directory swapped for a
    // link) is tried again a few times.
    for _ in 0..8 {
        match sys::unlinkat(dir, name) {
            Ok(()) => return Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(()),
            Err(e) if sys::is_a_directory(&e) => {}
            Err(e) => return Err(e),
        }
        if depth >= MAX_DEPTH {
            return Err(io::Error::other(format!(
                "directories nested more than {MAX_DEPTH} deep; not removed"
            )));
        }
        let sub = match sys::open_dir_at(Some(dir), name) {
            Ok(sub) => sub,
            // No longer a directory: unlinked as a file on the next turn.
            Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR)) => continue,
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(()),
            Err(e) => return Err(e),
        };
        for entry in sys::names(sub.as_fd())? {
            remove(sub.as_fd(), &entry, depth + 1)?;
        }
        match sys::rmdirat(dir, name) {
            Ok(()) => return Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(()),
            // Swapped for a link or file, or filled again: another turn.
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOTDIR | libc::ENOTEMPTY)) => {}
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other("kept changing while being removed"))
}
