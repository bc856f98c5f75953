//! `watch --format perfetto` ended by SIGTERM, through the binary, on a
//! live child: what it printed is one whole JSON document (the trace
//! closed after the last sample) that the trace event format's schema
//! (testdata/schema/trace-event-format.json) accepts, with the child's
//! counters in every sample, and the status is 143. Folded stacks of
//! names with `;`, line breaks and terminal controls keep their frames
//! and carry nothing raw; a live child's touched memory is in its stack.
//! (The folded stacks and the trace on recorded trees, in process:
//! src/tests/interop.rs.)

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{copied_fixture, memtally, repo_path, run, spawn, Killed, Mapping, MIB};

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

/// `memtally ARGS`, which must succeed, as text.
fn text(args: &[&str]) -> String {
    let out = run(args);
    assert!(out.status.success(), "memtally {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn folded_frames_of_hostile_names_stay_whole_and_carry_nothing_raw() {
    let (_tmp, dir) = copied_fixture("python3-mmap");
    let pid = dir.join("11364");
    // The kernel writes a path's line break as `\\012`: no raw one in smaps.
    let hostile = "/usr/lib/a;bc\x1b[31md.so";
    for f in ["smaps", "maps"] {
        let text = std::fs::read_to_string(pid.join(f)).unwrap();
        let edited = text.replace("/usr/lib/x86_64-linux-gnu/libz.so.1.2.13", hostile);
        assert_ne!(text, edited, "{f} names libz");
        std::fs::write(pid.join(f), edited).unwrap();
    }
    std::fs::write(pid.join("cmdline"), "/bin/py;th\non\x1b]0;t\x07\0-c\0x\0").unwrap();
    let root = dir.to_str().unwrap();
    for (args, frames) in [
        (&["top", "--format", "folded"][..], 2),
        (&["snapshot", "--format", "folded", "--figure", "rss"], 4),
    ] {
        let folded = text(&[&["--proc-root", root][..], args].concat());
        assert!(!folded.is_empty(), "{args:?}");
        for bad in ['\x1b', '\x07', '\0'] {
            assert!(!folded.contains(bad), "{args:?}: raw {bad:?}: {folded}");
        }
        for line in folded.lines() {
            let (stack, count) = line.rsplit_once(' ').unwrap();
            assert!(count.parse::<u64>().is_ok(), "{line:?}");
            let stack: Vec<&str> = stack.split(';').collect();
            assert_eq!(stack.len(), frames, "{args:?}: {line:?}");
            assert_eq!(stack[0], "py:th\\non?]0:t?", "the program, escaped: {line:?}");
        }
        if frames == 4 {
            let want = "/usr/lib/a:bc?[31md.so";
            assert!(folded
                .lines()
                .any(|l| l.split(';').nth(3).is_some_and(|m| m.starts_with(want))));
        }
    }
}

#[test]
fn a_live_childs_touched_memory_is_in_its_folded_stacks() {
    let child = spawn(Mapping::Anonymous(8 * MIB));
    let pid = child.pid.to_string();
    let folded = text(&["snapshot", &pid, "--format", "folded", "--figure", "private_dirty"]);
    let anon: u64 = folded
        .lines()
        .filter(|l| l.split(';').nth(1) == Some(pid.as_str()))
        .filter(|l| l.split(';').nth(2).is_some_and(|c| c == "heap" || c == "anon_other"))
        .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
        .sum();
    assert!(anon >= 8 * MIB as u64, "8 MiB written, {anon} private dirty anonymous: {folded}");
    let top = text(&["top", "--pid", &pid, "--format", "folded", "--figure", "private_dirty"]);
    let line = top.lines().next().expect("one line");
    assert!(line.split(' ').next().unwrap().ends_with(&format!(";{pid}")), "{top}");
    let bytes: u64 = line.rsplit_once(' ').unwrap().1.parse().unwrap();
    assert!(bytes >= 8 * MIB as u64, "{top}");
}
