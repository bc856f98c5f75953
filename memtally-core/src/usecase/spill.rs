//! Bytes written aside while `snapshot` streams, and copied out later: an
//! unnamed file in the temporary directory (gone when closed, so nothing
//! is left behind by a crash), or memory where none can be made there.

use std::io::{Read, Seek, Write};

/// A file that bytes are written to, then read back from.
pub(crate) trait ReadWriteSeek: Read + Write + Seek {}
impl<T: Read + Write + Seek> ReadWriteSeek for T {}

/// An unnamed file in the temporary directory (gone when closed), or
/// memory where the file system cannot make one.
pub(crate) fn spill_file() -> Box<dyn ReadWriteSeek> {
    #[cfg(target_os = "linux")]
    let file = {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .mode(0o600)
            .custom_flags(libc::O_TMPFILE)
            .open(std::env::temp_dir())
    };
    // O_TMPFILE is Linux's: elsewhere the bytes stay in memory.
    #[cfg(not(target_os = "linux"))]
    let file: std::io::Result<std::fs::File> = Err(std::io::ErrorKind::Unsupported.into());
    match file {
        Ok(f) => Box::new(f),
        Err(_) => Box::new(std::io::Cursor::new(Vec::new())),
    }
}

/// Copies `n` bytes from `from` to `to`.
pub(crate) fn copy(
    from: &mut dyn ReadWriteSeek,
    to: &mut dyn Write,
    n: u64,
) -> std::io::Result<()> {
    let copied = std::io::copy(&mut Read::take(&mut *from, n), to)?;
    match copied == n {
        true => Ok(()),
        false => Err(std::io::Error::other("the spill file was cut short")),
    }
}
