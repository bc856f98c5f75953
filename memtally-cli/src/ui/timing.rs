//! A log of how long the explorer itself takes to answer each key, for
//! the tests and benchmarks (`MEMTALLY_UI_TIMING=FILE`; off otherwise).
//! A test timing keys through tmux sees tmux's own delays too (its
//! client, its server and the capture, each waiting for a core on a
//! loaded machine); this log holds only what memtally controls, on the
//! clock a test can read as well (CLOCK_MONOTONIC).
//!
//! One line per key: `key read_ns=R drawn_ns=D busy_us=B`: when the key
//! was read, when the screen that answers it was written to the terminal,
//! and how long the loop was busy (not waiting for keys) just before the
//! wait that gave the key (a key that came meanwhile waited that long at
//! most). `D - R + B` bounds the time from the key's arrival to its answer.

use std::fs::File;
use std::io::Write;
use std::time::Instant;

/// Nanoseconds on CLOCK_MONOTONIC (the clock of `Instant`, shared by
/// every process on the machine).
pub fn monotonic_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// The log, and the key read and not answered on screen yet.
pub struct Timing {
    file: Option<File>,
    /// When the last wait for keys ended.
    waited: Instant,
    /// How long the loop was busy before the current wait began.
    busy_us: u128,
    /// The first key not drawn yet: when it was read, the busy time before it.
    pending: Option<(u64, u128)>,
}

impl Timing {
    /// The log `MEMTALLY_UI_TIMING` names, when set and writable.
    pub fn from_env() -> Timing {
        let file = std::env::var_os("MEMTALLY_UI_TIMING").and_then(|p| File::create(p).ok());
        Timing { file, waited: Instant::now(), busy_us: 0, pending: None }
    }

    /// The loop begins to wait for keys.
    pub fn waiting(&mut self) {
        self.busy_us = self.waited.elapsed().as_micros();
    }

    /// The wait ended (a key, or the wait's end).
    pub fn waited(&mut self) {
        self.waited = Instant::now();
    }

    /// A key was read.
    pub fn key(&mut self) {
        if self.file.is_some() && self.pending.is_none() {
            self.pending = Some((monotonic_ns(), self.busy_us));
        }
    }

    /// A screen was written to the terminal: it answers the key pending.
    pub fn drawn(&mut self) {
        let (Some(file), Some((read, busy))) = (&mut self.file, self.pending.take()) else {
            return;
        };
        let _ = writeln!(file, "key read_ns={read} drawn_ns={} busy_us={busy}", monotonic_ns());
    }
}
