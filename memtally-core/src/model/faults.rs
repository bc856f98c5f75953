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
pub struct FaultSample<'a> {
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
    pub const STACK_BYTES: u32 = 8 << 10;
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
    /// Data pages of each CPU's ring buffer (a power of two).
    pub ring_pages: usize,
    /// How stacks are found.
    pub unwind: Unwind,
}

impl Default for FaultOptions {
    fn default() -> FaultOptions {
        FaultOptions {
            period: 1,
            duration: Duration::from_secs(30),
            top: 10,
            ring_pages: 512,
            unwind: Unwind::default(),
        }
    }
}
