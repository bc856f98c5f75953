//! `snapshot --exact` and `diff` of such snapshots, on a live exec'd C
//! child that writes known bytes: each process's exclusive figure is
//! stored (its USS, and the few file pages only memtally shared with it),
//! the diff of two shows the bytes the child wrote in between, to the
//! byte; against a snapshot without the figures, a note says which lacks
//! them; a recording is live only; without the privilege, one line and
//! no file of zeros. `snapshot --wss`: the working set of a child that
//! wrote its bytes and waits (dirty and cold), and diff's deltas of it.

use serde_json::Value;

use crate::pages::frames_readable;
use crate::support::lone::spawn_grower;
use crate::support::{python_root_path, run, run_json, MIB};

fn num(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} is a number in {v}"))
}

/// `snapshot --pid PID [--exact] -o FILE`, checked to succeed.
fn snapshot(pid: u32, exact: bool, file: &std::path::Path) -> Value {
    let pid = pid.to_string();
    let mut args = vec!["snapshot", "--pid", &pid, "-o", file.to_str().unwrap()];
    if exact {
        args.push("--exact");
    }
    let out = run(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    crate::support::read_snapshot(file)
}

#[test]
fn snapshots_store_the_exclusive_bytes_and_diff_shows_what_was_written_between() {
    if !frames_readable() {
        return;
    }
    let step = 16 * MIB;
    let mut child = spawn_grower(step);
    child.grow();
    let dir = tempfile::tempdir().unwrap();
    let (a, b, plain) =
        (dir.path().join("a.json"), dir.path().join("b.json"), dir.path().join("c.json"));
    let before = snapshot(child.pid, true, &a);
    let p = &before["processes"][0];
    let ex = &p["exclusive"];
    // Its USS, and the few file pages only memtally shared with it (its
    // own mappings come off the counts): tests/cli/pages.rs says why.
    let uss = num(&p["totals"], "private_clean") + num(&p["totals"], "private_dirty");
    let bytes = num(ex, "bytes");
    assert!(bytes >= uss && bytes <= uss + 64 * 1024, "exclusive {bytes} vs USS {uss}: {ex}");
    assert!(num(ex, "anon") >= step as u64, "{ex}");
    assert_eq!((num(ex, "swap"), num(ex, "shmem"), num(ex, "changed")), (0, 0, 0), "{ex}");
    assert_eq!(before["exact"]["method"], "pagemap_kpagecount");
    assert!(
        before["exact"]["unix_time"].as_f64().unwrap() >= before["unix_time"].as_f64().unwrap()
    );
    assert_eq!(before["exact"]["selection"], *ex, "one process: the selection is it");

    child.grow();
    snapshot(child.pid, true, &b);
    let diff = run_json(&["diff", a.to_str().unwrap(), b.to_str().unwrap(), "--format", "json"]);
    let row = &diff["exact"]["processes"][0];
    assert_eq!(row["pid"], child.pid, "{diff}");
    // The written step is anonymous and the child's alone: to the byte.
    assert_eq!(num(&row["delta"], "anon"), step as u64, "{row}");
    let grown = num(&row["delta"], "exclusive");
    assert!(grown >= step as u64 && grown <= step as u64 + 64 * 1024, "{row}");
    assert_eq!(diff["exact"]["selection"]["delta"], row["delta"], "{diff}");
    let table = run(&["diff", a.to_str().unwrap(), b.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(text.contains("exclusive (what ending them gives back): selection +16."), "{text}");
    assert!(text.contains("EXCLUSIVE BEFORE → AFTER"), "{text}");

    // Against one taken without --exact: nothing compared, and said so.
    let old = snapshot(child.pid, false, &plain);
    assert!(old.get("exact").is_none() && old["processes"][0].get("exclusive").is_none());
    for (x, y, side) in [(&plain, &b, "earlier"), (&a, &plain, "later")] {
        let d = run_json(&["diff", x.to_str().unwrap(), y.to_str().unwrap(), "--format", "json"]);
        assert!(d.get("exact").is_none(), "{d}");
        let note = format!("exclusive figures: not in the {side} snapshot (taken without --exact)");
        assert!(
            d["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().starts_with(&note)),
            "{d}"
        );
    }
    // Read whole (through a pipe: not streamed) the same figures come back.
    let piped = std::process::Command::new("sh")
        .args(["-c", "cat \"$1\" | \"$0\" diff \"$2\" /dev/stdin --format json"])
        .args([env!("CARGO_BIN_EXE_memtally"), b.to_str().unwrap(), a.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(piped.status.success(), "{}", String::from_utf8_lossy(&piped.stderr));
    let back: Value = serde_json::from_slice(&piped.stdout).unwrap();
    assert_eq!(back["exact"]["selection"]["before"], diff["exact"]["selection"]["before"]);
}

#[test]
fn snapshot_exact_of_a_recording_is_live_only() {
    let root = python_root_path();
    let out = run(&["--proc-root", &root, "snapshot", "11364", "--exact"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("live") && err.lines().count() == 1, "{err}");
    assert!(out.stdout.is_empty(), "no snapshot without the figures asked for");
}

#[test]
fn snapshot_exact_without_cap_sys_admin_says_so_and_writes_nothing() {
    if !frames_readable() {
        return;
    }
    let child = spawn_grower(MIB);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.json");
    let out = std::process::Command::new("setpriv")
        .args(["--bounding-set", "-sys_admin", "--inh-caps", "-sys_admin"])
        .args([env!("CARGO_BIN_EXE_memtally"), "snapshot", "--pid", &child.pid.to_string()])
        .args(["--exact", "-o", file.to_str().unwrap()])
        .output();
    let Ok(out) = out else { return eprintln!("skipped: no setpriv") };
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "exit 4 (permission): {err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.contains("CAP_SYS_ADMIN"), "{err}");
    assert!(!file.exists(), "no snapshot of zeros");
}

/// `snapshot --pid PID --wss 1s -o FILE` and what it wrote.
fn snapshot_wss(pid: u32, file: &std::path::Path) -> Value {
    let pid = pid.to_string();
    let out = run(&["snapshot", "--pid", &pid, "--wss", "1s", "-o", file.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("resets the referenced bits of 1 selected process"), "said once: {err}");
    crate::support::read_snapshot(file)
}

#[test]
fn snapshot_wss_stores_the_working_set_of_a_child_that_wrote_and_waits() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return eprintln!("skipped: resetting another process's referenced bits needs root here");
    }
    let len = 24 * MIB;
    let child = crate::support::lone::lone(len);
    let pid = child.child.0.id();
    let dir = tempfile::tempdir().unwrap();
    let (a, b, plain) =
        (dir.path().join("a.json"), dir.path().join("b.json"), dir.path().join("p.json"));
    let snap = snapshot_wss(pid, &a);
    assert_eq!(snap["wss"]["method"], "clear_refs");
    assert_eq!(snap["wss"]["interval_s"], 1.0);
    let t = &snap["processes"][0]["totals"];
    // It wrote its bytes before the interval and only waits: dirty, so in
    // the working set, and untouched, so cold.
    assert_eq!(num(t, "touched") + num(t, "cold"), num(t, "rss"), "{t}");
    assert!(num(t, "working_set") >= len as u64, "{t}");
    assert!(num(t, "cold") >= len as u64, "{t}");
    let heap = snap["processes"][0]["categories"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["category"] == "heap")
        .expect("a heap category");
    assert!(num(heap, "working_set") >= len as u64 && num(heap, "cold") >= len as u64, "{heap}");
    // Two such snapshots: the three figures' deltas are known; against a
    // snapshot without them, unknown and said so.
    snapshot_wss(pid, &b);
    let (fa, fb) = (a.to_str().unwrap(), b.to_str().unwrap());
    let d = run_json(&["diff", fa, fb, "--format", "json"]);
    let delta = &d["processes"].as_array().unwrap();
    assert!(delta.iter().all(|p| p["delta"]["working_set"].is_i64()) || delta.is_empty(), "{d}");
    assert!(d["totals"]["delta"]["working_set"].is_i64(), "one process: its totals keep them: {d}");
    assert!(d.get("notes").is_none(), "{d}");
    let out = run(&["snapshot", "--pid", &pid.to_string(), "-o", plain.to_str().unwrap()]);
    assert!(out.status.success());
    let d = run_json(&["diff", plain.to_str().unwrap(), fb, "--format", "json"]);
    assert!(d["totals"]["delta"]["working_set"].is_null(), "{d}");
    let note = "working-set figures (touched, working_set, cold): not in the earlier snapshot";
    assert!(
        d["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().starts_with(note)),
        "{d}"
    );
}

#[test]
fn snapshot_wss_needs_a_live_selection() {
    let root = python_root_path();
    let out = run(&["--proc-root", &root, "snapshot", "11364", "--wss", "1s"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("live") && err.lines().count() == 1, "{err}");
    let out = run(&["snapshot", "--wss", "1s"]);
    assert_eq!(out.status.code(), Some(2), "every process is refused: {:?}", out);
}
