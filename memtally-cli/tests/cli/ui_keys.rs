//! The explorer answers a key within 100 ms while it reads a process of
//! 100,000 and of 500,000 mappings (whose full smaps take the kernel
//! seconds to write): the reads run on a thread of their own. Measured
//! end to end, from tmux's send-keys to the screen tmux captures.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::lone::build;
use crate::support::tmux::Tmux;
use crate::support::{repo, Killed};

/// A C program that makes `argv[1]` one-page anonymous mappings it never
/// touches (no memory resident), alternately readable and not so the
/// kernel cannot merge them: that many lines in its smaps, each costing
/// the kernel a walk, at no cost in memory.
const SPARSE_C: &str = r#"
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 0;
    for (long i = 0; i < n; i++) {
        int prot = i % 2 ? PROT_READ : PROT_NONE;
        if (mmap(0, 4096, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED) return 1;
    }
    if (write(1, "ready\n", 6) != 6) return 1;
    for (;;) pause();
}
"#;

const MAP_COUNT: &str = "/proc/sys/vm/max_map_count";

/// `vm.max_map_count` raised to allow `need` mappings, and put back as it
/// was on drop (the default 65,530 allows fewer).
struct MapCount(Option<String>);

impl MapCount {
    fn allow(need: u64) -> Option<MapCount> {
        let was = std::fs::read_to_string(MAP_COUNT).ok()?;
        if was.trim().parse::<u64>().ok()? >= need {
            return Some(MapCount(None));
        }
        match std::fs::write(MAP_COUNT, need.to_string()) {
            Ok(()) => Some(MapCount(Some(was))),
            Err(e) => {
                eprintln!("skipped: cannot raise vm.max_map_count to {need}: {e}");
                None
            }
        }
    }
}

impl Drop for MapCount {
    fn drop(&mut self) {
        if let Some(was) = &self.0 {
            let _ = std::fs::write(MAP_COUNT, was.trim());
        }
    }
}

struct Sparse {
    child: Killed,
    _dir: tempfile::TempDir,
}

fn sparse(mappings: usize) -> Sparse {
    let (dir, exe) = build("sparse", SPARSE_C);
    let mut child =
        Command::new(&exe).arg(mappings.to_string()).stdout(Stdio::piped()).spawn().unwrap();
    let mut ready = [0u8; 6];
    child.stdout.as_mut().unwrap().read_exact(&mut ready).unwrap();
    assert_eq!(&ready, b"ready\n", "the child made its {mappings} mappings");
    Sparse { child: Killed(child), _dir: dir }
}

/// How long the screen takes to show what `ok` checks after `key` is sent,
/// polled as fast as tmux answers.
fn answer(t: &Tmux, key: &str, ok: impl Fn(&str) -> bool) -> Duration {
    let start = Instant::now();
    t.keys(&[key]);
    loop {
        if ok(&t.screen()) {
            return start.elapsed();
        }
        assert!(start.elapsed() < Duration::from_secs(30), "no answer to {key}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Opens the child's categories (each refresh reads its full smaps) and
/// times `?` (the keys box) and the key that closes it, ten times each:
/// the median answer is within 100 ms, tmux's own round trip included
/// (20-70 ms on a loaded 2-core machine), and none takes 2 s; before the
/// reads had a thread, each key waited for the read in flight (4-12 s at
/// 100,000 mappings).
fn keys_answered_while_reading(mappings: usize, width: u16, height: u16) {
    if !Tmux::available() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    // One at a time: each raises and puts back the limit, and each child
    // costs the kernel its mappings.
    static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let Some(_limit) = MapCount::allow(mappings as u64 + 1000) else { return };
    let child = sparse(mappings);
    let pid = child.child.0.id();
    let t = Tmux::start(width, height, &repo());
    // Refreshed as often as it can: a read is always in flight.
    t.line(&format!("{} ui --interval 100ms", env!("CARGO_BIN_EXE_memtally")));
    t.wait_text("machine (from meminfo)");
    t.keys(&["Enter"]);
    t.wait_text("PID USER");
    t.text("/");
    t.wait_text("(Enter keeps, Esc clears)");
    t.text(&pid.to_string());
    t.keys(&["Enter"]);
    t.wait_for("the child's row alone", |s| {
        s.lines().filter(|l| l.trim_start().starts_with(&pid.to_string())).count() == 1
    });
    t.keys(&["Enter"]);
    // Its first full read (longer than tmux's wait on a loaded machine:
    // the reads yield to everything else), then keys while the next run.
    let start = Instant::now();
    while !t.screen().lines().any(|l| l.starts_with("total ")) {
        assert!(start.elapsed() < Duration::from_secs(180), "no categories:\n{}", t.screen());
        std::thread::sleep(Duration::from_millis(100));
    }
    let mut times = Vec::new();
    for _ in 0..10 {
        times.push(answer(&t, "?", |s| s.contains("cycle the sort")));
        times.push(answer(&t, "x", |s| !s.contains("cycle the sort")));
        std::thread::sleep(Duration::from_millis(137));
    }
    let ms: Vec<u128> = times.iter().map(|d| d.as_millis()).collect();
    eprintln!("{mappings} mappings, {width}x{height}: keys answered in {ms:?} ms");
    let mut sorted = times.clone();
    sorted.sort();
    let median = sorted[sorted.len() / 2];
    let slowest = sorted[sorted.len() - 1];
    // The median, not every key: on this loaded 2-core machine some runs
    // have had a few keys of 20 take 0.2-1.3 s with the reads on their own
    // thread (not explained yet; see docs/benchmarks.md). With the reads
    // on the UI thread every key took 4-12 s at 100,000 mappings.
    assert!(
        median <= Duration::from_millis(100) && slowest < Duration::from_secs(2),
        "keys took {median:?} (median), {slowest:?} (slowest), while {mappings} mappings were read (all: {ms:?} ms)"
    );
    t.keys(&["q"]);
}

#[test]
fn a_key_is_answered_while_100k_mappings_are_read_80x24() {
    keys_answered_while_reading(100_000, 80, 24);
}

#[test]
fn a_key_is_answered_while_500k_mappings_are_read_200x50() {
    keys_answered_while_reading(500_000, 200, 50);
}

#[test]
fn a_key_is_answered_while_500k_mappings_are_read_80x24() {
    keys_answered_while_reading(500_000, 80, 24);
}
