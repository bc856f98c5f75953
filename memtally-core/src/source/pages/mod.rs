//! Page-level readers: one process's pagemap over what is resident or
//! swapped (`pagemap`, ranges from the `PAGEMAP_SCAN` ioctl in
//! [`scan`]), and the frames' map counts and flags (`kpage`). They read
//! the live procfs only: a recorded tree has no page tables behind it.

pub(crate) mod kconfig;
pub(crate) mod kpage;
pub(crate) mod pagemap;
pub(crate) mod scan;

pub(crate) use kpage::KpageFiles;

/// Reads as much of `buf` as the file gives at `offset` (less only at
/// its end).
pub(crate) fn read_at(f: &std::fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    use std::os::unix::fs::FileExt;
    let mut done = 0;
    while done < buf.len() {
        match f.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}
