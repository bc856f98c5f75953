//! Reads one process's pagemap over its resident and swapped ranges only:
//! `PAGEMAP_SCAN` says where they are (or, on kernels before 6.7, the
//! mappings smaps shows with resident or swapped bytes), and the entries
//! of those ranges are read with `pread` in batches of up to 512 KiB. What
//! is kept is one entry per page that is there: memory follows resident
//! pages, never virtual size.

use std::fs::File;
use std::os::unix::fs::FileExt;

use crate::error::{Error, Result};
use crate::model::pages::{Present, ProcPages, PAGE};
use crate::source::pages::scan;
use crate::source::parse::pagemap::{decode, words, Where};
use crate::source::{stamp, ProcRoot};

/// Entries read per `pread`: 512 KiB of them, reused.
const BATCH_PAGES: u64 = 64 * 1024;

/// The user address space ends below this on every 64-bit Linux (the
/// `[vsyscall]` page above it is not in pagemap).
const USER_END: u64 = 1 << 56;

/// Reads `pid`'s resident and swapped pages. `comm` names it in errors.
pub(crate) fn read(root: &ProcRoot, pid: u32, comm: &str) -> Result<ProcPages> {
    let path = root.pid_file(pid, "pagemap");
    let pagemap = root.open(pid, "pagemap")?;
    let exited = || Error::Exited { pid, comm: comm.to_string() };
    // Stamped before and checked after, as every read of a process is: an
    // exec between the two leaves pages of two programs, not one.
    let before = stamp::stamp(root, pid)?;
    let mut pages = ProcPages { pid, ..ProcPages::default() };
    let (lo, hi) = bounds(root, pid)?;
    let mut ranges: Vec<(u64, u64)> = Vec::new();
    let mut push = |start: u64, end: u64| match ranges.last_mut() {
        Some(last) if last.1 == start => last.1 = end,
        _ => ranges.push((start, end)),
    };
    match scan::runs(&pagemap, lo, hi, &mut |r| {
        pages.runs.push(r.to_model());
        push(r.start, r.end);
    }) {
        Ok(()) => pages.scanned = true,
        Err(e) if scan::unsupported(&e) => {
            pages.runs.clear();
            for r in root.read_regions(pid, "smaps")? {
                let there = r.sizes.rss.unwrap_or(0) + r.sizes.swap.unwrap_or(0);
                if let (Some(s), Some(e), true) = (r.start, r.end, there > 0) {
                    push(s, e);
                }
            }
        }
        Err(e) => return Err(root.explain(pid, path, e)),
    }
    let mut buf = vec![0u8; (BATCH_PAGES * 8) as usize];
    let mut any_pfn = false;
    for (start, end) in ranges {
        let mut at = start;
        while at < end {
            let n = ((end - at) / PAGE).min(BATCH_PAGES);
            let want = &mut buf[..(n * 8) as usize];
            let got =
                read_at(&pagemap, want, at / PAGE * 8).map_err(|e| match e.raw_os_error() {
                    Some(libc::ESRCH) => exited(),
                    _ => root.explain(pid, path.clone(), e),
                })?;
            if got == 0 {
                // The address space is gone: the process exited.
                return Err(exited());
            }
            let entries = words(&want[..got - got % 8])
                .map_err(|e| Error::Parse { path: path.clone(), message: e.to_string() })?;
            for (i, raw) in entries.enumerate() {
                let addr = at + i as u64 * PAGE;
                let e = decode(raw);
                match e.at {
                    Where::Present { pfn } => {
                        any_pfn |= pfn != 0;
                        let (solo, file) = (e.exclusive, e.file_or_shared);
                        pages.present.push(Present { addr, pfn, solo, file });
                    }
                    Where::Swapped { kind, offset } => pages.swapped.push((addr, (kind, offset))),
                    Where::Absent => {}
                }
            }
            at += (got as u64 / 8) * PAGE;
        }
    }
    pages.frames_hidden = !pages.present.is_empty() && !any_pfn;
    if stamp::check(root, pid, comm, before.as_ref())? == stamp::Change::Execed {
        return Err(Error::Changed { pid, comm: comm.to_string() });
    }
    Ok(pages)
}

/// Reads as much of `buf` as the file gives at `offset`.
fn read_at(f: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
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

/// The lowest and highest user addresses `pid` maps (from `maps`).
fn bounds(root: &ProcRoot, pid: u32) -> Result<(u64, u64)> {
    let mut lo = u64::MAX;
    let mut hi = 0;
    for r in root.read_regions(pid, "maps")? {
        if let (Some(s), Some(e)) = (r.start, r.end) {
            if e <= USER_END {
                lo = lo.min(s);
                hi = hi.max(e);
            }
        }
    }
    Ok(if lo < hi { (lo, hi) } else { (0, 0) })
}
