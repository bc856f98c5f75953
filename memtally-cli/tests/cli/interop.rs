//! `watch --format perfetto` ended by SIGTERM, through the binary, on a
//! live child: what it printed is one whole JSON document (the trace
//! closed after the last sample) that the trace event format's schema
//! (testdata/schema/trace-event-format.json) accepts, with the child's
//! counters in every sample, and the status is 143. (The folded stacks
//! and the trace on recorded trees, in process: src/tests/interop.rs.)

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{memtally, repo_path, spawn, Killed, Mapping, MIB};

#[test]
fn watch_perfetto_trace_is_whole_after_sigterm() {
    let child = spawn(Mapping::Anonymous(4 * MIB));
    let pid = child.pid.to_string();
    let args = ["watch", &pid, "--interval", "100ms", "--no-categories", "--format", "perfetto"];
    let mut watch = Killed(
        memtally()
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("memtally starts"),
    );
    let out = watch.0.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            if tx.send(line.unwrap_or_default()).is_err() {
                return;
            }
        }
    });
    // Lines until the third sample's first counter: two samples written whole.
    let mut lines: Vec<String> = Vec::new();
    let mut times = std::collections::BTreeSet::new();
    let t = Instant::now();
    while times.len() < 3 {
        let left = Duration::from_secs(20).saturating_sub(t.elapsed());
        let line = rx.recv_timeout(left).unwrap_or_else(|_| panic!("no third sample: {lines:?}"));
        if let Some(at) = line.split("\"ts\":").nth(1) {
            times.insert(at.split(',').next().unwrap_or_default().to_string());
        }
        lines.push(line);
    }
    assert_eq!(unsafe { libc::kill(watch.0.id() as i32, libc::SIGTERM) }, 0);
    let t = Instant::now();
    let status = loop {
        if let Some(s) = watch.0.try_wait().unwrap() {
            break s;
        }
        assert!(t.elapsed() < Duration::from_secs(10), "watch still running 10 s after SIGTERM");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(status.code(), Some(128 + libc::SIGTERM), "{status:?}");
    // The reader ends with the pipe: the rest of what was printed.
    while let Ok(line) = rx.recv_timeout(Duration::from_secs(10)) {
        lines.push(line);
    }
    let text = lines.join("\n");
    let doc: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("not one JSON document after SIGTERM ({e}): …{}", tail(&text)));
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(repo_path("testdata/schema/trace-event-format.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    let events = doc["traceEvents"].as_array().unwrap();
    let pss: Vec<u64> = events
        .iter()
        .filter(|e| e["ph"] == "C" && e["pid"] == child.pid && e["name"] == "pss")
        .map(|e| e["args"]["bytes"].as_u64().unwrap())
        .collect();
    assert!(pss.len() >= 2, "the child's PSS in each sample: {pss:?}");
    assert!(pss.iter().all(|b| *b >= 4 * MIB as u64), "its 4 MiB touched are in its PSS: {pss:?}");
    let named = events.iter().any(|e| e["ph"] == "M" && e["pid"] == child.pid);
    assert!(named, "the child's track is named");
}

fn tail(text: &str) -> &str {
    &text[text.len().saturating_sub(300)..]
}
