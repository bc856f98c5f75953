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
    let bin = env!("CARGO_BIN_EXE_memtally");
    for (w, h) in [(80, 24), (200, 50)] {
        let t = Tmux::start(w, h, &repo());
        // A thousandth of a percent: any live machine's list costs more.
        t.line(&format!("{bin} ui --interval 200ms --max-cpu 0.001"));
        let s = t.wait_text("· list every");
        assert!(title(&t).contains("· list every"), "{w}x{h}:\n{s}");
        t.keys(&["q"]);
    }
    // With 0, both sizes watched at once for three seconds (fifteen
    // refreshes each): the title never says it.
    let sized: Vec<((u16, u16), Tmux)> = [(80, 24), (200, 50)]
        .into_iter()
        .map(|(w, h)| {
            let t = Tmux::start(w, h, &repo());
            t.line(&format!("{bin} ui --interval 200ms --max-cpu 0"));
            ((w, h), t)
        })
        .collect();
    for (_, t) in &sized {
        t.wait_text("machine (from meminfo)");
    }
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(3) {
        for ((w, h), t) in &sized {
            assert!(!title(t).contains("list every"), "{w}x{h}: {}", title(t));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    for (_, t) in &sized {
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
