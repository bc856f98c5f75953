//! What the explorer's screens say, at 80x24 and 200x50: the keys box
//! holds every key inside its border, the title counts what the filter
//! shows, an exited process is marked in words (not only grey), the
//! machine level lists as many processes as it has room for, and "used"
//! is defined as `machine` and `top` define it.

use crate::support::repo;
use crate::support::tmux::Tmux;

const RECORDED: &str = "testdata/fixtures/linux/python3-mmap/proc";
const SIZES: [(u16, u16); 2] = [(80, 24), (200, 50)];

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_memtally")
}

fn tmux(w: u16, h: u16) -> Option<Tmux> {
    if !Tmux::available() {
        eprintln!("skipped: tmux is not installed");
        return None;
    }
    Some(Tmux::start(w, h, &repo()))
}

fn on_recorded(t: &Tmux) {
    t.line(&format!("{} --proc-root {RECORDED} ui --interval 1h", bin()));
    t.wait_for("the machine screen", |s| {
        s.contains("machine (from meminfo)") && s.contains("unexplained")
    });
}

/// The keys box: every key of the help at the start of a line inside
/// the border, each line closed by the border (nothing wraps to column 0).
#[test]
fn the_keys_box_lists_every_key_inside_its_border() {
    let keys = [
        "Enter / →",
        "Esc / Backspace / ←",
        "↑ ↓ PgUp",
        "/ ",
        "s ",
        "g ",
        "x ",
        "w ",
        "? ",
        "q / Ctrl-C",
    ];
    for (w, h) in SIZES {
        let Some(t) = tmux(w, h) else { return };
        on_recorded(&t);
        t.keys(&["?"]);
        let s = t.wait_text("└");
        let lines: Vec<&str> = s.lines().collect();
        let top = lines.iter().position(|l| l.contains("┌keys")).expect("the box");
        let bottom = lines.iter().position(|l| l.contains("└")).unwrap();
        // The box's columns (it is centred; the screen shows beside it).
        let left = lines[top].chars().position(|c| c == '┌').unwrap();
        let width = lines[top].chars().skip(left).take_while(|&c| c != '┐').count() + 1;
        let inside: Vec<String> = lines[top + 1..bottom]
            .iter()
            .map(|l| l.chars().skip(left).take(width).collect())
            .collect();
        for line in &inside {
            assert!(line.starts_with('│') && line.ends_with('│'), "{w}x{h}: {line:?}\n{s}");
        }
        for k in keys {
            assert!(
                inside.iter().any(|l| l.trim_start_matches('│').starts_with(k)),
                "{w}x{h}: key {k:?} not in the box:\n{s}"
            );
        }
        t.keys(&["q"]);
        t.keys(&["q"]);
    }
}

/// With a filter, the title counts what it shows of all (`0 of 1 process`).
#[test]
fn the_title_counts_what_the_filter_shows() {
    for (w, h) in SIZES {
        let Some(t) = tmux(w, h) else { return };
        on_recorded(&t);
        t.keys(&["Enter"]);
        t.wait_text("PID USER");
        t.text("/");
        t.wait_text("(Enter keeps, Esc clears)");
        t.text("nothing-by-this-name");
        t.keys(&["Enter"]);
        t.wait_text("memtally ui · 0 of 1 process · by process");
        t.keys(&["Escape"]);
        t.wait_text("memtally ui · 1 process · by process");
        t.keys(&["q"]);
    }
}

/// "used" is what `machine` says it is (one wording), not "as htop says".
#[test]
fn used_is_defined_as_machine_defines_it() {
    let Some(t) = tmux(200, 50) else { return };
    on_recorded(&t);
    let s = t.screen();
    let used = s.lines().find(|l| l.trim_start().starts_with("used ")).unwrap();
    assert!(used.contains("MemTotal - MemAvailable, as free(1) prints it"), "{s}");
    assert!(!s.contains("htop"), "{s}");
    let machine = crate::support::memtally()
        .current_dir(repo())
        .args(["--proc-root", RECORDED, "machine"])
        .output()
        .unwrap();
    let machine = String::from_utf8_lossy(&machine.stdout);
    assert!(machine.contains("MemTotal - MemAvailable, as free(1) prints it"), "{machine}");
}

/// On the live machine, "largest processes" fills the room below the
/// picture: more than 5 rows at 200x50 (there are more processes), each
/// one line.
#[test]
fn largest_processes_fill_the_height() {
    let Some(t) = tmux(200, 50) else { return };
    t.line(&format!("{} ui", bin()));
    let s = t.wait_for("the processes", |s| {
        s.lines()
            .skip_while(|l| !l.starts_with("largest processes"))
            .nth(1)
            .is_some_and(|l| !l.is_empty())
    });
    let rows = s
        .lines()
        .skip_while(|l| !l.starts_with("largest processes"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .count();
    let processes = std::fs::read_dir("/proc")
        .unwrap()
        .filter(|e| {
            e.as_ref().is_ok_and(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
        })
        .count();
    assert!(processes > 10 && rows > 5, "{rows} rows of {processes} processes:\n{s}");
    t.keys(&["q"]);
}

/// At 80 columns, where the command is cut, an exited process still
/// reads `(exited)`.
#[test]
fn an_exited_process_is_marked_at_80_columns() {
    let Some(t) = tmux(80, 24) else { return };
    let child = crate::support::lone::lone(1 << 20);
    let pid = child.child.0.id().to_string();
    t.line(&format!("{} ui --interval 300ms", bin()));
    t.wait_text("machine (from meminfo)");
    t.keys(&["Enter"]);
    t.wait_text("PID USER");
    t.text("/");
    t.wait_text("(Enter keeps, Esc clears)");
    t.text("lone");
    t.keys(&["Enter"]);
    t.wait_for("the child's row", |s| s.lines().any(|l| l.trim_start().starts_with(&pid)));
    drop(child);
    let s = t.wait_for("the exited marker", |s| {
        s.lines().any(|l| l.trim_start().starts_with(&pid) && l.contains("(exited)"))
    });
    let line = s.lines().find(|l| l.trim_start().starts_with(&pid)).unwrap();
    assert!(line.chars().count() <= 80, "{line}");
    t.keys(&["q"]);
}
