//! Page faults sampled with their call stacks (`perf_event_open`,
//! `PERF_COUNT_SW_PAGE_FAULTS`): which code made a process's memory
//! resident or dirty, by memtally's category of the faulting address.
//!
//! Read or write: the software event does not say which a fault was, so
//! the page is looked at in `/proc/PID/pagemap` when its sample is read
//! (within the 50 ms the ring is drained at): in a writable private
//! mapping, a present page that is anonymous and mapped by this process
//! alone is a written one (a copy-on-write copy, or new memory written);
//! the file's own page, or the shared zero page, is a read. A mapping
//! without write permission is read. Limits: a page read and then
//! written before its sample is read counts both its faults as writes; a
//! shared writable mapping (a shared file, shared memory) is `unknown`,
//! its page being the same either way; a page gone (unmapped, the process
//! ended) before it was looked at is `unknown`.
//!
//! Stacks: the kernel's frame-pointer walk of the user stack. Code built
//! without frame pointers still has its faulting function (the sample's
//! instruction) right; the callers above it may be missing or wrong.
//! DWARF unwinding of a copied user stack is not done.

#[cfg(target_os = "linux")]
pub(crate) mod record;
#[cfg(target_os = "linux")]
mod symbols;
#[cfg(target_os = "linux")]
mod target;
#[cfg(target_os = "linux")]
mod trace;

#[cfg(target_os = "linux")]
pub use trace::{record, Recorded};
