//! The explorer's process list: the command gets the room at 80 columns
//! (GROW/m and TREND go first), and no growth rate is shown before ten
//! samples of the same process.

use std::time::{Duration, Instant};

use crate::support::repo;
use crate::support::tmux::Tmux;

const RECORDED: &str = "testdata/fixtures/linux/python3-mmap/proc";

/// The live test's refresh interval: ten samples in five seconds.
const TICK: Duration = Duration::from_millis(500);

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_memtally")
}

/// The header line of the process level.
fn header(screen: &str) -> &str {
    screen.lines().find(|l| l.contains("PID USER")).unwrap_or("")
}

/// What `line` holds from the screen column where `head` shows `name`
/// (columns, not bytes: the sparkline's characters take three bytes).
fn from_column(line: &str, head: &str, name: &str) -> String {
    let at = head[..head.find(name).unwrap_or_else(|| panic!("a {name} column"))].chars().count();
    line.chars().skip(at).collect()
}

/// At 80 columns the command reads `python3 -c import mmap…` (it was
/// `pytho…`), without GROW/m and TREND; at 200 all of them show.
#[test]
fn the_command_gets_the_room_at_80_columns() {
    if !Tmux::available() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    for (w, h) in [(80, 24), (200, 50)] {
        let t = Tmux::start(w, h, &repo());
        t.line(&format!("{} --proc-root {RECORDED} ui --interval 1h", bin()));
        t.wait_text("machine (from meminfo)");
        t.keys(&["Enter"]);
        let s = t.wait_text("PID USER");
        let head = header(&s);
        let row = s.lines().find(|l| l.trim_start().starts_with("11364")).unwrap();
        let command = from_column(row, head, "COMMAND");
        if w == 80 {
            assert!(!head.contains("GROW/m") && !head.contains("TREND"), "{s}");
            assert!(command.starts_with("python3 -c import mmap"), "{s}");
        } else {
            assert!(head.contains("GROW/m") && head.contains("TREND"), "{s}");
            assert!(command.starts_with("python3 -c import mmap,time,json,sqlite3,os"), "{s}");
        }
        t.keys(&["q"]);
    }
}

/// A live child at a refresh every [`TICK`]: its GROW/m cell stays empty
/// for the first samples (r3-int printed a rate from the second), and
/// reads a rate from the tenth. (The rate counts samples, not seconds:
/// `ui::rates`; a short tick gives the same ten samples sooner.)
#[test]
fn no_rate_before_ten_samples() {
    if !Tmux::available() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    let child = crate::support::lone::lone(4 << 20);
    let pid = child.child.0.id().to_string();
    let t = Tmux::start(200, 50, &repo());
    let started = Instant::now();
    // A sample every tick whatever the machine's load: `--max-cpu 0`
    // (the default budget may space the list's reads out to several
    // seconds on a busy machine, and ten of them outlast the wait).
    t.line(&format!("{} ui --interval {}ms --max-cpu 0", bin(), TICK.as_millis()));
    t.wait_text("machine (from meminfo)");
    t.keys(&["Enter"]);
    t.wait_text("PID USER");
    t.text("/");
    t.wait_text("(Enter keeps, Esc clears)");
    t.text(&pid);
    t.keys(&["Enter"]);
    let grow = |s: &str| -> String {
        let row = s.lines().find(|l| l.trim_start().starts_with(&pid)).unwrap_or("");
        from_column(row, header(s), "GROW/m").chars().take(6).collect::<String>().trim().to_string()
    };
    let s = t.wait_for("the child's row", |s| s.lines().any(|l| l.trim_start().starts_with(&pid)));
    // Four ticks in: at most four samples, no rate.
    while started.elapsed() < TICK * 4 {
        std::thread::sleep(TICK / 5);
    }
    let s3 = t.screen();
    assert!(started.elapsed() < TICK * 9, "too slow a machine to tell");
    assert_eq!(grow(&s3), "", "a rate from a few samples:\n{s3}");
    let _ = s;
    // From the tenth sample: its rate (flat: the child does not grow).
    let s = t.wait_for("a rate", |s| !grow(s).is_empty());
    assert!(started.elapsed() >= TICK * 9, "a rate before ten samples:\n{s}");
    t.keys(&["q"]);
}
