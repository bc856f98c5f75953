//! `memtally wss` on live children that touch a known number of bytes:
//! the touched figure against those bytes and against Brendan Gregg's
//! wss.pl (when perl and ../shared are there), only the selected process
//! reset, a child that exits mid-interval, a recorded tree, an
//! unprivileged run, and the series `plot` draws.

use std::path::PathBuf;
use std::process::{Command, Output};

use crate::permissions::as_nobody;
use crate::support::lone::{huge_toucher, lone, toucher};
use crate::support::{repo_path, run, shared, svg_data, MIB};

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn wss_json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["wss"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--format", "json"]);
    let out = run(&all);
    assert!(out.status.success(), "memtally {all:?}: {}", err(&out));
    serde_json::from_slice(&out.stdout).expect("one JSON document")
}

/// The heap category of the one process of a `wss` document.
fn heap(doc: &serde_json::Value) -> &serde_json::Value {
    let p = &doc["processes"][0];
    p["categories"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["category"] == "heap")
        .unwrap_or_else(|| panic!("a heap category: {p}"))
}

fn figure(v: &serde_json::Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}"))
}

/// A few pages of the heap category besides the child's buffer (its
/// `.bss`, the C library's own anonymous pages) may be touched too.
const SLACK: u64 = 256 * 1024;

#[test]
fn touched_is_what_the_child_touched_and_the_working_set_holds_every_dirty_page() {
    let (total, hot) = (64 * MIB, 16 * MIB);
    let child = toucher(total, hot, 0);
    let pid = child.pid().to_string();
    let doc = wss_json(&[&pid, "--interval", "1s"]);
    assert_eq!(doc["method"], "clear_refs");
    assert_eq!(doc["interval_s"], 1.0);
    let h = heap(&doc);
    let touched = figure(h, "touched");
    assert!(
        (hot as u64..=hot as u64 + SLACK).contains(&touched),
        "heap touched {touched}, the child touches {hot}"
    );
    // Every byte of the buffer is dirty: all of it is in the working set,
    // and what was not touched is cold.
    assert!(figure(h, "working_set") >= total as u64, "{h}");
    let cold = figure(h, "cold");
    assert!(
        ((total - hot) as u64..=(total - hot) as u64 + SLACK).contains(&cold),
        "heap cold {cold}, untouched {}",
        total - hot
    );
    assert_eq!(figure(h, "rss"), touched + cold, "cold is resident minus touched");
    let p = &doc["processes"][0];
    assert_eq!(figure(p, "touched"), figure(p, "referenced"));
    assert!(p["measured_s"].as_f64().unwrap() >= 1.0);
    assert_eq!(figure(&doc["total"], "working_set"), figure(p, "working_set"));
}

/// wss.pl, run on the same child for the same interval: its Ref(MB)
/// column in bytes (it sums smaps Referenced in kB, and prints MB as kB/1024).
fn wss_pl(pl: &std::path::Path, pid: u32, secs: &str) -> Option<u64> {
    let out = Command::new("perl").arg(pl).arg(pid.to_string()).arg(secs).output().ok()?;
    assert!(out.status.success(), "wss.pl: {}", err(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let last = text.lines().last()?;
    let mb: f64 = last.split_whitespace().nth(3)?.parse().ok()?;
    Some((mb * MIB as f64) as u64)
}

/// memtally's touched figure agrees with wss.pl's within a few percent
/// on the same child and interval, and both with the bytes the child
/// touches. They differ by what the interval sees of shared file pages:
/// the C library's and the loader's pages count as referenced whenever
/// another process touched them meanwhile (the kernel keeps one
/// referenced flag per page), so each run's total carries up to about a
/// MiB more than the child's own buffer, a different amount each time.
#[test]
fn touched_agrees_with_wss_pl() {
    let Some(pl) = shared().map(|s| s.join("peers/wss/wss.pl")).filter(|p| p.is_file()) else {
        eprintln!("skipped: ../shared/peers/wss/wss.pl is not in this checkout");
        return;
    };
    if Command::new("perl").arg("-e1").output().is_err() {
        eprintln!("skipped: no perl to run wss.pl with");
        return;
    }
    let (total, hot) = (256 * MIB, 64 * MIB);
    let child = toucher(total, hot, 0);
    let pid = child.pid();
    let ours = figure(&wss_json(&[&pid.to_string(), "--interval", "1s"])["total"], "touched");
    let theirs = wss_pl(&pl, pid, "1").expect("wss.pl prints its figures");
    eprintln!("touched over 1 s: memtally {ours}, wss.pl {theirs}, the child's buffer {hot}");
    let near = |a: u64, b: u64, pct: f64| (a as f64 - b as f64).abs() <= b as f64 * pct / 100.0;
    assert!(near(ours, theirs, 3.0), "memtally {ours}, wss.pl {theirs}: within 3%");
    assert!(near(ours, hot as u64, 3.0), "memtally {ours}, touched by the child {hot}");
    assert!(near(theirs, hot as u64, 3.0), "wss.pl {theirs}, touched by the child {hot}");
}

/// The referenced bits of a process that is not selected are left alone:
/// a sibling that wrote its buffer and sleeps keeps every page of it
/// referenced while memtally measures the other child.
#[test]
fn a_process_not_selected_is_not_reset() {
    let sibling = lone(32 * MIB);
    let spid = sibling.child.0.id();
    let referenced = || {
        let smaps = PathBuf::from(format!("/proc/{spid}/smaps"));
        crate::support::smaps_sum(&smaps, "Referenced")
    };
    let before = referenced();
    assert!(before >= 32 * MIB as u64, "the sibling's buffer is referenced: {before}");
    let child = toucher(8 * MIB, 4 * MIB, 0);
    let doc = wss_json(&[&child.pid().to_string(), "--interval", "300ms"]);
    assert_eq!(doc["processes"].as_array().unwrap().len(), 1);
    let after = referenced();
    assert!(
        after >= 32 * MIB as u64,
        "the sibling was reset: {before} referenced before, {after} after"
    );
}

/// A child that exits during the interval is reported as exited, in a
/// note, and the run succeeds with no figures for it.
#[test]
fn a_process_that_exits_mid_interval_is_noted_not_an_error() {
    let child = toucher(4 * MIB, MIB, 300);
    let pid = child.pid().to_string();
    let out = run(&["wss", &pid, "--interval", "1s", "--format", "json"]);
    assert!(out.status.success(), "{}", err(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["processes"].as_array().unwrap().len(), 0, "{doc}");
    assert_eq!(doc["partial"], true);
    let notes = doc["notes"].to_string();
    assert!(notes.contains(&format!("pid {pid} (toucher) exited")), "{notes}");
}

#[test]
fn a_recorded_tree_is_refused_as_live_only() {
    let root = repo_path("testdata/fixtures/linux/python3-mmap/proc");
    let out = run(&["--proc-root", &root, "wss", "11364", "--interval", "10ms"]);
    assert_eq!(out.status.code(), Some(2), "{}", err(&out));
    let e = err(&out);
    assert_eq!(e.lines().count(), 1, "one line: {e}");
    assert!(e.contains("live processes only") && e.contains("recorded tree"), "{e}");
    assert!(out.stdout.is_empty());
}

#[test]
fn every_process_is_never_measured_unasked() {
    let out = run(&["wss", "--interval", "10ms"]);
    assert_eq!(out.status.code(), Some(2), "{}", err(&out));
    assert!(err(&out).contains("wss needs a PID or a selection"), "{}", err(&out));
}

/// Run as nobody against root's child: one line that says what is
/// refused and what would allow it, exit 4, and nothing reset.
#[test]
fn an_unprivileged_run_says_what_it_needs() {
    let child = toucher(4 * MIB, MIB, 0);
    let pid = child.pid().to_string();
    let Some(out) = as_nobody(&["wss", &pid, "--interval", "10ms"]) else { return };
    assert_eq!(out.status.code(), Some(4), "{}", err(&out));
    let e = err(&out);
    assert_eq!(e.lines().count(), 1, "one line: {e}");
    assert!(e.contains("clear_refs") && e.contains("permission denied"), "{e}");
    assert!(e.contains("its own user or root"), "says what would allow it: {e}");
    assert!(out.stdout.is_empty());
}

/// `--count` gives a series: a JSON line per interval, CSV with one
/// header, and a series file `plot` draws the working set from.
#[test]
fn a_series_is_one_line_per_interval_and_plot_draws_it() {
    let (total, hot) = (16 * MIB, 4 * MIB);
    let child = toucher(total, hot, 0);
    let pid = child.pid().to_string();
    let dir = tempfile::tempdir().unwrap();
    let series = dir.path().join("w.csv");
    let s = series.to_str().unwrap();
    let out =
        run(&["wss", &pid, "--interval", "200ms", "--count", "3", "--format", "json", "-o", s]);
    assert!(out.status.success(), "{}", err(&out));
    let stderr = err(&out);
    assert_eq!(stderr.matches("resets the referenced bits").count(), 1, "said once: {stderr}");
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    for (i, l) in lines.iter().enumerate() {
        assert_eq!(l["index"], i);
        // Each interval is its own: never more than the hot bytes (a
        // reset that did not happen would add up), and some of them (a
        // short interval on a busy machine may not see a whole pass; the
        // exact figure is the 1 s test's).
        let touched = figure(heap(l), "touched");
        assert!((1..=hot as u64 + SLACK).contains(&touched), "sample {i}: {touched}");
    }
    let text = std::fs::read_to_string(&series).unwrap();
    assert!(
        text.starts_with("elapsed_s,scope,key,label,rss,pss,dirty,touched,working_set,cold\n"),
        "{text}"
    );
    assert_eq!(text.lines().filter(|l| l.contains(",total,total,")).count(), 3, "{text}");
    let svg = dir.path().join("w.svg");
    let plot = run(&["plot", s, "--figure", "working_set", "-o", svg.to_str().unwrap()]);
    assert!(plot.status.success(), "{}", err(&plot));
    let (_, data) = svg_data(&svg);
    assert!(data.to_string().contains("working_set"), "{data}");

    let csv = run(&["wss", &pid, "--interval", "100ms", "--count", "2", "--format", "csv"]);
    assert!(csv.status.success(), "{}", err(&csv));
    let csv = String::from_utf8_lossy(&csv.stdout);
    assert_eq!(csv.lines().filter(|l| l.starts_with("elapsed_s,")).count(), 1, "{csv}");
    assert_eq!(csv.lines().filter(|l| l.contains(",total,")).count(), 2, "{csv}");
}

/// The table names the mail's working set and the method that ran.
#[test]
fn the_table_names_its_figures_and_method() {
    let child = toucher(8 * MIB, 2 * MIB, 0);
    let pid = child.pid().to_string();
    let out = run(&["wss", &pid, "--interval", "100ms", "--method", "referenced"]);
    assert!(out.status.success(), "{}", err(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    for want in ["TOUCHED", "WORKING SET", "COLD", "heap / anon rw", "method: clear_refs"] {
        assert!(text.contains(want), "{want}: {text}");
    }
    assert!(text.contains("dirty pages plus clean file-backed pages touched"), "{text}");
    let idle = std::path::Path::new("/sys/kernel/mm/page_idle/bitmap").exists();
    let said = if idle { "present but was not used" } else { "idle page tracking is unavailable" };
    assert!(text.contains(said), "{text}");
}

/// Transparent huge pages: one byte touched in each of four 2 MiB pages
/// counts the four whole (the kernel has one referenced bit per huge
/// page), and a note says so. Skipped where the kernel gave no huge page.
#[test]
fn a_byte_touched_in_a_huge_page_counts_the_huge_page_and_a_note_says_so() {
    let child = huge_toucher(32 * MIB, 8 * MIB);
    let pid = child.pid().to_string();
    let doc = wss_json(&[&pid, "--interval", "1s"]);
    let h = heap(&doc);
    let thp = h["anon_huge_pages"].as_u64().unwrap_or(0);
    if thp < 8 * MIB as u64 {
        eprintln!("skipped: the kernel gave the child {thp} bytes of transparent huge pages (THP off, or no free 2 MiB pages)");
        return;
    }
    let touched = figure(h, "touched");
    assert!((8 * MIB as u64..=8 * MIB as u64 + SLACK).contains(&touched), "{touched}: {h}");
    assert!(doc["notes"].to_string().contains("transparent huge pages"), "{}", doc["notes"]);
}

/// `watch --wss`: the working set over each interval beside the watch's
/// figures, none at the first sample (no interval has passed), the
/// child's touched bytes at the next.
#[test]
fn watch_wss_adds_the_working_set_of_each_interval() {
    let (total, hot) = (16 * MIB, 4 * MIB);
    let child = toucher(total, hot, 0);
    let pid = child.pid().to_string();
    let out =
        run(&["watch", &pid, "--wss", "--interval", "1s", "--count", "2", "--format", "json"]);
    assert!(out.status.success(), "{}", err(&out));
    assert_eq!(err(&out).matches("resets the referenced bits").count(), 1, "{}", err(&out));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "two samples and the summary");
    assert!(lines[0]["total"]["touched"].is_null(), "{}", lines[0]);
    let heap = |l: &serde_json::Value| {
        l["categories"].as_array().unwrap().iter().find(|c| c["category"] == "heap").cloned()
    };
    let h = heap(&lines[1]).expect("a heap category");
    let touched = figure(&h, "touched");
    assert!((hot as u64..=hot as u64 + SLACK).contains(&touched), "{touched}: {h}");
    assert!(figure(&h, "working_set") >= total as u64);
    let p = &lines[1]["processes"][0];
    assert_eq!(figure(p, "touched") + figure(p, "cold"), figure(p, "rss"), "{p}");
    // Without a selection it refuses, as wss does.
    let every = run(&["watch", "--wss", "--count", "1"]);
    assert_eq!(every.status.code(), Some(2), "{}", err(&every));
}

/// Idle page tracking: where the kernel has the bitmap (and the run is
/// root's), `--method idle` finds the child's touched pages as the
/// referenced bits do; where it has none, `--method idle` is one line
/// that says so (exit code 2) and `auto` falls back to the referenced
/// bits, saying so in the method line.
#[test]
fn idle_tracking_runs_where_the_kernel_has_it_and_says_why_not_elsewhere() {
    let (total, hot) = (32 * MIB, 8 * MIB);
    let child = toucher(total, hot, 0);
    let pid = child.pid().to_string();
    let bitmap = std::path::Path::new("/sys/kernel/mm/page_idle/bitmap");
    if !bitmap.exists() {
        let out = run(&["wss", &pid, "--interval", "100ms", "--method", "idle"]);
        assert_eq!(out.status.code(), Some(2), "{}", err(&out));
        let e = err(&out);
        assert_eq!(e.trim_end().lines().count(), 1, "one line: {e}");
        assert!(e.contains("CONFIG_IDLE_PAGE_TRACKING"), "{e}");
        let doc = wss_json(&[&pid, "--interval", "100ms"]);
        assert_eq!(
            (doc["method"].as_str(), doc["idle_tracking"].as_str()),
            (Some("clear_refs"), Some("absent"))
        );
        return eprintln!("skipped: the live idle-tracking run (this kernel has no {}: built without CONFIG_IDLE_PAGE_TRACKING)", bitmap.display());
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return eprintln!("skipped: idle page tracking needs root (the bitmap is root's)");
    }
    let doc = wss_json(&[&pid, "--interval", "1s", "--method", "idle"]);
    assert_eq!(
        (doc["method"].as_str(), doc["idle_tracking"].as_str()),
        (Some("idle_pages"), Some("used"))
    );
    let touched = figure(heap(&doc), "touched");
    assert!(
        (hot as u64..=hot as u64 + SLACK).contains(&touched),
        "heap touched {touched}, the child touches {hot}"
    );
}
