//! Snapshots, diffs, watch and plots on children that grow by known amounts.

use std::time::Duration;

use crate::support::{read_snapshot, run, run_json, spawn_grower, spawn_steady_grower, MIB};

const PAGE: i64 = 4096;

/// Three steps of 4 MiB between two snapshots: diff shows 12 MiB more
/// private dirty in the process and in the heap category, within a page
/// per step.
#[test]
fn diff_finds_heap_growth_in_the_right_place() {
    let mut child = spawn_grower(4 * MIB);
    let pid = child.pid.to_string();
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    assert!(run(&["snapshot", &pid, "-o", a.to_str().unwrap()]).status.success());
    for _ in 0..3 {
        child.grow();
    }
    assert!(run(&["snapshot", &pid, "-o", b.to_str().unwrap()]).status.success());

    let snap = read_snapshot(&a);
    assert_eq!(snap["kind"], "linux");
    assert!(snap["time"].as_str().unwrap().ends_with('Z'));
    assert_eq!(snap["processes"][0]["pid"].as_u64(), Some(child.pid as u64));
    assert!(snap["processes"][0]["regions"].as_array().unwrap().len() > 5);
    assert!(snap["machine"]["MemTotal"].as_u64().unwrap() > 0);

    let d = run_json(&["diff", a.to_str().unwrap(), b.to_str().unwrap(), "--format", "json"]);
    let want = 3 * 4 * MIB as i64;
    let p = &d["processes"][0];
    assert_eq!(p["pid"].as_u64(), Some(child.pid as u64));
    assert_eq!(p["status"], "changed");
    // Dirty, not private dirty: when this (multi-threaded) test process
    // writes a page it still shares copy-on-write with the child, the
    // child's copy turns from shared to private dirty; the sum stays.
    // Within 32 pages: the child's own stack and the pipe's pages can
    // move a little between the snapshots (seen: 16 pages under load).
    let grew = p["delta"]["dirty"].as_i64().unwrap();
    assert!((grew - want).abs() <= 32 * PAGE, "dirty grew {grew}, want {want}");
    let side =
        |k: &str| p[k]["shared_dirty"].as_i64().unwrap() + p[k]["private_dirty"].as_i64().unwrap();
    assert_eq!(side("after") - side("before"), grew);
    let heap = d["categories"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["category"] == "heap")
        .expect("heap changed");
    let grew = heap["delta"]["dirty"].as_i64().unwrap();
    assert!((grew - want).abs() <= 3 * PAGE, "heap grew {grew}");
    assert_eq!(d["categories"][0]["category"], "heap", "largest dirty growth first");
    let appeared: i64 = d["regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            if r["status"] == "appeared" {
                r["size"].as_i64().unwrap()
            } else {
                -r["size"].as_i64().unwrap()
            }
        })
        .sum();
    assert_eq!(appeared, want, "new mappings add up to the growth");

    let table = run(&["diff", a.to_str().unwrap(), b.to_str().unwrap()]);
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(text.contains("+12.0M"), "{text}");
    // Well above the 12 MiB grown: this forked child also shares this
    // busy test process's heap copy-on-write, so its private dirty moves
    // by whatever the other tests' threads write meanwhile (seen: >1 MiB).
    let quiet = run_json(&[
        "diff",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--min-delta",
        "64M",
        "--format",
        "json",
    ]);
    assert!(quiet["processes"].as_array().unwrap().is_empty());
}

/// A diff of two recorded trees equals subtracting their rollups by hand.
#[test]
fn diff_of_recorded_trees_is_plain_subtraction() {
    let mut child = spawn_grower(2 * MIB);
    let pid = child.pid.to_string();
    let dir = tempfile::tempdir().unwrap();
    let (ra, rb) = (dir.path().join("ra"), dir.path().join("rb"));
    assert!(run(&["capture", &pid, "-o", ra.to_str().unwrap()]).status.success());
    child.grow();
    child.grow();
    assert!(run(&["capture", &pid, "-o", rb.to_str().unwrap()]).status.success());
    let (sa, sb) = (dir.path().join("a.json"), dir.path().join("b.json"));
    for (root, out) in [(&ra, &sa), (&rb, &sb)] {
        let r = run(&[
            "--proc-root",
            root.to_str().unwrap(),
            "snapshot",
            &pid,
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    }
    let d = run_json(&["diff", sa.to_str().unwrap(), sb.to_str().unwrap(), "--format", "json"]);
    // By hand: add up each recorded smaps with a plain loop here.
    let sum = |root: &std::path::Path, key: &str| -> i64 {
        std::fs::read_to_string(root.join(&pid).join("smaps"))
            .unwrap()
            .lines()
            .filter_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
            .map(|v| v.trim().trim_end_matches(" kB").trim().parse::<i64>().unwrap() * 1024)
            .sum()
    };
    for (k, smaps_key) in [
        ("rss", "Rss"),
        ("private_dirty", "Private_Dirty"),
        ("shared_dirty", "Shared_Dirty"),
        ("private_clean", "Private_Clean"),
        ("anonymous", "Anonymous"),
        ("swap", "Swap"),
        ("size", "Size"),
    ] {
        let by_hand = sum(&rb, smaps_key) - sum(&ra, smaps_key);
        assert_eq!(d["totals"]["delta"][k].as_i64(), Some(by_hand), "{k}");
        assert_eq!(d["processes"][0]["delta"][k].as_i64(), Some(by_hand), "{k}");
    }
    // PSS totals follow memtally's documented rule (the rollup's exact
    // figure when it matches smaps): the same as `show` of each tree.
    let pss = |root: &std::path::Path| {
        run_json(&["--proc-root", root.to_str().unwrap(), "show", &pid, "--format", "json"])
            ["totals"]["pss"]
            .as_i64()
            .unwrap()
    };
    assert_eq!(d["totals"]["delta"]["pss"].as_i64(), Some(pss(&rb) - pss(&ra)));
}

/// `show --format json` output compares as well as snapshots do.
#[test]
fn show_json_can_be_compared() {
    let mut child = spawn_grower(MIB);
    let pid = child.pid.to_string();
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    std::fs::write(&a, run(&["show", &pid, "--format", "json"]).stdout).unwrap();
    child.grow();
    std::fs::write(&b, run(&["show", &pid, "--format", "json"]).stdout).unwrap();
    let d = run_json(&["diff", a.to_str().unwrap(), b.to_str().unwrap(), "--format", "json"]);
    let grew = d["processes"][0]["delta"]["dirty"].as_i64().unwrap();
    assert!((grew - MIB as i64).abs() <= PAGE, "{grew}");
}

#[test]
fn diff_rejects_what_it_cannot_read() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, "{\"hello\": 1}").unwrap();
    let out = run(&["diff", junk.to_str().unwrap(), junk.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(5));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("junk.json") && err.contains("cannot compare"), "{err}");
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"memtally_snapshot\": 1, \"kind\": ").unwrap();
    let out = run(&["diff", bad.to_str().unwrap(), junk.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(5));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not valid JSON"));
    let out = run(&["diff", "/nonexistent/a.json", junk.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3));
}

/// A child that grows 2 MiB every 100 ms: watch's fitted rate is within
/// 10% of 20 MiB/s and the verdict names it.
#[test]
fn watch_reports_the_growth_rate() {
    let child = spawn_steady_grower(2 * MIB, Duration::from_millis(100), 60);
    let pid = child.pid.to_string();
    let dir = tempfile::tempdir().unwrap();
    let series = dir.path().join("series.csv");
    let out = run(&[
        "watch",
        &pid,
        "--interval",
        "250ms",
        "--count",
        "9",
        "-o",
        series.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // JSON Lines: a line per sample, then the summary.
    let text = String::from_utf8(out.stdout).unwrap();
    let doc: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(doc["type"], "summary");
    let real = 2.0 * MIB as f64 / 0.1;
    assert_eq!(doc["samples"], 9);
    let trends = doc["trends"].as_array().unwrap();
    let proc_trend =
        trends.iter().find(|t| t["scope"] == "process" && t["key"] == pid.as_str()).unwrap();
    // The dirty rate: PSS of a forked child also moves when this test
    // process breaks copy-on-write sharing with it (see above).
    let rate = proc_trend["dirty_rate"].as_f64().unwrap();
    assert!((rate - real).abs() / real < 0.10, "rate {rate} vs real {real}");
    // PSS of a forked child also falls as the harness forks other tests'
    // children that share its pages: it grows, but a loaded run saw it
    // below 0.9 of the dirty rate.
    let pss_rate = proc_trend["pss_rate"].as_f64().unwrap();
    assert!(pss_rate >= real * 0.5, "PSS grows too: {pss_rate} vs real {real}");
    assert_eq!(proc_trend["steady_growth"], true);
    let heap = trends.iter().find(|t| t["scope"] == "category" && t["key"] == "heap").unwrap();
    let rate = heap["dirty_rate"].as_f64().unwrap();
    assert!((rate - real).abs() / real < 0.10, "heap dirty rate {rate}");

    // The CSV holds every sample, and plot draws exactly those values.
    let text = std::fs::read_to_string(&series).unwrap();
    let totals: Vec<(f64, u64)> = text
        .lines()
        .skip(1)
        .filter(|l| l.contains(",total,"))
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].parse().unwrap(), f[5].parse().unwrap())
        })
        .collect();
    assert_eq!(totals.len(), 9);
    let svg_path = dir.path().join("series.svg");
    assert!(run(&["plot", series.to_str().unwrap(), "-o", svg_path.to_str().unwrap()])
        .status
        .success());
    let (svg, data) = crate::support::svg_data(&svg_path);
    let line = &data["lines"][0];
    // One process watched: the total is it, and its label says so.
    assert_eq!(line["label"], format!("total pss (= process {pid}, the only one)"));
    let drawn: Vec<(f64, u64)> = serde_json::from_value(line["points"].clone()).unwrap();
    assert_eq!(drawn, totals);
    assert!(svg.contains("<polyline"), "a line is drawn");
}

#[test]
fn watch_table_prints_a_line_per_sample_and_a_verdict() {
    let child = spawn_steady_grower(MIB, Duration::from_millis(50), 100);
    let out = run(&["watch", &child.pid.to_string(), "--interval", "150ms", "--count", "5"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().filter(|l| l.starts_with('[')).count(), 5, "{text}");
    assert!(
        text.contains(&format!("verdict: memory grows steadily in 1 process: pid {}", child.pid)),
        "{text}"
    );
}

/// Ctrl-C ends watch cleanly, with the summary, and 130 (128 + SIGINT).
#[test]
fn watch_stops_cleanly_on_ctrl_c() {
    let child = spawn_steady_grower(MIB, Duration::from_millis(100), 10);
    let mut w = crate::support::memtally()
        .args(["watch", &child.pid.to_string(), "--interval", "100ms"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let first = crate::support::watch_samples(&mut w, 3);
    unsafe { libc::kill(w.id() as i32, libc::SIGINT) };
    let out = w.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{:?}", out.status);
    let text = first + &String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("verdict:"), "{text}");
}

/// A snapshot's picture: one bar per category with the snapshot's PSS.
#[test]
fn plot_of_a_snapshot_carries_its_categories() {
    let child = spawn_grower(MIB);
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("s.json");
    assert!(run(&["snapshot", &child.pid.to_string(), "-o", snap.to_str().unwrap()])
        .status
        .success());
    let svg_path = dir.path().join("s.svg");
    assert!(run(&["plot", snap.to_str().unwrap(), "-o", svg_path.to_str().unwrap()])
        .status
        .success());
    let (svg, data) = crate::support::svg_data(&svg_path);
    let s = read_snapshot(&snap);
    let cats = s["categories"].as_array().unwrap();
    let bars = data["bars"].as_array().unwrap();
    assert_eq!(bars.len(), cats.len());
    let heap = cats.iter().find(|c| c["category"] == "heap").unwrap();
    let bar = bars.iter().find(|b| b["label"] == "heap / anon rw").unwrap();
    assert_eq!(bar["value"], heap["pss"]);
    assert!(
        svg.contains(">heap / anon rw<") || svg.contains("heap / anon rw\n"),
        "the label is drawn"
    );
    let out = run(&["plot", "/nonexistent.csv", "-o", svg_path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3));
}
