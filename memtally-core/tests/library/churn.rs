//! The library on a machine where processes come and go: a churn of short
//! processes while `top` reads every process and `show` of a selection reads a
//! tree whose members exit under it. Each read returns a whole report or
//! says the tree is gone; nothing fails in any other way. (The command
//! line only maps these results to output and exit codes.)

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::shown::show_many;
use memtally_core::usecase::top;
use memtally_core::{Error, ProcRoot, SelectOptions, ShowOptions, Silent, TopOptions};

/// Starts a shell that keeps forking short-lived children (bounded: at
/// most `total` of them, and it stops itself after `secs`).
fn churn(total: usize, secs: u64) -> std::process::Child {
    let script = format!(
        "end=$(( $(date +%s) + {secs} )); n=0; while [ $n -lt {total} ] && [ $(date +%s) -lt $end ]; do \
         for i in 1 2 3 4 5 6 7 8 9 10; do (sleep 0.0$i; :) & done; n=$((n+10)); sleep 0.01; done; wait"
    );
    Command::new("sh")
        .args(["-c", &script])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Whether `e` says the tree is gone: its root was not there, or every
/// process of it exited or changed before it was read.
fn tree_gone(e: &Error) -> bool {
    matches!(
        e,
        Error::NoSuchProcess { .. }
            | Error::NoMatch { .. }
            | Error::NotFound(_)
            | Error::Exited { .. }
            | Error::Changed { .. }
            | Error::Unsteady { .. }
    )
}

#[test]
fn top_and_show_of_a_tree_survive_process_churn() {
    // The churn lasts as long as the reads need (stopped below; it stops
    // itself after a minute if the test does not get there).
    let mut shell = churn(60_000, 60);
    let root = ProcRoot::live();
    let tree = SelectOptions::default().with_trees(vec![shell.id()]).resolve().unwrap();
    // Every row kept, as the command line's `top` does when asked for all.
    let every_process = TopOptions::default().with_top(None).with_every_identity(true);
    let start = Instant::now();
    let (mut tops, mut shows, mut vanished_seen) = (0, 0, 0);
    // Four seconds of reads, and at least three of each: on a loaded
    // machine (the whole suite at once) one read of every process can take
    // over a second.
    let enough = |tops: usize| start.elapsed() >= Duration::from_secs(4) && tops >= 3;
    while !enough(tops) && start.elapsed() < Duration::from_secs(50) {
        let read = top::top(&root, &every_process, &Silent)
            .unwrap_or_else(|e| panic!("top under churn failed: {e:?}"));
        assert!(read.scan.failed.is_empty(), "{:?}", read.scan.failed);
        assert!(!read.report.rows.is_empty(), "top under churn listed nobody");
        vanished_seen += read.scan.vanished;
        tops += 1;
        shows += 1;
        match show_many(&root, &tree, &ShowOptions::default()) {
            Ok(report) => {
                assert!(!report.processes.is_empty(), "a whole report of nothing");
                assert!(report.totals.size.unwrap_or(0) > 0, "{:?}", report.totals);
            }
            // The shell itself finished: nothing is selected, which is a
            // clear "not found", never a failure of another kind.
            Err(e) if tree_gone(&e) => break,
            Err(e) => panic!("show of the tree under churn: {e:?}"),
        }
    }
    let _ = shell.kill();
    let _ = shell.wait();
    assert!(tops >= 3 && shows >= 3, "ran {tops} tops and {shows} shows");
    eprintln!("{tops} top reads and {shows} tree shows under churn; {vanished_seen} processes vanished mid-scan");
}
