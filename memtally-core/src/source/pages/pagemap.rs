//! Reads one process's pagemap over its resident and swapped ranges only:
//! `PAGEMAP_SCAN` says where they are (or, on kernels before 6.7, the
//! mappings smaps shows with resident or swapped bytes), and the entries
//! of those ranges are read with `pread` in batches of up to 512 KiB. What
//! is kept is one entry per page that is there: memory follows resident
//! pages, never virtual size.

use std::fs::File;

use crate::error::{Error, Result};
use crate::model::pages::{Present, ProcPages, PAGE};
use crate::model::Region;
use crate::source::pages::{read_at, scan};
use crate::source::parse::pagemap::{decode, words, Where};
use crate::source::proc_root::RegionsFile;
use crate::source::{stamp, ProcRoot};

/// Entries read per `pread`: 512 KiB of them, reused.
const BATCH_PAGES: u64 = 64 * 1024;

/// The user address space ends below this on every 64-bit Linux (the
/// `[vsyscall]` page above it is not in pagemap).
const USER_END: u64 = 1 << 56;

/// Reads `pid`'s resident and swapped pages. `comm` names it in errors.
pub(crate) fn read(root: &ProcRoot, pid: u32, comm: &str) -> Result<ProcPages> {
    Ok(read_mapped(root, pid, comm, false)?.0)
}

/// [`read`], with the mappings `maps` gave for the bounds of the walk (a
/// reader that needs no more of each mapping than `maps` says, page
/// states, then reads no smaps: a second and third walk of the page
/// tables). With `per_huge_page`, a huge page mapped whole costs one
/// entry, not 512; its pages then all carry its first page's "mapped
/// exclusively" bit, which a kernel that counts each page's mappings
/// (`CONFIG_PAGE_MAPCOUNT`) sets page by page: only for readers that do
/// not use that bit (page states).
pub(crate) fn read_mapped(
    root: &ProcRoot,
    pid: u32,
    comm: &str,
    per_huge_page: bool,
) -> Result<(ProcPages, Vec<Region>)> {
    let path = root.pid_file(pid, "pagemap");
    let pagemap = root.open(pid, "pagemap")?;
    // Stamped before and checked after, as every read of a process is: an
    // exec between the two leaves pages of two programs, not one.
    let before = stamp::stamp(root, pid)?;
    let regions = root.read_regions(pid, RegionsFile::Maps, Vec::new())?;
    let (lo, hi) = bounds(&regions);
    let mut pages = ProcPages { pid, ..ProcPages::default() };
    // (start, end, huge): runs of huge pages mapped whole are kept apart.
    let mut ranges: Vec<(u64, u64, bool)> = Vec::new();
    let mut push = |start: u64, end: u64, huge: bool| match ranges.last_mut() {
        Some(last) if last.1 == start && last.2 == huge => last.1 = end,
        _ => ranges.push((start, end, huge)),
    };
    match scan::runs(&pagemap, lo, hi, &mut |r| {
        pages.runs.push(r.to_model());
        let whole_huge = per_huge_page
            && r.categories & (scan::HUGE | scan::PRESENT) == (scan::HUGE | scan::PRESENT)
            && r.categories & scan::SWAPPED == 0;
        push(r.start, r.end, whole_huge);
    }) {
        Ok(()) => pages.scanned = true,
        Err(e) if scan::unsupported(&e) => {
            pages.runs.clear();
            for r in root.read_regions(pid, RegionsFile::Smaps, Vec::new())? {
                let there = r.sizes.rss.unwrap_or(0) + r.sizes.swap.unwrap_or(0);
                if let (Some(s), Some(e), true) = (r.start, r.end, there > 0) {
                    push(s, e, false);
                }
            }
        }
        Err(e) => return Err(root.explain(pid, path, e)),
    }
    // Room for every page the scan saw resident, at once: growing a vector
    // of a million entries copies it and faults its pages in again
    // (a third of `show --pages` went to zeroing pages).
    let resident: u64 = pages.runs.iter().filter(|r| r.present).map(|r| r.bytes() / PAGE).sum();
    pages.present.reserve_exact(resident as usize);
    let mut reader = Reader {
        root,
        pid,
        comm,
        path: path.clone(),
        file: &pagemap,
        buf: vec![0u8; (BATCH_PAGES * 8) as usize],
        pages,
        any_pfn: false,
    };
    for (start, end, huge) in ranges {
        if huge {
            reader.huge(start, end)?;
        } else {
            reader.span(start, end)?;
        }
    }
    let mut pages = reader.pages;
    pages.frames_hidden = !pages.present.is_empty() && !reader.any_pfn;
    if stamp::check(root, pid, comm, before.as_ref())? == stamp::Change::Execed {
        return Err(Error::Changed { pid, comm: comm.to_string() });
    }
    Ok((pages, regions))
}

/// The most one page-middle entry maps: a huge page mapped whole spans at
/// most this, aligned to it (a larger hugetlb page is read as its parts,
/// each as contiguous in frames as the whole).
const PMD: u64 = 2 << 20;

/// One process's pagemap being read into its pages.
struct Reader<'a> {
    root: &'a ProcRoot,
    pid: u32,
    comm: &'a str,
    path: std::path::PathBuf,
    file: &'a File,
    buf: Vec<u8>,
    pages: ProcPages,
    any_pfn: bool,
}

impl Reader<'_> {
    /// Reads `n` entries (at most a batch) at `addr`; how many came.
    fn entries(&mut self, addr: u64, n: u64) -> Result<usize> {
        let want = &mut self.buf[..(n * 8) as usize];
        let got =
            read_at(self.file, want, addr / PAGE * 8).map_err(|e| match e.raw_os_error() {
                Some(libc::ESRCH) => self.exited(),
                _ => self.root.explain(self.pid, self.path.clone(), e),
            })?;
        if got == 0 {
            // The address space is gone: the process exited.
            return Err(self.exited());
        }
        self.pages.pagemap_entries += got as u64 / 8;
        Ok(got / 8)
    }

    fn exited(&self) -> Error {
        Error::Exited { pid: self.pid, comm: self.comm.to_string() }
    }

    /// Every entry of `start..end`, one per page.
    fn span(&mut self, start: u64, end: u64) -> Result<()> {
        let mut at = start;
        while at < end {
            let got = self.entries(at, ((end - at) / PAGE).min(BATCH_PAGES))?;
            let entries = words(&self.buf[..got * 8])
                .map_err(|e| Error::Parse { path: self.path.clone(), message: e.to_string() })?;
            for (i, raw) in entries.enumerate() {
                let addr = at + i as u64 * PAGE;
                let e = decode(raw);
                match e.at {
                    Where::Present { pfn } => {
                        self.any_pfn |= pfn != 0;
                        let (solo, file) = (e.exclusive, e.file_or_shared);
                        self.pages.present.push(Present { addr, pfn, solo, file });
                    }
                    Where::Swapped { kind, offset } => {
                        self.pages.swapped.push((addr, (kind, offset)))
                    }
                    Where::Absent => {}
                }
            }
            at += got as u64 * PAGE;
        }
        Ok(())
    }

    /// `start..end`, which `PAGEMAP_SCAN` says is huge pages mapped whole:
    /// each page-middle entry's span maps one folio's frames in order, with
    /// the same bits (the kernel writes its pagemap entries from the one
    /// entry), so its first entry tells them all. A first entry that is
    /// not present (the range changed since the scan) has the span read
    /// page by page.
    fn huge(&mut self, start: u64, end: u64) -> Result<()> {
        let mut at = start;
        while at < end {
            let stop = ((at / PMD + 1) * PMD).min(end);
            self.entries(at, 1)?;
            let raw = u64::from_le_bytes(self.buf[..8].try_into().unwrap_or([0; 8]));
            let e = decode(raw);
            match e.at {
                Where::Present { pfn } => {
                    let n = (stop - at) / PAGE;
                    self.any_pfn |= pfn != 0;
                    let (solo, file) = (e.exclusive, e.file_or_shared);
                    self.pages.present.extend((0..n).map(|i| Present {
                        addr: at + i * PAGE,
                        // An unprivileged reader sees 0 for every frame.
                        pfn: if pfn == 0 { 0 } else { pfn + i },
                        solo,
                        file,
                    }));
                    if pfn != 0 {
                        self.pages.huge_frames.push((pfn, n));
                    }
                }
                _ => self.span(at, stop)?,
            }
            at = stop;
        }
        Ok(())
    }
}

/// The lowest and highest user addresses of `regions` (from `maps`).
fn bounds(regions: &[Region]) -> (u64, u64) {
    let mut lo = u64::MAX;
    let mut hi = 0;
    for r in regions {
        if let (Some(s), Some(e)) = (r.start, r.end) {
            if e <= USER_END {
                lo = lo.min(s);
                hi = hi.max(e);
            }
        }
    }
    if lo < hi {
        (lo, hi)
    } else {
        (0, 0)
    }
}
