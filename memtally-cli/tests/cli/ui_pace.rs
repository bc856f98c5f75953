//! `ui --max-cpu`: where reading the process list costs more than the
//! share of a core asked, the list is read less often and the title says
//! how often; with 0 it is read every refresh, and the title says nothing.

use std::time::{Duration, Instant};

use crate::support::repo;
use crate::support::tmux::Tmux;

/// The title line.
fn title(t: &Tmux) -> String {
    t.screen().lines().next().unwrap_or("").to_string()
}

#[test]
fn a_dear_list_is_read_less_often_and_the_title_says_so() {
    if !Tmux::available() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    for (w, h) in [(80, 24), (200, 50)] {
        let t = Tmux::start(w, h, &repo());
        // A thousandth of a percent: any live machine's list costs more.
        t.line(&format!("{} ui --interval 200ms --max-cpu 0.001", env!("CARGO_BIN_EXE_memtally")));
        let s = t.wait_text("· list every");
        assert!(title(&t).contains("· list every"), "{w}x{h}:\n{s}");
        t.keys(&["q"]);
        let t = Tmux::start(w, h, &repo());
        t.line(&format!("{} ui --interval 200ms --max-cpu 0", env!("CARGO_BIN_EXE_memtally")));
        t.wait_text("machine (from meminfo)");
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(3) {
            assert!(!title(&t).contains("list every"), "{w}x{h}: {}", title(&t));
            std::thread::sleep(Duration::from_millis(200));
        }
        t.keys(&["q"]);
    }
}

#[test]
fn max_cpu_takes_a_percentage() {
    let out = crate::support::memtally().args(["ui", "--max-cpu", "150"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("not a percentage from 0 to 100"), "{e}");
}
