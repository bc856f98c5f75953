//! The one reader of files memtally did not write and the kernel did not
//! make: a recorded tree (a capture's directory, its `sys/fs/cgroup`, its
//! `sys/class/drm`), the live cgroup filesystem, and the documents a
//! caller names (snapshots to diff, series to plot, vmmap output).
//!
//! Whoever wrote such a file may have wanted to hurt whoever reads it
//! (memtally runs as root): a link to a root-only file, a device that never
//! ends, a FIFO that never answers, a sparse giant. So a [`Tree`] holds its
//! directory open and resolves every name beneath it with no symbolic link
//! at all (`openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`, or a
//! walk with `O_NOFOLLOW` where the kernel has no `openat2`), opens without
//! blocking, reads regular files only, and reads at most a bound.

use std::ffi::{CString, OsString};
use std::fs::File;
use std::io::{ErrorKind, Read};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::sys::{self, OFlags};

/// A file of a recording that is not a regular file.
pub(crate) const NOT_REGULAR: &str =
    "not a regular file (a FIFO, device or socket): a recorded tree holds regular files only";

/// A name of a recording that is a symbolic link (it could lead anywhere).
pub(crate) const A_LINK: &str =
    "not a regular file (a symbolic link, which could lead out of the tree): a recorded tree holds regular files and directories only";

/// The most a document a caller names (a snapshot to diff, a series to
/// plot) may hold: a snapshot of a busy machine is tens of MB (26 MB for
/// a desktop of 400 processes), the JSON show of one process of
/// 150,000 mappings about 100 MB; a quarter GiB leaves room for both and
/// keeps a mistaken `/dev/zero`-sized input from taking the machine.
pub(crate) const MAX_INPUT: u64 = 256 << 20;

/// A directory held open; every name is resolved beneath it.
#[derive(Debug, Clone)]
pub struct Tree {
    dir: Arc<OwnedFd>,
}

/// What a name beneath a [`Tree`] is, without following it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link, device, FIFO or socket.
    Other,
}

impl Tree {
    /// Opens the directory `path` (following a link there: the user named it).
    pub fn open(path: impl Into<PathBuf>) -> std::io::Result<Tree> {
        let path = path.into();
        let c = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| std::io::Error::from(ErrorKind::InvalidInput))?;
        let fd = sys::openat(None, &c, OFlags::RDONLY | OFlags::DIRECTORY, 0)?;
        Ok(Tree { dir: Arc::new(fd) })
    }

    /// Opens the regular file `rel` without blocking (a FIFO's open
    /// returns at once, and is then refused).
    pub(crate) fn open_file(&self, rel: &Path) -> std::io::Result<File> {
        let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY;
        let f = File::from(self.open_beneath(rel, flags)?);
        if !f.metadata()?.is_file() {
            return Err(std::io::Error::new(ErrorKind::InvalidData, NOT_REGULAR));
        }
        Ok(f)
    }

    /// Reads the regular file `rel` whole: at most `limit` bytes, else an
    /// `InvalidData` error that says so.
    pub fn read(&self, rel: &Path, limit: usize) -> std::io::Result<Vec<u8>> {
        let mut f = self.open_file(rel)?;
        let mut out = Vec::new();
        read_bounded(&mut f, &mut out, limit)?;
        Ok(out)
    }

    /// The subdirectory `rel`, held open as a tree of its own.
    pub(crate) fn subdir(&self, rel: &Path) -> std::io::Result<Tree> {
        let fd = self.open_beneath(rel, OFlags::RDONLY | OFlags::DIRECTORY)?;
        Ok(Tree { dir: Arc::new(fd) })
    }

    /// The names in the directory `rel` (`.` and `..` left out).
    pub fn list(&self, rel: &Path) -> std::io::Result<Vec<OsString>> {
        let fd = self.open_beneath(rel, OFlags::RDONLY | OFlags::DIRECTORY)?;
        let names = sys::names(fd.as_fd())?;
        Ok(names.into_iter().map(|n| OsString::from_vec(n.into_bytes())).collect())
    }

    /// What `rel` is, without following it; `NotFound` when it is not there.
    pub fn kind(&self, rel: &Path) -> std::io::Result<Kind> {
        let (parent, name) = self.parent_of(rel)?;
        let at = parent.as_ref().map_or(self.dir.as_fd(), |p| p.as_fd());
        Ok(match sys::fstatat(at, &name, false)?.kind {
            sys::Kind::File => Kind::File,
            sys::Kind::Dir => Kind::Dir,
            sys::Kind::Link | sys::Kind::Other => Kind::Other,
        })
    }

    /// The text of the symbolic link `rel` (read, never followed).
    pub fn read_link(&self, rel: &Path) -> std::io::Result<PathBuf> {
        let (parent, name) = self.parent_of(rel)?;
        let at = parent.as_ref().map_or(self.dir.as_fd(), |p| p.as_fd());
        sys::readlinkat(at, &name).map(PathBuf::from)
    }

    /// The directory holding `rel` (opened beneath, `None` for the tree's
    /// own) and `rel`'s last component.
    fn parent_of(&self, rel: &Path) -> std::io::Result<(Option<OwnedFd>, CString)> {
        let name = rel.file_name().ok_or_else(|| invalid_name(rel))?;
        let name = CString::new(name.as_bytes()).map_err(|_| invalid_name(rel))?;
        let parent = match rel.parent().filter(|p| !p.as_os_str().is_empty()) {
            Some(p) => Some(self.open_beneath(p, OFlags::RDONLY | OFlags::DIRECTORY)?),
            None => None,
        };
        Ok((parent, name))
    }

    /// Opens `rel` beneath the tree, through no symbolic link.
    fn open_beneath(&self, rel: &Path, flags: OFlags) -> std::io::Result<OwnedFd> {
        check_relative(rel)?;
        let c = CString::new(rel.as_os_str().as_bytes()).map_err(|_| invalid_name(rel))?;
        let got = sys::open_beneath(self.dir.as_fd(), &c, flags);
        match got {
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOSYS | libc::EPERM)) => {
                // No openat2 (Linux before 5.6, a seccomp filter that
                // refuses it, macOS): the same walk by hand.
                walk(self.dir.as_fd(), rel, flags)
            }
            other => other,
        }
        .map_err(explain)
    }
}

/// Bytes every `read_bounded` of this process has read, for the
/// exporter's own cost (`memtally_scan_read_bytes`): the whole-file reads
/// of `status`, `stat`, `cmdline`, `smaps_rollup`, `meminfo`, cgroup and
/// fdinfo files. Streamed `smaps` reads are not counted.
static BYTES_READ: AtomicU64 = AtomicU64::new(0);

/// The bytes the whole-file reads of `/proc` have read so far in this
/// process (status, stat, cmdline, smaps_rollup, meminfo, fdinfo); a scan's
/// share is the difference across it (serve runs one scan at a time).
pub fn bytes_read() -> u64 {
    BYTES_READ.load(Ordering::Relaxed)
}

/// Reads `f` to its end into `out`, in 4 KiB reads, at most `limit`
/// bytes (more is an `InvalidData` error, and `out` is as it was).
/// (`read_to_end` on a `File` first asks for its size and position, two
/// system calls that tell nothing for `/proc` files, whose size is 0.)
pub(crate) fn read_bounded(f: &mut File, out: &mut Vec<u8>, limit: usize) -> std::io::Result<()> {
    let start = out.len();
    loop {
        let len = out.len();
        if len - start > limit {
            out.truncate(start);
            return Err(too_big(limit as u64));
        }
        out.resize(len + 4096, 0);
        match f.read(&mut out[len..]) {
            Ok(0) => {
                out.truncate(len);
                return Ok(());
            }
            Ok(n) => {
                BYTES_READ.fetch_add(n as u64, Ordering::Relaxed);
                out.truncate(len + n)
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => out.truncate(len),
            Err(e) => {
                out.truncate(start);
                return Err(e);
            }
        }
    }
}

/// One read of `f` into `buf` (again if interrupted): the bytes read, 0
/// at its end. For a file copied a chunk at a time, never held whole.
pub(crate) fn read_chunk(f: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    loop {
        match f.read(buf) {
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            read => return read,
        }
    }
}

/// Reads a procfs file that the kernel prints as one record (`status`,
/// `stat`, `statm`, `comm`, `smaps_rollup`: `single_open` seq files), as
/// [`read_bounded`] does but without its last read: such a file gives its
/// whole text to the first read that has room for it, so a read that
/// does not fill the buffer has reached the end (issue 25: the read that
/// returns 0 was one system call in four of `top`). A full buffer goes on
/// as [`read_bounded`]. Not for other files: a regular file or a
/// multi-record seq file may return less than asked before its end.
pub(crate) fn read_record(f: &mut File, out: &mut Vec<u8>, limit: usize) -> std::io::Result<()> {
    const FIRST: usize = 16 << 10;
    if limit < FIRST {
        return read_bounded(f, out, limit);
    }
    let start = out.len();
    out.resize(start + FIRST, 0);
    loop {
        match f.read(&mut out[start..]) {
            Ok(n) => {
                BYTES_READ.fetch_add(n as u64, Ordering::Relaxed);
                out.truncate(start + n);
                if n == 0 || n < FIRST {
                    return Ok(());
                }
                return read_bounded(f, out, limit.saturating_sub(n))
                    .inspect_err(|_| out.truncate(start));
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => {
                out.truncate(start);
                return Err(e);
            }
        }
    }
}

pub(crate) fn too_big(limit: u64) -> std::io::Error {
    let size = if limit >= 1 << 20 {
        format!("{} MiB", limit >> 20)
    } else {
        format!("{} KiB", limit >> 10)
    };
    std::io::Error::new(
        ErrorKind::InvalidData,
        format!("larger than {size}: not a file of that name memtally reads"),
    )
}

/// Opens a document named on the command line: a regular file of at most
/// [`MAX_INPUT`] bytes, or a pipe (`diff <(memtally snapshot) b.json`),
/// whose reads fail past [`MAX_INPUT`] bytes. See [`open_stream`].
pub(crate) fn open_input(path: &Path) -> std::io::Result<Input> {
    let file = open_stream(path)?;
    if file.metadata()?.len() > MAX_INPUT {
        return Err(too_big(MAX_INPUT));
    }
    Ok(Input { file, left: MAX_INPUT })
}

/// Opens a document named on the command line to be read as a stream, in
/// bounded memory whatever its length (saved vmmap text): a regular file
/// or a pipe; a device, socket or directory is refused. Opening never
/// blocks on a FIFO that has no writer yet (it then reads as empty).
pub(crate) fn open_stream(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let kind = f.metadata()?.file_type();
    if kind.is_fifo() {
        // Opened; from here a read waits for the writer, as a pipe's does.
        sys::set_blocking(f.as_fd())?;
    } else if !kind.is_file() {
        return Err(std::io::Error::new(
            ErrorKind::InvalidData,
            "not a regular file or a pipe (a device, socket or directory): give a file or a pipe",
        ));
    }
    Ok(f)
}

/// A document named on the command line: reads fail with `InvalidData`
/// past [`MAX_INPUT`] bytes (a pipe can be endless).
#[derive(Debug)]
pub struct Input {
    file: File,
    left: u64,
}

/// Seeking (a regular file's few regions read again by `diff`) keeps the
/// bound: what is left is counted from the new position.
impl std::io::Seek for Input {
    fn seek(&mut self, pos: std::io::SeekFrom) -> std::io::Result<u64> {
        let at = std::io::Seek::seek(&mut self.file, pos)?;
        self.left = MAX_INPUT.saturating_sub(at);
        Ok(at)
    }
}

impl Read for Input {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            // One byte more says whether the input ends here.
            let mut probe = [0u8; 1];
            return match self.file.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(too_big(MAX_INPUT)),
            };
        }
        let want = buf.len().min(self.left.min(usize::MAX as u64) as usize);
        let n = self.file.read(&mut buf[..want])?;
        self.left -= n as u64;
        Ok(n)
    }
}

fn invalid_name(rel: &Path) -> std::io::Error {
    std::io::Error::new(
        ErrorKind::InvalidData,
        format!("{}: not a plain name inside the tree", rel.display()),
    )
}

/// Only plain names, never `..` or an absolute path: what memtally opens
/// is named by memtally (`PID/smaps`) or by a recorded file (a cgroup
/// path), and the latter must not climb.
fn check_relative(rel: &Path) -> std::io::Result<()> {
    let plain = rel.components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if !plain || rel.as_os_str().is_empty() || rel.as_os_str().len() > libc::PATH_MAX as usize {
        return Err(invalid_name(rel));
    }
    Ok(())
}

/// The errors a refused resolution gives, said in words.
fn explain(e: std::io::Error) -> std::io::Error {
    match e.raw_os_error() {
        // A symbolic link on the way (RESOLVE_NO_SYMLINKS, O_NOFOLLOW).
        Some(libc::ELOOP) => std::io::Error::new(ErrorKind::InvalidData, A_LINK),
        // An escape (RESOLVE_BENEATH).
        Some(libc::EXDEV) => std::io::Error::new(ErrorKind::InvalidData, A_LINK),
        _ => e,
    }
}

/// `rel` opened one component at a time, each with `O_NOFOLLOW`: a link
/// anywhere fails with `ELOOP` (or `ENOTDIR`), as `RESOLVE_NO_SYMLINKS`.
fn walk(dir: BorrowedFd<'_>, rel: &Path, flags: OFlags) -> std::io::Result<OwnedFd> {
    let names: Vec<&std::ffi::OsStr> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n),
            _ => None,
        })
        .collect();
    // `.`: the directory itself.
    let names = if names.is_empty() { vec![std::ffi::OsStr::new(".")] } else { names };
    let mut at: Option<OwnedFd> = None;
    for (i, name) in names.iter().enumerate() {
        let last = i + 1 == names.len();
        let c = CString::new(name.as_bytes()).map_err(|_| invalid_name(rel))?;
        let f = if last { flags } else { OFlags::RDONLY | OFlags::DIRECTORY };
        let from = at.as_ref().map_or(dir, |d| d.as_fd());
        at = Some(sys::openat(Some(from), &c, f | OFlags::NOFOLLOW, 0)?);
    }
    at.ok_or_else(|| invalid_name(rel))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn tree() -> (tempfile::TempDir, Tree) {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("in/sub")).unwrap();
        std::fs::write(d.path().join("in/sub/f"), b"inside").unwrap();
        std::fs::write(d.path().join("outside"), b"secret").unwrap();
        let t = Tree::open(d.path().join("in")).unwrap();
        (d, t)
    }

    #[test]
    fn links_anywhere_on_the_way_are_refused_and_plain_names_read() {
        let (d, t) = tree();
        assert_eq!(t.read(Path::new("sub/f"), 100).unwrap(), b"inside");
        symlink(d.path().join("outside"), d.path().join("in/abs")).unwrap();
        symlink("../outside", d.path().join("in/rel")).unwrap();
        symlink("sub", d.path().join("in/dirlink")).unwrap();
        symlink("f", d.path().join("in/sub/inner")).unwrap();
        for name in ["abs", "rel", "dirlink/f", "sub/inner", "../outside"] {
            let e = t.read(Path::new(name), 100).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidData, "{name}: {e}");
        }
        // The fallback walk refuses the same.
        for name in ["abs", "rel", "dirlink/f", "sub/inner"] {
            let e = walk(t.dir.as_fd(), Path::new(name), OFlags::RDONLY).unwrap_err();
            assert!(matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR)), "{name}: {e}");
        }
        assert_eq!(t.kind(Path::new("abs")).unwrap(), Kind::Other);
        assert_eq!(t.kind(Path::new("sub")).unwrap(), Kind::Dir);
        assert_eq!(t.read_link(Path::new("rel")).unwrap(), Path::new("../outside"));
        let mut names = t.list(Path::new("sub")).unwrap();
        names.sort();
        assert_eq!(names, ["f", "inner"]);
    }

    #[test]
    fn fifos_devices_and_giants_are_refused_at_once() {
        let (d, t) = tree();
        let fifo = CString::new(d.path().join("in/fifo").as_os_str().as_bytes()).unwrap();
        // SAFETY: a NUL-terminated path valid for the call.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        assert_eq!(t.read(Path::new("fifo"), 100).unwrap_err().kind(), ErrorKind::InvalidData);
        std::fs::File::create(d.path().join("in/big")).unwrap().set_len(1 << 30).unwrap();
        let e = t.read(Path::new("big"), 1 << 20).unwrap_err();
        assert!(e.to_string().contains("larger than 1 MiB"), "{e}");
        let e = open_input(Path::new("/dev/zero")).unwrap_err();
        assert!(e.to_string().contains("not a regular file or a pipe"), "{e}");
        // A FIFO with no writer reads as empty instead of hanging.
        let mut read = Vec::new();
        open_input(&d.path().join("in/fifo")).unwrap().read_to_end(&mut read).unwrap();
        assert!(read.is_empty());
    }
}
