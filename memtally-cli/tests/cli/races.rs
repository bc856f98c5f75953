//! memtally on a machine where processes come and go: a churn of short
//! processes while `top` and `show --tree` run. No crash, no error exit.

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::run;

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

#[test]
fn top_and_show_tree_survive_process_churn() {
    let mut shell = churn(3000, 6);
    let parent = shell.id().to_string();
    let stop = Arc::new(AtomicBool::new(false));
    let start = Instant::now();
    let (mut tops, mut shows) = (0, 0);
    let mut vanished_seen = 0u64;
    while start.elapsed() < Duration::from_secs(4) && !stop.load(Ordering::Relaxed) {
        let out = run(&["top", "--all", "--format", "json"]);
        assert!(out.status.success(), "top failed: {}", String::from_utf8_lossy(&out.stderr));
        let doc: serde_json::Value =
            serde_json::from_slice(&out.stdout).expect("top prints whole JSON");
        vanished_seen += doc["vanished"].as_u64().unwrap();
        assert!(doc["failed"].as_array().unwrap().is_empty(), "{}", doc["failed"]);
        tops += 1;
        let out = run(&["show", "--tree", &parent, "--format", "json"]);
        // The shell itself may have finished: then nothing is selected, which
        // is a clear "not found", never a crash.
        match out.status.code() {
            Some(0) => {
                let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
                assert!(doc["totals"]["size"].as_u64().unwrap() > 0);
            }
            Some(3) => stop.store(true, Ordering::Relaxed),
            other => {
                panic!("show --tree exited {other:?}: {}", String::from_utf8_lossy(&out.stderr))
            }
        }
        shows += 1;
    }
    let _ = shell.kill();
    let _ = shell.wait();
    assert!(tops >= 3 && shows >= 3, "ran {tops} tops and {shows} shows");
    eprintln!("{tops} top runs and {shows} show --tree runs under churn; {vanished_seen} processes vanished mid-scan");
}
