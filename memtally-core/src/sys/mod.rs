//! The one system-call layer: the `*at` calls the writer (`write`) and the
//! reader of recordings (`source::bounded`) are built on, and the few
//! other calls memtally makes, as safe functions over borrowed
//! descriptors. Every name they take is one directory entry relative to a
//! directory memtally holds open, never a path the kernel would walk (and
//! follow links along) again.
//!
//! Most are the `rustix` crate's safe calls, the same on Linux and macOS.
//! Where the two systems differ, the difference is here and nowhere else,
//! behind `cfg(target_os = ...)`:
//!
//! - a symbolic link is held open by `O_PATH | O_NOFOLLOW` on Linux and
//!   read through that very descriptor; macOS has no `O_PATH`: the link is
//!   held by `O_SYMLINK` (which opens a link itself) and read by its name,
//!   then checked to be the held one (see [`read_link`]);
//! - the exclusive renames are `renameat2(2)` with `RENAME_NOREPLACE` /
//!   `RENAME_EXCHANGE` on Linux and `renameatx_np(2)` with `RENAME_EXCL` /
//!   `RENAME_SWAP` on macOS (rustix's `renameat_with`; APFS has both, a
//!   file system without them refuses with `ENOTSUP`, and the write fails
//!   with that error rather than fall back to a rename that could replace
//!   or follow what it should not);
//! - procfs, `openat2(2)` and `close_range(2)` are Linux's: elsewhere the
//!   answers are "not procfs" and `ENOSYS` (the callers have a fallback);
//! - memtally's own descriptors are `/proc/self/fd/N` on Linux and
//!   `/dev/fd/N` on macOS ([`own_descriptor`]);
//! - macOS's processes are read through libproc, and its users through
//!   the system's user database ([`libproc`]).

use std::ffi::{CStr, CString, OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;

use rustix::fs::{AtFlags, FileType, Mode, RawMode, RenameFlags, CWD};

pub(crate) use rustix::fs::OFlags;

pub(crate) mod libproc;
#[cfg(target_os = "linux")]
pub(crate) mod perf;

/// One directory entry's name as the C calls take it.
pub(crate) fn c_name(name: &OsStr) -> io::Result<CString> {
    CString::new(name.as_bytes()).map_err(|_| {
        io::Error::new(io::ErrorKind::InvalidInput, "a file name with a NUL byte in it")
    })
}

fn at(dir: Option<BorrowedFd<'_>>) -> BorrowedFd<'_> {
    dir.unwrap_or(CWD)
}

fn mode(bits: u32) -> Mode {
    // Permission bits only; they fit a mode_t on both systems.
    Mode::from_bits_truncate((bits & 0o7777) as RawMode)
}

/// What `stat` says of a file, the same shape on both systems.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Meta {
    pub dev: u64,
    pub ino: u64,
    pub uid: u32,
    /// The permission bits, with setuid, setgid and sticky (`& 0o7777`).
    pub perm: u32,
    pub kind: Kind,
}

/// What kind of file a [`Meta`] describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    Dir,
    Link,
    /// A device, FIFO or socket.
    Other,
}

impl Meta {
    #[allow(clippy::unnecessary_cast, clippy::useless_conversion)] // widths differ between systems
    fn of(st: rustix::fs::Stat) -> Meta {
        Meta {
            dev: st.st_dev as u64,
            ino: st.st_ino as u64,
            uid: st.st_uid,
            perm: u32::from(Mode::from_raw_mode(st.st_mode).bits()) & 0o7777,
            kind: match FileType::from_raw_mode(st.st_mode) {
                FileType::RegularFile => Kind::File,
                FileType::Directory => Kind::Dir,
                FileType::Symlink => Kind::Link,
                _ => Kind::Other,
            },
        }
    }

    /// Whether both describe one file (device and inode).
    pub(crate) fn same_file(&self, other: &Meta) -> bool {
        (self.dev, self.ino) == (other.dev, other.ino)
    }
}

/// `openat(2)`, always with `O_CLOEXEC`; `None` is the working directory.
pub(crate) fn openat(
    dir: Option<BorrowedFd<'_>>,
    name: &CStr,
    flags: OFlags,
    perm: u32,
) -> io::Result<OwnedFd> {
    Ok(rustix::fs::openat(at(dir), name, flags | OFlags::CLOEXEC, mode(perm))?)
}

/// Opens a directory entry that must be a directory, never through a link.
pub(crate) fn open_dir_at(dir: Option<BorrowedFd<'_>>, name: &CStr) -> io::Result<OwnedFd> {
    openat(dir, name, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW, 0)
}

pub(crate) fn fstat(fd: BorrowedFd<'_>) -> io::Result<Meta> {
    Ok(Meta::of(rustix::fs::fstat(fd)?))
}

/// `fstatat(2)`; `follow: false` describes a link itself.
pub(crate) fn fstatat(dir: BorrowedFd<'_>, name: &CStr, follow: bool) -> io::Result<Meta> {
    let flags = if follow { AtFlags::empty() } else { AtFlags::SYMLINK_NOFOLLOW };
    Ok(Meta::of(rustix::fs::statat(dir, name, flags)?))
}

/// Whether what `fd` is open on is the kernel's procfs (Linux's `statfs`
/// magic; never elsewhere).
pub(crate) fn is_procfs(fd: BorrowedFd<'_>) -> bool {
    #[cfg(target_os = "linux")]
    {
        rustix::fs::fstatfs(fd).is_ok_and(|st| st.f_type == rustix::fs::PROC_SUPER_MAGIC)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = fd;
        false
    }
}

/// Whether `path` is where a procfs is mounted (see [`is_procfs`]).
pub(crate) fn path_is_procfs(path: &Path) -> bool {
    #[cfg(target_os = "linux")]
    {
        rustix::fs::statfs(path).is_ok_and(|st| st.f_type == rustix::fs::PROC_SUPER_MAGIC)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = path;
        false
    }
}

/// Bytes in use on the file system at `path` (blocks − free blocks).
pub(crate) fn used_bytes(path: &Path) -> Option<u64> {
    let s = rustix::fs::statvfs(path).ok()?;
    Some(s.f_blocks.saturating_sub(s.f_bfree).saturating_mul(s.f_frsize))
}

pub(crate) fn mkdirat(dir: BorrowedFd<'_>, name: &CStr, perm: u32) -> io::Result<()> {
    Ok(rustix::fs::mkdirat(dir, name, mode(perm))?)
}

/// A symbolic link held open, so that what is read of it is that link
/// (its inode cannot be reused while it is held).
pub(crate) struct Link {
    /// Held (macOS reads the link by name; see [`read_link`]).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    fd: OwnedFd,
    /// Its directory and name: macOS reads a link by its name.
    #[cfg(not(target_os = "linux"))]
    dir: OwnedFd,
    #[cfg(not(target_os = "linux"))]
    name: CString,
    meta: Meta,
}

impl Link {
    /// The link's own `stat` (its owner).
    pub(crate) fn meta(&self) -> Meta {
        self.meta
    }
}

/// The symbolic link `name` in `dir`, held open; `None` when `name` is no
/// link (any more).
pub(crate) fn open_link(dir: BorrowedFd<'_>, name: &CStr) -> io::Result<Option<Link>> {
    #[cfg(target_os = "linux")]
    let fd = openat(Some(dir), name, OFlags::PATH | OFlags::NOFOLLOW, 0)?;
    #[cfg(not(target_os = "linux"))]
    let fd = {
        // O_SYMLINK opens whatever is there without following it; only a
        // link is opened (a FIFO's open would block, a device's act).
        if fstatat(dir, name, false)?.kind != Kind::Link {
            return Ok(None);
        }
        openat(Some(dir), name, OFlags::RDONLY | OFlags::SYMLINK | OFlags::NONBLOCK, 0)?
    };
    let meta = fstat(fd.as_fd())?;
    if meta.kind != Kind::Link {
        return Ok(None);
    }
    Ok(Some(Link {
        fd,
        #[cfg(not(target_os = "linux"))]
        dir: dir.try_clone_to_owned()?,
        #[cfg(not(target_os = "linux"))]
        name: name.to_owned(),
        meta,
    }))
}

/// What the held link says. Linux reads it through its own descriptor
/// (`readlinkat(fd, "")`), so it cannot be swapped in between. macOS has
/// no such read: the name is read, then checked to still be the held link
/// (device and inode) before and after; a name swapped meanwhile is an
/// `Interrupted` error the walk retries. What is left open on macOS: a link
/// swapped out and back between the two checks (two renames in a window
/// of one readlink, in a directory the attacker may write).
pub(crate) fn read_link(link: &Link) -> io::Result<OsString> {
    #[cfg(target_os = "linux")]
    let target = rustix::fs::readlinkat(link.fd.as_fd(), c"", Vec::new())?;
    #[cfg(not(target_os = "linux"))]
    let target = {
        let same =
            || fstatat(link.dir.as_fd(), &link.name, false).is_ok_and(|m| m.same_file(&link.meta));
        let changed = || io::Error::new(io::ErrorKind::Interrupted, "the link changed");
        if !same() {
            return Err(changed());
        }
        let t = rustix::fs::readlinkat(link.dir.as_fd(), &link.name, Vec::new())?;
        if !same() {
            return Err(changed());
        }
        t
    };
    Ok(OsString::from_vec(target.into_bytes()))
}

/// `readlinkat(2)`: what the link `name` in `dir` says, never followed.
pub(crate) fn readlinkat(dir: BorrowedFd<'_>, name: &CStr) -> io::Result<OsString> {
    let target = rustix::fs::readlinkat(dir, name, Vec::new())?;
    Ok(OsString::from_vec(target.into_bytes()))
}

/// `renameat(2)` between two entries of held directories.
pub(crate) fn renameat(
    from_dir: BorrowedFd<'_>,
    from: &CStr,
    to_dir: BorrowedFd<'_>,
    to: &CStr,
) -> io::Result<()> {
    Ok(rustix::fs::renameat(from_dir, from, to_dir, to)?)
}

/// Renames `from` to `to` in `dir` only when `to` is free (`EEXIST`
/// otherwise): `RENAME_NOREPLACE` (Linux), `RENAME_EXCL` (macOS).
pub(crate) fn rename_noreplace(dir: BorrowedFd<'_>, from: &CStr, to: &CStr) -> io::Result<()> {
    Ok(rustix::fs::renameat_with(dir, from, dir, to, RenameFlags::NOREPLACE)?)
}

/// Swaps the entries `a` and `b` of `dir` in one step, neither ever
/// missing: `RENAME_EXCHANGE` (Linux), `RENAME_SWAP` (macOS).
pub(crate) fn rename_exchange(dir: BorrowedFd<'_>, a: &CStr, b: &CStr) -> io::Result<()> {
    Ok(rustix::fs::renameat_with(dir, a, dir, b, RenameFlags::EXCHANGE)?)
}

/// The path the open file or directory `fd` has now (after a rename or a
/// swapped link, where the path it was opened by leads elsewhere).
#[cfg(target_os = "linux")]
pub(crate) fn path_of(fd: BorrowedFd<'_>) -> io::Result<std::path::PathBuf> {
    use std::os::fd::AsRawFd;
    std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()))
}

/// See the Linux version: `fcntl(F_GETPATH)`.
#[cfg(target_os = "macos")]
pub(crate) fn path_of(fd: BorrowedFd<'_>) -> io::Result<std::path::PathBuf> {
    let c = rustix::fs::getpath(fd)?;
    Ok(OsString::from_vec(c.into_bytes()).into())
}

/// Removes the entry `name` (not a directory) of `dir`.
pub(crate) fn unlinkat(dir: BorrowedFd<'_>, name: &CStr) -> io::Result<()> {
    Ok(rustix::fs::unlinkat(dir, name, AtFlags::empty())?)
}

/// Removes the empty directory `name` of `dir`.
pub(crate) fn rmdirat(dir: BorrowedFd<'_>, name: &CStr) -> io::Result<()> {
    Ok(rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR)?)
}

/// Whether [`unlinkat`] failed because the entry is a directory: `EISDIR`
/// on Linux; macOS (as POSIX allows) says `EPERM`.
pub(crate) fn is_a_directory(e: &io::Error) -> bool {
    let macos = cfg!(target_os = "macos");
    matches!(e.raw_os_error(), Some(libc::EISDIR)) || macos && e.raw_os_error() == Some(libc::EPERM)
}

pub(crate) fn fchmod(fd: BorrowedFd<'_>, perm: u32) -> io::Result<()> {
    Ok(rustix::fs::fchmod(fd, mode(perm))?)
}

/// Makes durable what was written to `fd` (for a directory: the names
/// made or renamed in it).
pub(crate) fn fsync(fd: BorrowedFd<'_>) -> io::Result<()> {
    Ok(rustix::fs::fsync(fd)?)
}

/// The names in the directory open at `dir` (without `.` and `..`).
pub(crate) fn names(dir: BorrowedFd<'_>) -> io::Result<Vec<CString>> {
    let mut out = Vec::new();
    // Reads through a descriptor of its own: `dir` stays as it is.
    for entry in rustix::fs::Dir::read_from(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        if name.to_bytes() != b"." && name.to_bytes() != b".." {
            out.push(name.to_owned());
        }
    }
    Ok(out)
}

/// The effective user id.
pub(crate) fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// The soft limit on open files; `None` when unlimited or unknown.
pub(crate) fn open_files_limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::Nofile).current
}

/// Kills the process group `pgid` (a tool memtally started in a group of
/// its own) with SIGKILL.
pub(crate) fn kill_group(pgid: u32) -> io::Result<()> {
    let pid = i32::try_from(pgid).ok().and_then(rustix::process::Pid::from_raw);
    let pid = pid.ok_or_else(|| io::Error::from_raw_os_error(libc::ESRCH))?;
    Ok(rustix::process::kill_process_group(pid, rustix::process::Signal::KILL)?)
}

/// Clears `O_NONBLOCK` on `fd`: from here a read waits, as a pipe's does.
pub(crate) fn set_blocking(fd: BorrowedFd<'_>) -> io::Result<()> {
    let flags = rustix::fs::fcntl_getfl(fd)?;
    Ok(rustix::fs::fcntl_setfl(fd, flags - OFlags::NONBLOCK)?)
}

/// `openat2(2)` of `rel` beneath `dir` with no symbolic link anywhere
/// (`RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`).
/// `ENOSYS` where there is none (before Linux 5.6, and macOS): the
/// caller walks instead.
pub(crate) fn open_beneath(dir: BorrowedFd<'_>, rel: &CStr, flags: OFlags) -> io::Result<OwnedFd> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::ResolveFlags;
        let resolve =
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        Ok(rustix::fs::openat2(dir, rel, flags | OFlags::CLOEXEC, Mode::empty(), resolve)?)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (dir, rel, flags);
        Err(io::Error::from_raw_os_error(libc::ENOSYS))
    }
}

/// `close_range(2)` of `first..=last` (Linux 5.9; `ENOSYS` elsewhere).
///
/// # Safety
///
/// Every descriptor in the range is the caller's, open, and used by
/// nothing after this.
pub(crate) unsafe fn close_range(first: RawFd, last: RawFd) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: close_range(2) with no flags closes exactly the numbers
        // given, all the caller's (above).
        let rc = unsafe {
            libc::syscall(libc::SYS_close_range, first as libc::c_uint, last as libc::c_uint, 0)
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (first, last);
        Err(io::Error::from_raw_os_error(libc::ENOSYS))
    }
}

/// A copy of memtally's own descriptor that `name` in `at` stands for,
/// when `at` is the system's directory of the process's own descriptors
/// (`/dev/stdout` leads there): the file the shell set up is written
/// through it, keeping its offset and append mode. `None` elsewhere.
#[cfg(target_os = "linux")]
pub(crate) fn own_descriptor(at: BorrowedFd<'_>, name: &CStr) -> Option<OwnedFd> {
    // `/proc/self/fd` itself (the same directory, on procfs): its magic
    // links are never read as paths.
    if !is_procfs(at) {
        return None;
    }
    let own = open_dir_at(None, c"/proc/self/fd").ok()?;
    if !fstat(at).ok()?.same_file(&fstat(own.as_fd()).ok()?) {
        return None;
    }
    let n: RawFd = name.to_str().ok()?.parse().ok().filter(|&n| n >= 0)?;
    // Listed there: the descriptor is open (procfs lists only those).
    let named = fstatat(at, name, true).ok()?;
    // SAFETY: `n` is open (just above) and this process keeps it; it is
    // only borrowed for the fstat and the copy that follow.
    let fd = unsafe { BorrowedFd::borrow_raw(n) };
    fstat(fd).ok()?.same_file(&named).then(|| fd.try_clone_to_owned().ok()).flatten()
}

/// See the Linux version: on macOS `/dev/fd` (fdesc), where opening `N`
/// duplicates descriptor `N` (fd(4)), so the open itself is the copy.
#[cfg(target_os = "macos")]
pub(crate) fn own_descriptor(at: BorrowedFd<'_>, name: &CStr) -> Option<OwnedFd> {
    let own = open_dir_at(None, c"/dev/fd").ok()?;
    if !fstat(at).ok()?.same_file(&fstat(own.as_fd()).ok()?) {
        return None;
    }
    name.to_str().ok()?.parse::<u32>().ok()?;
    openat(Some(at), name, OFlags::WRONLY | OFlags::NOCTTY, 0).ok()
}
