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
//! Stacks (`Unwind`): by default each sample carries a copy of the user
//! stack (8 KiB from the stack pointer up, `Unwind::STACK_BYTES`) and the
//! registers the unwinder needs, unwound with the binaries' DWARF
//! call-frame information (`unwind`, framehop), so code built without
//! frame pointers (most distribution binaries) has its callers; the
//! kernel's frame-pointer chain is sampled too, and kept where the DWARF
//! unwind stops short of it (a stack deeper than the copy, code with no
//! unwind information). With `Unwind::FramePointer` only the kernel's
//! chain is sampled: less copied a fault, but code built without frame
//! pointers has only its faulting function (the sample's instruction)
//! right.

#[cfg(target_os = "linux")]
mod debugfile;
#[cfg(target_os = "linux")]
pub(crate) mod record;
#[cfg(target_os = "linux")]
mod symbols;
#[cfg(target_os = "linux")]
mod target;
#[cfg(target_os = "linux")]
mod trace;
#[cfg(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64")))]
mod unwind;
/// No DWARF unwinding elsewhere: the frame-pointer chains stand.
#[cfg(all(target_os = "linux", not(any(target_arch = "x86_64", target_arch = "aarch64"))))]
mod unwind {
    #[derive(Default)]
    pub(crate) struct Unwinding;
    impl Unwinding {
        pub(crate) fn forget(&mut self, _: u32) {}
        pub(crate) fn unwind(
            &mut self,
            _: u32,
            _: &super::target::Target,
            _: &super::record::UserStack<'_>,
            _: &mut Vec<u64>,
        ) -> bool {
            false
        }
    }
}

#[cfg(target_os = "linux")]
pub use trace::record;
