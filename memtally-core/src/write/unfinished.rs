//! The temporary files and staging directories being written right now,
//! so that a process about to end without unwinding (a signal's grace
//! period ran out: the CLI calls [`remove_all`]) leaves none behind.
//!
//! One lock orders the two ends: a commit renames its file while holding
//! it, and [`remove_all`] removes every entry while holding it and keeps
//! it for good. So each write ends whole under its real name or not at
//! all, never as a stray `.memtally-*` entry, whichever comes first.

use std::ffi::CString;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::remove::remove_tree;

/// One entry being written: its directory (a descriptor of its own) and
/// its name there.
struct Entry {
    id: u64,
    dir: OwnedFd,
    name: CString,
}

struct Registry {
    next: u64,
    entries: Vec<Entry>,
    /// Set by [`remove_all`]: nothing may be installed any more.
    closed: bool,
}

static REGISTRY: Mutex<Registry> =
    Mutex::new(Registry { next: 0, entries: Vec::new(), closed: false });

fn lock() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A registered entry; dropping it forgets the entry (its owner has
/// installed or removed it).
pub(crate) struct Registered(u64);

/// Notes `name` in `dir` as being written. Without a descriptor of its
/// own for `dir` (none left), the entry simply goes unregistered: it is
/// still removed on every ordinary failure.
pub(crate) fn register(dir: std::os::fd::BorrowedFd<'_>, name: &CString) -> Registered {
    let Ok(dir) = dir.try_clone_to_owned() else { return Registered(u64::MAX) };
    let mut r = lock();
    let id = r.next;
    r.next += 1;
    r.entries.push(Entry { id, dir, name: name.clone() });
    Registered(id)
}

impl Registered {
    /// Runs `install` (the rename that gives the entry its real name)
    /// unless [`remove_all`] already ran, and forgets the entry. After
    /// `remove_all`, the entry is gone and `install` never runs: the
    /// error says the process is ending.
    pub(crate) fn install<T>(
        &self,
        install: impl FnOnce() -> std::io::Result<T>,
    ) -> std::io::Result<T> {
        let mut r = lock();
        if r.closed {
            return Err(std::io::Error::new(
                std::io::ErrorKind::Interrupted,
                "memtally is ending (a signal): not written",
            ));
        }
        let out = install();
        r.entries.retain(|e| e.id != self.0);
        out
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        let id = self.0;
        lock().entries.retain(|e| e.id != id);
    }
}

/// Removes every entry being written (files unlinked, staging
/// directories removed without following links) and lets no later write
/// be installed. For a process about to exit: call it last.
pub fn remove_all() {
    // A write stuck in its rename (a hung file system) holds the lock:
    // the process still ends, with that one entry left.
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(500);
    let mut r = loop {
        match REGISTRY.try_lock() {
            Ok(r) => break r,
            Err(std::sync::TryLockError::Poisoned(p)) => break p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(5))
            }
            Err(std::sync::TryLockError::WouldBlock) => return,
        }
    };
    r.closed = true;
    for e in r.entries.drain(..) {
        let _ = remove_tree(e.dir.as_fd(), &e.name);
    }
    // The lock stays taken: no write may be installed after this. (The
    // guard is forgotten, not dropped, so the mutex is never released.)
    std::mem::forget(r);
}
