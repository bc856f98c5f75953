//! One sampled page fault as the recorder hands it on: where it fell,
//! whether it read or wrote, what it stands for, and its call stack.

use std::time::Duration;

use serde::Serialize;

use crate::model::Region;

/// Whether a fault read a page in or dirtied one, as told from the page
/// afterwards (see `source::faults` for how, and its limits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum FaultAccess {
    /// A read: the mapping is not writable, or the page found is the
    /// file's page (private file mapping) or the shared zero page
    /// (anonymous memory read before written): no dirty byte added.
    Read,
    /// A write: the page found is a private anonymous page of a private
    /// mapping (the copy a write made, or a new page written).
    Write,
    /// Not told: a shared writable mapping (file or shared memory; its
    /// pages are the same whether read or written), or the page was gone
    /// when looked at.
    Unknown,
}

/// One sampled fault, placed in the mapping its address fell in.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FaultSample<'a> {
    /// The process it was taken in.
    pub pid: u32,
    /// The mapping the address fell in; `None`: none known.
    pub region: Option<&'a Region>,
    /// Read or write.
    pub access: FaultAccess,
    /// The bytes it stands for (sample period × page size).
    pub bytes: u64,
    /// Its call stack, innermost first (return addresses moved back into
    /// their calls).
    pub stack: &'a [u64],
}

/// How a sample's call stack is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unwind {
    /// A copy of the user stack and the registers, unwound with the
    /// binaries' DWARF call-frame information (.eh_frame, .debug_frame):
    /// code built without frame pointers too. A sample whose unwind stops
    /// short of the kernel's frame-pointer chain keeps that chain.
    Dwarf {
        /// Bytes copied from the stack pointer up (a multiple of 8, at
        /// most [`Unwind::MAX_STACK_BYTES`]). Every sample carries all of
        /// them through the ring buffer: the cost per fault, and what
        /// fills it.
        stack_bytes: u32,
    },
    /// The kernel's frame-pointer walk only: less copied per fault, but
    /// code built without frame pointers loses its callers.
    FramePointer,
}

impl Unwind {
    /// The stack copy a sample carries by default: 8 KiB, perf's own
    /// default; dozens of frames (docs/benchmarks.md has the cost).
    pub(crate) const STACK_BYTES: u32 = 8 << 10;
    /// The most a sample can copy (a sample is at most 64 KiB).
    pub const MAX_STACK_BYTES: u32 = 60 << 10;
}

impl Default for Unwind {
    fn default() -> Unwind {
        Unwind::Dwarf { stack_bytes: Unwind::STACK_BYTES }
    }
}

/// What to record, and for how long.
#[derive(Debug, Clone)]
pub struct FaultOptions {
    /// One sample every this many faults (1: every fault).
    pub period: u64,
    /// Stop after this long.
    pub duration: Duration,
    /// Stacks kept per category in the report.
    pub top: usize,
    /// Data pages of each CPU's ring buffer (a power of two); `None`:
    /// [`FaultOptions::ring_pages`] sizes it.
    pub ring_pages: Option<usize>,
    /// How stacks are found.
    pub unwind: Unwind,
}

impl Default for FaultOptions {
    fn default() -> FaultOptions {
        FaultOptions {
            period: 1,
            duration: Duration::from_secs(30),
            top: 10,
            ring_pages: None,
            unwind: Unwind::default(),
        }
    }
}

impl FaultOptions {
    /// Bytes a sample takes in the ring besides its stack copy: header,
    /// ip, tid, time, address, registers, sizes and a chain of some 20
    /// frames (about 8.3 KB a sample in all with 8 KiB of stack).
    const SAMPLE_BYTES: usize = 256;
    /// Samples each CPU's ring holds by default: a fault storm's bursts
    /// while the recorder waits for a CPU (docs/benchmarks.md).
    pub const RING_SAMPLES: usize = 2000;
    /// The default ring's floor, in pages: 2 MiB with 4 KiB pages
    /// (about 20,000 frame-pointer samples).
    const MIN_RING_PAGES: usize = 512;
    /// All the rings together, at most (the kernel allocates them whole).
    const MAX_RINGS_BYTES: usize = 256 << 20;

    /// The data pages of each of `cpus` rings: as asked, else room for
    /// about [`FaultOptions::RING_SAMPLES`] samples of `stack_bytes`
    /// copied stack (the power of two nearest, at least 512 pages),
    /// halved while the rings together pass 256 MiB.
    pub fn ring_pages(&self, stack_bytes: u32, page: usize, cpus: usize) -> usize {
        if let Some(pages) = self.ring_pages {
            return pages;
        }
        let bytes = Self::RING_SAMPLES * (stack_bytes as usize + Self::SAMPLE_BYTES);
        let exact = bytes.div_ceil(page.max(1));
        let above = exact.next_power_of_two();
        let nearest = if exact * 4 < above * 3 { above / 2 } else { above };
        let mut pages = nearest.max(Self::MIN_RING_PAGES);
        while pages > Self::MIN_RING_PAGES && pages * page * cpus.max(1) > Self::MAX_RINGS_BYTES {
            pages /= 2;
        }
        pages
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_ring_holds_2000_dwarf_samples_and_stays_bounded() {
        let opts = FaultOptions::default();
        // 8 KiB stacks: 4,096 pages (16 MiB), 1,985 samples of 8.4 KB.
        assert_eq!(opts.ring_pages(8 << 10, 4096, 2), 4096);
        assert_eq!(4096 * 4096 / ((8 << 10) + 256), 1985);
        // 60 KiB stacks: 32,768 pages (128 MiB), 2,000 of 61.7 KB.
        assert_eq!(opts.ring_pages(60 << 10, 4096, 2), 32768);
        // Frame-pointer samples: today's 512 pages.
        assert_eq!(opts.ring_pages(0, 4096, 2), 512);
        // 64 CPUs: halved to 256 MiB in all.
        assert_eq!(opts.ring_pages(8 << 10, 4096, 64), 1024);
        // Asked for: as asked.
        let asked = FaultOptions { ring_pages: Some(8), ..FaultOptions::default() };
        assert_eq!(asked.ring_pages(8 << 10, 4096, 2), 8);
    }
}
