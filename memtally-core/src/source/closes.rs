//! Files read and done with, closed in batches: `top --all` reads three
//! or four small files of every process, and a close for each was a
//! third of its system calls. The descriptors are kept open until a batch
//! is full (or the scan ends), then every run of consecutive descriptor
//! numbers goes in one `close_range(2)`.
//!
//! Only descriptors held here are closed: a run is made of numbers this
//! batch owns, each still open, so no other thread can hold one of them,
//! and a number another thread opened in between ends the run instead of
//! being closed with it.

use std::fs::File;
use std::os::fd::{IntoRawFd, RawFd};
use std::sync::Mutex;

/// How many read files wait for their close, at most (plus one per
/// reading thread, each holding the file it reads), where the limit on
/// open files leaves room (see [`batch`]). Enough that the runs are long
/// (docs/benchmarks.md, top --all, has the batch sizes tried).
const BATCH: usize = 64;

/// The batch this process can afford: [`BATCH`], or a quarter of the
/// soft limit on open files where that is less (a shell's `ulimit -n
/// 40` leaves three quarters to the reading threads and the rest of
/// memtally). Asked once.
fn batch() -> usize {
    static AFFORDABLE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *AFFORDABLE.get_or_init(|| {
        // Unlimited: no limit on the batch.
        let soft = crate::sys::open_files_limit()
            .map_or(usize::MAX, |n| usize::try_from(n).unwrap_or(usize::MAX));
        (soft / 4).clamp(1, BATCH)
    })
}

/// Read files waiting to be closed; what is still held is closed when
/// this is dropped. The numbers are kept in place, not on the heap: a
/// list that grew and was given back each batch left holes among the
/// scan's own allocations.
#[derive(Debug, Default)]
pub(crate) struct Closes {
    held: Mutex<Held>,
}

/// The descriptors a [`Closes`] owns: `fds[..n]`, each open.
#[derive(Debug)]
struct Held {
    fds: [RawFd; BATCH],
    n: usize,
}

impl Default for Held {
    fn default() -> Held {
        Held { fds: [-1; BATCH], n: 0 }
    }
}

impl Held {
    /// Closes every descriptor held, a run of consecutive numbers at a time.
    fn close_all(&mut self) {
        let fds = &mut self.fds[..self.n];
        fds.sort_unstable();
        let mut at = 0;
        while at < fds.len() {
            let first = fds[at];
            let mut last = first;
            while at + 1 < fds.len() && fds[at + 1] == last + 1 {
                at += 1;
                last = fds[at];
            }
            close_run(first, last);
            at += 1;
        }
        self.n = 0;
    }
}

impl Closes {
    /// Closes `file` with the next batch.
    pub(crate) fn later(&self, file: File) {
        let full = {
            let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
            let n = held.n;
            held.fds[n] = file.into_raw_fd();
            held.n += 1;
            // A full batch is taken out and closed after the lock is let
            // go: closed under it, the other reading threads waited on it
            // (docs/benchmarks.md, top --all: the futex calls).
            (held.n >= batch()).then(|| std::mem::take(&mut *held))
        };
        if let Some(mut batch) = full {
            batch.close_all();
        }
    }
}

impl Drop for Closes {
    fn drop(&mut self) {
        self.held.get_mut().unwrap_or_else(|e| e.into_inner()).close_all();
    }
}

/// Closes the descriptors `first..=last`, every one of them ours.
fn close_run(first: RawFd, last: RawFd) {
    if first < last {
        // SAFETY: every number of the run is held by this batch (see the
        // module comment) and used by nothing after this.
        let refused = match unsafe { crate::sys::close_range(first, last) } {
            Ok(()) => return,
            // Refused before it closed anything (a kernel before 5.9, a
            // seccomp filter, macOS): one close each instead. Any other
            // failure would leave us not knowing which are closed: those
            // are left open rather than risk closing a number reused
            // meanwhile.
            Err(e) => matches!(e.raw_os_error(), Some(libc::ENOSYS | libc::EPERM | libc::EINVAL)),
        };
        if !refused {
            return;
        }
    }
    for fd in first..=last {
        // SAFETY: `fd` is ours and open (above).
        unsafe { libc::close(fd) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    /// The device and inode the open descriptor `fd` refers to.
    #[allow(clippy::unnecessary_cast)] // dev_t is i32 on macOS
    fn file_of(fd: RawFd) -> Option<(u64, u64)> {
        // SAFETY: fstat fills the zeroed struct it is given.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        (unsafe { libc::fstat(fd, &mut st) } == 0).then_some((st.st_dev as u64, st.st_ino as u64))
    }

    /// Every file handed over is closed, in batches and at the drop; a
    /// file opened between them and not handed over stays open. The file
    /// is this test's own, so a number still pointing at it after the
    /// drop is one not closed, whatever other tests open meanwhile.
    #[test]
    fn closes_what_it_holds_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("read");
        std::fs::write(&path, "x").unwrap();
        let ours = file_of(File::open(&path).unwrap().as_raw_fd()).unwrap();
        let closes = Closes::default();
        let mut handed = Vec::new();
        let mut kept = Vec::new();
        for i in 0..(batch() * 2 + 5) {
            let f = File::open(&path).unwrap();
            if i % 7 == 3 {
                // Not handed over: breaks the runs around it.
                kept.push(f);
            } else {
                handed.push(f.as_raw_fd());
                closes.later(f);
            }
            for k in &kept {
                assert_eq!(file_of(k.as_raw_fd()), Some(ours), "a file not handed over was closed");
            }
        }
        drop(closes);
        for k in &kept {
            assert_eq!(file_of(k.as_raw_fd()), Some(ours), "a file not handed over was closed");
        }
        let kept_fds: Vec<RawFd> = kept.iter().map(|k| k.as_raw_fd()).collect();
        for fd in handed {
            assert!(
                kept_fds.contains(&fd) || file_of(fd) != Some(ours),
                "descriptor {fd} handed over is still open"
            );
        }
    }
}
