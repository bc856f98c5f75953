//! The `*at` system calls the writer (`write`) and the reader of
//! recordings (`source::bounded`) are built on, as safe functions over
//! borrowed descriptors: every name they take is one directory entry
//! relative to a directory memtally holds open, never a path the kernel
//! would walk (and follow links along) again.

use std::ffi::{CStr, CString, OsStr, OsString};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};

/// `statfs.f_type` of procfs (`linux/magic.h`).
pub(crate) const PROC_SUPER_MAGIC: i64 = 0x9fa0;

/// One directory entry's name as the C calls take it.
pub(crate) fn c_name(name: &OsStr) -> io::Result<CString> {
    CString::new(name.as_bytes()).map_err(|_| {
        io::Error::new(io::ErrorKind::InvalidInput, "a file name with a NUL byte in it")
    })
}

fn cvt(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

fn raw(dir: Option<BorrowedFd<'_>>) -> libc::c_int {
    dir.map_or(libc::AT_FDCWD, |d| d.as_raw_fd())
}

/// `openat(2)`, always with `O_CLOEXEC`; `None` is the working directory.
pub(crate) fn openat(
    dir: Option<BorrowedFd<'_>>,
    name: &CStr,
    flags: libc::c_int,
    mode: libc::mode_t,
) -> io::Result<OwnedFd> {
    // SAFETY: a NUL-terminated name valid for the call; the descriptor
    // returned is new and owned by nobody else.
    let fd = cvt(unsafe {
        libc::openat(raw(dir), name.as_ptr(), flags | libc::O_CLOEXEC, mode as libc::c_uint)
    })?;
    // SAFETY: `fd` was just opened and is not owned elsewhere.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Opens a directory entry that must be a directory, never through a link.
pub(crate) fn open_dir_at(dir: Option<BorrowedFd<'_>>, name: &CStr) -> io::Result<OwnedFd> {
    openat(dir, name, libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW, 0)
}

pub(crate) fn fstat(fd: BorrowedFd<'_>) -> io::Result<libc::stat> {
    // SAFETY: an all-zero `stat` is a valid value to be overwritten.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is valid for writes for the call.
    cvt(unsafe { libc::fstat(fd.as_raw_fd(), &mut st) })?;
    Ok(st)
}

/// `fstatat(2)`; `follow: false` describes a link itself.
pub(crate) fn fstatat(dir: BorrowedFd<'_>, name: &CStr, follow: bool) -> io::Result<libc::stat> {
    let flags = if follow { 0 } else { libc::AT_SYMLINK_NOFOLLOW };
    // SAFETY: as in `fstat`.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated name and `st`, both valid for the call.
    cvt(unsafe { libc::fstatat(dir.as_raw_fd(), name.as_ptr(), &mut st, flags) })?;
    Ok(st)
}

/// The filesystem type (`statfs.f_type`) of what `fd` is open on.
pub(crate) fn fs_type(fd: BorrowedFd<'_>) -> io::Result<i64> {
    // SAFETY: as in `fstat`.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is valid for writes for the call.
    cvt(unsafe { libc::fstatfs(fd.as_raw_fd(), &mut st) })?;
    #[allow(clippy::unnecessary_cast)] // its type differs between C libraries
    Ok(st.f_type as i64)
}

pub(crate) fn mkdirat(dir: BorrowedFd<'_>, name: &CStr, mode: libc::mode_t) -> io::Result<()> {
    // SAFETY: a NUL-terminated name valid for the call.
    cvt(unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), mode) }).map(drop)
}

/// What the symbolic link open at `link` (`O_PATH | O_NOFOLLOW`) says:
/// read from the very link that was checked, so it cannot be swapped in
/// between.
pub(crate) fn readlink(link: BorrowedFd<'_>) -> io::Result<OsString> {
    // The empty name makes readlinkat(2) read the link `link` is open on.
    readlinkat(link, c"")
}

/// `readlinkat(2)`: what the link `name` in `dir` says, never followed.
pub(crate) fn readlinkat(dir: BorrowedFd<'_>, name: &CStr) -> io::Result<OsString> {
    let mut buf = vec![0u8; libc::PATH_MAX as usize];
    // SAFETY: `buf` is valid for `buf.len()` bytes of writes; `name` is
    // NUL-terminated and valid for the call.
    let n = unsafe {
        libc::readlinkat(dir.as_raw_fd(), name.as_ptr(), buf.as_mut_ptr().cast(), buf.len())
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let n = n as usize;
    if n >= buf.len() {
        return Err(io::Error::from_raw_os_error(libc::ENAMETOOLONG));
    }
    buf.truncate(n);
    Ok(OsString::from_vec(buf))
}

/// `renameat2(2)` between two entries of held directories. The system
/// call itself rather than the C library's wrapper: the musl that Rust's
/// static target links has no renameat2() (glibc does).
pub(crate) fn renameat2(
    from_dir: BorrowedFd<'_>,
    from: &CStr,
    to_dir: BorrowedFd<'_>,
    to: &CStr,
    flags: libc::c_uint,
) -> io::Result<()> {
    // SAFETY: renameat2(2) with two NUL-terminated names valid for the call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            from_dir.as_raw_fd(),
            from.as_ptr(),
            to_dir.as_raw_fd(),
            to.as_ptr(),
            flags,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// `renameat(2)` between two entries of held directories.
pub(crate) fn renameat(
    from_dir: BorrowedFd<'_>,
    from: &CStr,
    to_dir: BorrowedFd<'_>,
    to: &CStr,
) -> io::Result<()> {
    // SAFETY: two NUL-terminated names valid for the call.
    cvt(unsafe {
        libc::renameat(from_dir.as_raw_fd(), from.as_ptr(), to_dir.as_raw_fd(), to.as_ptr())
    })
    .map(drop)
}

pub(crate) fn unlinkat(dir: BorrowedFd<'_>, name: &CStr, flags: libc::c_int) -> io::Result<()> {
    // SAFETY: a NUL-terminated name valid for the call.
    cvt(unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), flags) }).map(drop)
}

pub(crate) fn fchmod(fd: BorrowedFd<'_>, mode: libc::mode_t) -> io::Result<()> {
    // SAFETY: fchmod(2) on a descriptor valid for the call.
    cvt(unsafe { libc::fchmod(fd.as_raw_fd(), mode) }).map(drop)
}

/// The names in the directory open at `dir` (without `.` and `..`).
pub(crate) fn names(dir: BorrowedFd<'_>) -> io::Result<Vec<CString>> {
    // fdopendir takes the descriptor over (closedir closes it): give it a
    // copy, so `dir` stays open for the caller.
    let copy = dir.try_clone_to_owned()?;
    // SAFETY: `copy` is an open directory descriptor, handed over to the
    // stream (and released from `OwnedFd`) only when fdopendir succeeds.
    let stream = unsafe { libc::fdopendir(copy.as_raw_fd()) };
    if stream.is_null() {
        return Err(io::Error::last_os_error());
    }
    std::mem::forget(copy);
    let mut out = Vec::new();
    loop {
        // readdir returns NULL at the end and on error; errno tells them apart.
        // SAFETY: errno is this thread's; `stream` is open.
        unsafe { *libc::__errno_location() = 0 };
        // SAFETY: `stream` is an open directory stream.
        let entry = unsafe { libc::readdir(stream) };
        if entry.is_null() {
            let e = io::Error::last_os_error();
            // SAFETY: `stream` is open; this closes it (and the copy).
            unsafe { libc::closedir(stream) };
            return match e.raw_os_error() {
                Some(0) | None => Ok(out),
                _ => Err(e),
            };
        }
        // SAFETY: `d_name` of an entry readdir returned is NUL-terminated.
        let name = unsafe { CStr::from_ptr((*entry).d_name.as_ptr()) };
        if name.to_bytes() != b"." && name.to_bytes() != b".." {
            out.push(name.to_owned());
        }
    }
}
