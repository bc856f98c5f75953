//! SIGINT, SIGTERM and SIGHUP, once for every command: the first one is
//! noted ([`received`]) for the command's loops to end on, and a command
//! that does not end within [`GRACE`] is ended for it; a second signal
//! ends the process at once. Either way the exit status is 128 + the
//! signal's number (130, 143, 129), as a shell reports a process killed
//! by it, so `timeout`, systemd and CI read it the same.
//!
//! Why not the default action: it kills in the middle of a write, and a
//! file being written (`watch -o`, a capture) would be left as its
//! temporary file while the samples taken are lost. Why not a flag
//! alone: a command that never looks at it (one long read) would not
//! end. A command in the middle of keeping a promise holds a
//! [`Finishing`] guard, and is not ended for it until it drops it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use crate::exit;

/// How long a command has, after the first signal, to end by itself.
pub const GRACE: Duration = Duration::from_secs(1);

/// How often a waiting loop looks at [`received`]: well inside [`GRACE`].
pub const STEP: Duration = Duration::from_millis(50);

/// The first signal's number, 0 before one came.
static RECEIVED: AtomicUsize = AtomicUsize::new(0);

/// Live [`Finishing`] guards.
static FINISHING: AtomicUsize = AtomicUsize::new(0);

/// Run before the process is ended for a command (the explorer puts the
/// terminal back).
static BEFORE_EXIT: Mutex<Option<fn()>> = Mutex::new(None);

/// Takes SIGINT, SIGTERM and SIGHUP for the rest of the process (see the
/// module docs). Called once, by `main`, before any command runs.
pub fn install() -> std::io::Result<()> {
    let mut signals = Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    // Every other thread (this one, and all it starts from now on) blocks
    // the three, so the kernel hands them to the signal thread alone: a
    // thread stuck in a read that never returns (a hung mount) would
    // otherwise take the signal and never run its handler.
    mask(libc::SIG_BLOCK)?;
    std::thread::Builder::new().name("signals".into()).spawn(move || {
        if mask(libc::SIG_UNBLOCK).is_err() {
            return;
        }
        let Some(first) = signals.forever().next() else { return };
        RECEIVED.store(first as usize, Ordering::SeqCst);
        let deadline = Instant::now() + GRACE;
        loop {
            if let Some(second) = signals.pending().next() {
                end(second);
            }
            if Instant::now() >= deadline && FINISHING.load(Ordering::SeqCst) == 0 {
                end(first);
            }
            std::thread::sleep(STEP);
        }
    })?;
    Ok(())
}

/// Blocks or unblocks (`how`) SIGINT, SIGTERM and SIGHUP in this thread.
/// (A program memtally runs starts with none blocked: std's `Command`
/// clears the mask in the child.)
fn mask(how: libc::c_int) -> std::io::Result<()> {
    // SAFETY: a sigset_t of our own, filled by sigemptyset/sigaddset
    // before pthread_sigmask reads it; the old mask is not asked for.
    let rc = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            libc::sigaddset(&mut set, sig);
        }
        libc::pthread_sigmask(how, &set, std::ptr::null_mut())
    };
    match rc {
        0 => Ok(()),
        e => Err(std::io::Error::from_raw_os_error(e)),
    }
}

/// Ends the process for `signal`, from the signal thread.
fn end(signal: i32) -> ! {
    if let Some(before) = *BEFORE_EXIT.lock().unwrap_or_else(std::sync::PoisonError::into_inner) {
        before();
    }
    // Ended from outside, mid-write perhaps: no temporary file or staging
    // directory may stay behind (the write in progress is lost whole).
    memtally_core::write::remove_unfinished();
    std::process::exit(exit_code(signal));
}

/// The signal that came first, if one has.
pub fn received() -> Option<i32> {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => None,
        n => Some(n as i32),
    }
}

/// Set by [`whole`].
static WHOLE: AtomicUsize = AtomicUsize::new(0);

/// Said by a command that made its whole output (a capture that recorded
/// every process, an export that wrote its file) although a signal may
/// have come meanwhile: it exits 0, not 128 + the signal's number, as it
/// did what it was asked to within the signal's grace.
pub fn whole() {
    WHOLE.store(1, Ordering::SeqCst);
}

/// The signal a command was stopped by: the first one, unless the
/// command said its output is [`whole`].
pub fn stopped_by() -> Option<i32> {
    received().filter(|_| WHOLE.load(Ordering::SeqCst) == 0)
}

/// The exit status for a command ended by `signal`.
pub fn exit_code(signal: i32) -> i32 {
    exit::SIGNAL_BASE + signal
}

/// Sleeps until `deadline` in [`STEP`]s; false when a signal came first.
pub fn sleep_until(deadline: Instant) -> bool {
    while received().is_none() {
        let now = Instant::now();
        if now >= deadline {
            return true;
        }
        std::thread::sleep((deadline - now).min(STEP));
    }
    false
}

/// `f` runs before the process is ended after a signal (at most one: a
/// later call replaces it; `None` removes it).
#[cfg(feature = "ui")] // the explorer is its only user
pub fn before_exit(f: Option<fn()>) {
    *BEFORE_EXIT.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = f;
}

/// While one lives, a signal does not end the process from outside
/// (only a second signal does): the holder is keeping a promise (a watch
/// committing its samples and printing its summary) and ends by itself.
/// One still held when the signal came is never let go: what follows it
/// (the command's last lines, `main` flushing them) is the same promise,
/// and ending the process between the guard and `main` would cut it.
pub struct Finishing(());

impl Finishing {
    pub fn hold() -> Finishing {
        FINISHING.fetch_add(1, Ordering::SeqCst);
        Finishing(())
    }
}

impl Drop for Finishing {
    fn drop(&mut self) {
        if received().is_none() {
            FINISHING.fetch_sub(1, Ordering::SeqCst);
        }
    }
}
