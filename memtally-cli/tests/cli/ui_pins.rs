//! The explorer's `x` key (issue 22 item 7): a pinned row gets EXCL (the
//! bytes no other process maps, as `top --exact`) and WSET (the working
//! set over each refresh, as `wss`), checked in tmux against an
//! exec'd C child (one a size) that wrote 32 MiB and keeps touching 8 MiB of them; the
//! footer says once that the referenced bits are reset; a recorded tree
//! says in one line that these figures are live-only.

use std::time::{Duration, Instant};

use crate::support::lone::toucher;
use crate::support::repo;
use crate::support::tmux::Tmux;

const MIB: u64 = 1 << 20;
const SIZES: [(u16, u16); 2] = [(80, 24), (200, 50)];

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_memtally")
}

/// Bytes of a size as the tables print it (`32.3M`, `512K`, `0`).
fn bytes(cell: &str) -> Option<u64> {
    let (num, unit) = cell.split_at(cell.find(|c: char| c.is_ascii_alphabetic())?);
    let mult = match unit {
        "K" => 1u64 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        _ => return None,
    };
    Some((num.parse::<f64>().ok()? * mult as f64) as u64)
}

/// The cell of `row` under the right-aligned header `name`: the word
/// that ends where the header's name ends.
fn cell(head: &str, row: &str, name: &str) -> String {
    let end = head.find(&format!(" {name}")).unwrap_or_else(|| panic!("a {name} column: {head}"))
        + name.len()
        + 1;
    let upto: String = row.chars().take(end).collect();
    upto.split_whitespace().last().unwrap_or("").to_string()
}

/// The process list of just `pid`.
fn open_on(t: &Tmux, pid: u32) {
    t.line(&format!("{} ui --interval 500ms", bin()));
    t.wait_text("machine (from meminfo)");
    t.keys(&["Enter"]);
    t.wait_text("PID USER");
    t.text("/");
    t.text(&pid.to_string());
    t.keys(&["Enter"]);
    t.wait_for("the child's row alone", |s| {
        s.lines().filter(|l| l.trim_start().starts_with(&format!("{pid} "))).count() == 1
    });
}

#[test]
fn a_pinned_row_shows_its_exclusive_bytes_and_working_set() {
    if !Tmux::available() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: EXCL needs root (page frame numbers)");
        return;
    }
    // Both sizes at once, each on a child of its own (a pin resets the
    // referenced bits of its process only).
    std::thread::scope(|s| {
        for (w, h) in SIZES {
            s.spawn(move || pinned_at(w, h));
        }
    });
}

/// [`a_pinned_row_shows_its_exclusive_bytes_and_working_set`] at `w`x`h`.
fn pinned_at(w: u16, h: u16) {
    let child = toucher(32 * MIB as usize, 8 * MIB as usize, 0);
    let pid = child.pid();
    let t = Tmux::start(w, h, &repo());
    open_on(&t, pid);
    t.keys(&["x"]);
    // The warning, once: the reset is not free.
    let s = t.wait_text("resets the referenced bits of 1 pinned process");
    assert!(s.contains("EXCL") && s.contains("WSET"), "{w}x{h}:\n{s}");
    // A few refreshes: the working set covers a whole interval.
    let start = Instant::now();
    let (head, row) = loop {
        let s = t.screen();
        let head = s.lines().find(|l| l.contains("PID USER")).unwrap_or("").to_string();
        let row = s
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{pid} ")))
            .unwrap_or("")
            .to_string();
        if bytes(&cell(&head, &row, "WSET")).is_some() && start.elapsed() > Duration::from_secs(2) {
            break (head, row);
        }
        assert!(start.elapsed() < Duration::from_secs(60), "{w}x{h}: no WSET:\n{s}");
        std::thread::sleep(Duration::from_millis(200));
    };
    let excl = bytes(&cell(&head, &row, "EXCL")).unwrap();
    let wset = bytes(&cell(&head, &row, "WSET")).unwrap();
    // Its 32 MiB are its own, with its stack, heap and the C library's
    // private pages; every dirty byte is in the working set, with the
    // clean file pages (its code) touched.
    assert!((32 * MIB..36 * MIB).contains(&excl), "{w}x{h} EXCL {excl}:\n{head}\n{row}");
    assert!((32 * MIB..36 * MIB).contains(&wset), "{w}x{h} WSET {wset}:\n{head}\n{row}");
    // The command keeps its room at 80 columns.
    assert!(row.contains("toucher"), "{w}x{h}: {row}");
    // x again unpins: the columns go.
    t.keys(&["x"]);
    t.wait_for("the columns gone", |s| !s.contains("WSET"));
    t.keys(&["q"]);
}

/// On a recorded tree the figures are live-only: one line says so, and
/// the row shows `-`, never a zero.
#[test]
fn a_recorded_tree_says_the_pinned_figures_are_live_only() {
    if !Tmux::available() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    for (w, h) in SIZES {
        let t = Tmux::start(w, h, &repo());
        t.line(&format!(
            "{} --proc-root testdata/fixtures/linux/python3-mmap/proc ui --interval 1h",
            bin()
        ));
        t.wait_text("machine (from meminfo)");
        t.keys(&["Enter"]);
        t.wait_text("11364 root");
        t.keys(&["x"]);
        t.wait_text("EXCL");
        // Another key clears the status line: the pinned rows' note shows.
        t.keys(&["j"]);
        let s = t.wait_text("live");
        let row = s.lines().find(|l| l.trim_start().starts_with("11364 ")).unwrap();
        let head = s.lines().find(|l| l.contains("PID USER")).unwrap();
        assert_eq!(cell(head, row, "EXCL"), "-", "{w}x{h}:\n{s}");
        t.keys(&["q"]);
    }
}
