//! The `PAGEMAP_SCAN` ioctl on `/proc/PID/pagemap` (Linux 6.7 and
//! later): the kernel walks the page tables and answers with ranges of
//! pages that share the same states, skipping what is not there. It is
//! what makes a read cost resident pages rather than virtual size (a
//! 1.4 TB reservation never touched is one VMA the walk steps over), and
//! it tells any reader that may open pagemap (no privilege needed) which
//! pages are present, swapped, of a file, huge, or the zero page.
//! Constants and layout from the kernel's `include/uapi/linux/fs.h`.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// The page is of a file (or shared memory).
pub const FILE: u64 = 1 << 2;
/// The page is resident.
pub const PRESENT: u64 = 1 << 3;
/// The page is in swap.
pub const SWAPPED: u64 = 1 << 4;
/// The page is the zero page.
pub(crate) const PFNZERO: u64 = 1 << 5;
/// The page is of a transparent huge page or a hugetlb page.
pub const HUGE: u64 = 1 << 6;

/// `struct pm_scan_arg`.
#[repr(C)]
#[derive(Default)]
struct ScanArg {
    size: u64,
    flags: u64,
    start: u64,
    end: u64,
    walk_end: u64,
    vec: u64,
    vec_len: u64,
    max_pages: u64,
    category_inverted: u64,
    category_mask: u64,
    category_anyof_mask: u64,
    return_mask: u64,
}

/// `struct page_region`: pages `start..end` that share `categories`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Run {
    /// First address.
    pub start: u64,
    /// Address after the last.
    pub end: u64,
    /// The `PAGE_IS_*` bits the pages share (of those asked for).
    pub categories: u64,
}

impl Run {
    /// The run as the model holds it.
    pub(crate) fn to_model(self) -> crate::model::pages::ScanRun {
        let has = |bit: u64| self.categories & bit != 0;
        crate::model::pages::ScanRun {
            start: self.start,
            end: self.end,
            present: has(PRESENT),
            swapped: has(SWAPPED),
            file: has(FILE),
            zero: has(PFNZERO),
            huge: has(HUGE),
        }
    }
}

/// `_IOWR('f', 16, struct pm_scan_arg)`.
const PAGEMAP_SCAN: u64 =
    (3 << 30) | ((std::mem::size_of::<ScanArg>() as u64) << 16) | ((b'f' as u64) << 8) | 16;

/// Runs handed back per call: 6 KiB of them; a call that fills them is
/// continued from where the kernel stopped.
const BATCH: usize = 256;

/// Whether an error means the kernel has no `PAGEMAP_SCAN` (before 6.7).
pub(crate) fn unsupported(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOTTY) | Some(libc::EINVAL))
}

/// Every run of present or swapped pages in `start..end`, in address
/// order, with the `FILE`, `PRESENT`, `SWAPPED`, `PFNZERO` and `HUGE`
/// bits each has; `each` is called per run.
pub fn runs(pagemap: &File, start: u64, end: u64, each: &mut dyn FnMut(Run)) -> io::Result<()> {
    let mut buf = vec![Run::default(); BATCH];
    let mut at = start;
    while at < end {
        let mut arg = ScanArg {
            size: std::mem::size_of::<ScanArg>() as u64,
            start: at,
            end,
            vec: buf.as_mut_ptr() as u64,
            vec_len: BATCH as u64,
            category_anyof_mask: PRESENT | SWAPPED,
            return_mask: FILE | PRESENT | SWAPPED | PFNZERO | HUGE,
            ..ScanArg::default()
        };
        // SAFETY: `arg` is a valid pm_scan_arg for the call and `vec`
        // points at `BATCH` writable page_region structs that outlive it.
        let rc = unsafe {
            libc::ioctl(pagemap.as_raw_fd(), PAGEMAP_SCAN as _, &mut arg as *mut ScanArg)
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        for r in &buf[..(rc as usize).min(BATCH)] {
            each(*r);
        }
        // The walk ends at `end`, or where the runs filled up.
        if arg.walk_end <= at {
            break;
        }
        at = arg.walk_end;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ioctl_number_is_the_kernels() {
        assert_eq!(std::mem::size_of::<ScanArg>(), 96);
        assert_eq!(PAGEMAP_SCAN, 0xc060_6610);
    }

    #[test]
    fn own_pages_are_found_and_holes_skipped() {
        let f = File::open("/proc/self/pagemap").unwrap();
        let v = vec![7u8; 1 << 20];
        let addr = v.as_ptr() as u64 & !4095;
        let mut found = 0u64;
        match runs(&f, addr, addr + (1 << 20), &mut |r| {
            if r.categories & PRESENT != 0 {
                found += r.end - r.start;
            }
        }) {
            Err(e) if unsupported(&e) => return eprintln!("skipped: no PAGEMAP_SCAN ({e})"),
            r => r.unwrap(),
        }
        assert!(found >= 1 << 19, "written pages are present: {found}");
        drop(v);
    }
}
