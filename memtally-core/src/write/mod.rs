//! Every file memtally writes goes through here, so every one is created
//! the same safe way:
//!
//! - written to a new file with a random name in the target's directory,
//!   created exclusively (`O_EXCL`, which never follows a symlink), then
//!   synced and renamed over the target: a reader sees the old file or the
//!   new one, never half of one, and a symlink planted at the target is
//!   replaced, not followed;
//! - removed on every failure (a full disk leaves nothing behind), and
//!   never named in an error: errors name the target;
//! - a target that is not a regular file (a device such as `/dev/null`, a
//!   pipe, `/dev/stdout`) is written through, never replaced.

use std::fs::{File, OpenOptions, Permissions};
use std::io::{BufWriter, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

use crate::error::{Error, Result};

/// Writes `bytes` to `path` (see the module docs).
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    write_with(path, |w| w.write_all(bytes))
}

/// Writes what `fill` writes to `path` (see the module docs).
fn write_with(path: &Path, fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<()> {
    let mut f = NewFile::create(path)?;
    fill(&mut f).map_err(|e| Error::io(path, plain(e)))?;
    f.commit()
}

/// A file being written: it takes the target's name only at
/// [`commit`](NewFile::commit); dropped before that, it is removed.
pub struct NewFile {
    path: PathBuf,
    kind: Kind,
}

enum Kind {
    /// A new file beside the target, renamed over it at commit.
    Temp(BufWriter<NamedTempFile>),
    /// A device, pipe or socket, written as it is.
    Through(BufWriter<File>),
}

impl NewFile {
    /// Starts writing `path` (see the module docs).
    pub fn create(path: &Path) -> Result<NewFile> {
        let err = |e| Error::io(path, plain(e));
        match target_metadata(path) {
            Ok(m) if m.is_dir() => {
                return Err(Error::Usage(format!(
                    "{}: is a directory, not a file",
                    path.display()
                )));
            }
            Ok(m) if !m.is_file() && !m.file_type().is_symlink() => {
                let kind = Kind::Through(BufWriter::new(open_special(path)?));
                return Ok(NewFile { path: path.to_path_buf(), kind });
            }
            _ => {}
        }
        // A file replaced keeps its mode; a new one gets 0666 less the
        // umask, as any program's new file does.
        let mode = match std::fs::symlink_metadata(path) {
            Ok(m) if m.is_file() => m.permissions().mode() & 0o7777,
            _ => 0o666,
        };
        let tmp = tempfile::Builder::new()
            .prefix(".memtally-")
            .suffix(".tmp")
            .permissions(Permissions::from_mode(mode))
            .tempfile_in(parent(path))
            .map_err(err)?;
        Ok(NewFile { path: path.to_path_buf(), kind: Kind::Temp(BufWriter::new(tmp)) })
    }

    /// Finishes: synced and renamed over the target (a device is flushed).
    pub fn commit(self) -> Result<()> {
        let path = self.path;
        let err = |e| Error::io(&path, plain(e));
        match self.kind {
            Kind::Through(mut w) => w.flush().map_err(err),
            Kind::Temp(w) => {
                let tmp = w.into_inner().map_err(|e| err(e.into_error()))?;
                tmp.as_file().sync_all().map_err(err)?;
                // On failure the temporary file is dropped, which removes it.
                tmp.persist(&path).map_err(|e| err(e.error))?;
                // The rename itself is durable once the directory is synced.
                if let Ok(d) = File::open(parent(&path)) {
                    let _ = d.sync_all();
                }
                Ok(())
            }
        }
    }
}

impl Write for NewFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match &mut self.kind {
            Kind::Temp(w) => w.write(buf),
            Kind::Through(w) => w.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.kind {
            Kind::Temp(w) => w.flush(),
            Kind::Through(w) => w.flush(),
        }
    }
}

/// The OS error alone: `tempfile` adds the temporary file's name to its
/// errors, and errors name the target only.
fn plain(e: std::io::Error) -> std::io::Error {
    if e.raw_os_error().is_some() {
        return e;
    }
    // tempfile's wrapper reads "<the OS error> at path \"<temporary>\"".
    match e.to_string().split_once(" at path ") {
        Some((why, _)) => std::io::Error::new(e.kind(), why.to_string()),
        None => e,
    }
}

/// What `path` names, for deciding between writing through and
/// replacing. A symlink is followed only when it is owned by this user or
/// by root (as `/dev/stdout` is): one planted by another user is replaced,
/// never followed, even to a device (the rule of `fs.protected_symlinks`).
fn target_metadata(path: &Path) -> std::io::Result<std::fs::Metadata> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(path)?;
    if !m.file_type().is_symlink() {
        return Ok(m);
    }
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if m.uid() == me || m.uid() == 0 {
        std::fs::metadata(path)
    } else {
        Ok(m)
    }
}

fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// A device, pipe or socket: opened for writing (never created), checked
/// again once open (it must still not be a regular file).
fn open_special(path: &Path) -> Result<File> {
    let err = |e| Error::io(path, e);
    let f = OpenOptions::new().write(true).custom_flags(libc::O_NOCTTY).open(path).map_err(err)?;
    let t = f.metadata().map_err(err)?.file_type();
    if !(t.is_char_device() || t.is_fifo() || t.is_socket() || t.is_block_device()) {
        return Err(Error::Usage(format!(
            "{}: changed while being opened; not written",
            path.display()
        )));
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn replaces_the_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.prom");
        write_file(&p, b"a 1\n").unwrap();
        write_file(&p, b"a 2\n").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"a 2\n");
        assert_eq!(names(dir.path()), ["m.prom"]);
    }

    #[test]
    fn a_planted_symlink_is_replaced_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"keep me").unwrap();
        let link = dir.path().join("out.json");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        write_file(&link, b"new").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep me");
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_file());
        assert_eq!(std::fs::read(&link).unwrap(), b"new");
    }

    #[test]
    fn a_device_is_written_through_not_replaced() {
        write_file(Path::new("/dev/null"), b"discarded").unwrap();
        assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
    }

    #[test]
    fn a_failure_leaves_nothing_and_names_the_target() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out");
        let e = write_with(&p, |_| Err(std::io::Error::other("disk full"))).unwrap_err();
        assert!(e.to_string().starts_with(&p.display().to_string()), "{e}");
        assert!(names(dir.path()).is_empty());
        let e = write_file(dir.path(), b"x").unwrap_err();
        assert_eq!(e.exit_code(), crate::error::exit::USAGE);
    }

    #[test]
    fn a_file_dropped_before_commit_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("series.csv");
        let mut f = NewFile::create(&p).unwrap();
        f.write_all(b"elapsed_s\n").unwrap();
        f.flush().unwrap();
        assert!(!p.exists(), "the name is taken only at commit");
        drop(f);
        assert!(names(dir.path()).is_empty());
    }

    #[test]
    fn a_replaced_file_keeps_its_mode() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"").unwrap();
        std::fs::set_permissions(&p, Permissions::from_mode(0o640)).unwrap();
        write_file(&p, b"x").unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o640);
    }
}
