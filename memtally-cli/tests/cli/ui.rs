//! `memtally ui` in a real terminal: tmux at a fixed size, keys sent with
//! send-keys, screens read with capture-pane; a live child with a known
//! 64 MiB private mapping, and a recorded tree whose screens are exact.

use std::path::Path;

use crate::support::tmux::Tmux;
use crate::support::{repo, spawn, Mapping, MIB};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_memtally")
}

/// tmux, or a printed reason to skip (CI installs it: `.ci/run`).
fn tmux(width: u16, height: u16, dir: &Path) -> Option<Tmux> {
    if !Tmux::available() {
        eprintln!("skipped: tmux is not installed");
        return None;
    }
    Some(Tmux::start(width, height, dir))
}

/// The cells of the screen row that starts with `label` (after spaces).
fn row<'a>(screen: &'a str, label: &str) -> Vec<&'a str> {
    let line = screen
        .lines()
        .find(|l| l.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no row {label:?} on the screen:\n{screen}"));
    line.trim_start()[label.len()..].split_whitespace().collect()
}

/// The live child appears, is found with `/`, opens, and its heap
/// category reads 64.0M of private dirty memory.
#[test]
fn a_live_child_is_found_opened_and_its_heap_reads_64m() {
    let child = spawn(Mapping::Anonymous(64 * MIB));
    let Some(t) = tmux(80, 24, &repo()) else { return };
    t.line(&format!("{} ui", bin()));
    t.wait_text("machine (from meminfo)");
    t.keys(&["Enter"]);
    t.wait_text("PID     USER");
    t.text("/");
    t.text(&child.pid.to_string());
    t.keys(&["Enter"]);
    let pid = child.pid.to_string();
    let s = t.wait_for("the child's row alone", |s| {
        s.lines().filter(|l| l.trim_start().starts_with(&pid)).count() == 1
            && s.lines()
                .filter(|l| {
                    l.starts_with(' ')
                        && l.trim_start().chars().next().is_some_and(|c| c.is_ascii_digit())
                })
                .count()
                == 1
    });
    eprintln!("{s}");
    t.keys(&["Enter"]);
    let s = t.wait_text("heap / anon rw");
    eprintln!("{s}");
    let heap = row(&s, "heap / anon rw");
    assert_eq!(heap[0], "64.0M", "heap PRIV DIRTY:\n{s}");
}
