//! The outputs other tools read, fed to those tools: `top` and `snapshot
//! --format folded` through inferno's flame graph (the library behind
//! `inferno-flamegraph` and cargo-flamegraph), their widths adding up to
//! the figure `top` and the snapshot print; `watch --format perfetto`
//! against a schema of the Chrome trace event format written from that
//! format's document (testdata/schema/trace-event-format.json), with one
//! counter per figure and sample. (Ended by SIGTERM, through the binary:
//! tests/cli/interop.rs.)

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::{repo_path, run, run_json};

const SELECTION: u64 = crate::render::watch_perfetto::SELECTION_PID as u64;

fn renderer() -> String {
    repo_path("testdata/fixtures/linux/chromium-renderer/proc")
}

fn python() -> String {
    repo_path("testdata/fixtures/linux/python3-mmap/proc")
}

/// `memtally ARGS`, which must succeed, as text.
fn text(args: &[&str]) -> String {
    let out = run(args);
    assert!(out.status.success(), "memtally {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Folded lines as (frames, count); every line must be one.
fn parse(folded: &str) -> Vec<(Vec<String>, u64)> {
    folded
        .lines()
        .map(|l| {
            let (stack, count) = l.rsplit_once(' ').unwrap_or_else(|| panic!("no count: {l:?}"));
            let count = count.parse().unwrap_or_else(|_| panic!("not a count: {l:?}"));
            (stack.split(';').map(String::from).collect(), count)
        })
        .collect()
}

/// The flame graph inferno draws of `folded`.
fn flame_graph(folded: &str) -> String {
    use inferno::flamegraph::{from_lines, Options};
    let mut svg = Vec::new();
    let mut opts = Options::default();
    opts.count_name = "bytes".into();
    from_lines(&mut opts, folded.lines(), &mut svg).expect("inferno reads the folded stacks");
    String::from_utf8(svg).unwrap()
}

/// `n` with thousands separated by commas, as inferno prints counts.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

#[test]
fn top_folded_is_every_process_adding_up_to_tops_total() {
    let root = renderer();
    let total = run_json(&["--proc-root", &root, "top", "--format", "json"]);
    for (figure, key) in [(None, "pss"), (Some("rss"), "rss"), (Some("swap_pss"), "swap_pss")] {
        let mut args = vec!["--proc-root", &root, "top", "--format", "folded"];
        args.extend(figure.iter().flat_map(|f| ["--figure", f]));
        let folded = text(&args);
        let lines = parse(&folded);
        let want = total["totals"][key].as_u64().unwrap();
        assert_eq!(lines.iter().map(|(_, n)| n).sum::<u64>(), want, "{key}: {folded}");
        if want > 0 {
            assert_eq!(lines[0].0, ["chromium", "11755"], "program;pid");
            let svg = flame_graph(&folded);
            assert!(svg.contains("chromium") && svg.contains("11755"), "{key}: {svg}");
            assert!(
                svg.contains(&format!("all ({} bytes", grouped(want))),
                "the root is the total"
            );
        } else {
            assert!(lines.is_empty(), "a figure of 0 has no stack: {folded}");
        }
    }
}

#[test]
fn top_folded_refuses_what_cuts_or_decorates_rows() {
    let root = renderer();
    for extra in [&["--top", "3"][..], &["--min", "1M"], &["--by", "tree"], &["--percent"]] {
        let mut args = vec!["--proc-root", &root, "top", "--format", "folded"];
        args.extend(extra);
        let out = run(&args);
        assert_eq!(out.status.code(), Some(crate::exit::USAGE), "{extra:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(extra[0]) && err.contains("folded"), "{extra:?}: {err}");
    }
    let out = run(&["--proc-root", &root, "top", "--figure", "rss"]);
    assert_eq!(out.status.code(), Some(crate::exit::USAGE), "--figure without folded");
    // Grouped by user: the user is the root frame.
    let folded = text(&["--proc-root", &root, "top", "--format", "folded", "--by", "user"]);
    assert_eq!(parse(&folded)[0].0, ["root", "chromium", "11755"]);
}

#[test]
fn snapshot_folded_adds_up_to_the_snapshots_categories() {
    let root = renderer();
    let snapshot = text(&["--proc-root", &root, "snapshot"]);
    let end: Value = snapshot
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|v| v.get("end").cloned())
        .expect("an end line");
    for figure in ["pss", "rss", "private_dirty"] {
        let folded =
            text(&["--proc-root", &root, "snapshot", "--format", "folded", "--figure", figure]);
        let lines = parse(&folded);
        let mut by_category: BTreeMap<String, u64> = BTreeMap::new();
        let mut stacks = BTreeSet::new();
        for (frames, n) in &lines {
            assert_eq!(frames.len(), 4, "program;pid;category;mapping: {frames:?}");
            assert_eq!(frames[..2], ["chromium", "11755"]);
            assert!(*n > 0, "no line of 0 bytes");
            assert!(stacks.insert(frames.clone()), "one line per mapping: {frames:?}");
            *by_category.entry(frames[2].clone()).or_default() += n;
        }
        let want: BTreeMap<String, u64> = end["categories"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| {
                let n = c[figure].as_u64().filter(|n| *n > 0)?;
                Some((c["category"].as_str()?.to_string(), n))
            })
            .collect();
        assert_eq!(by_category, want, "{figure} by category");
        let svg = flame_graph(&folded);
        // Each category of 1% or more (inferno leaves out boxes too narrow to draw).
        let all: u64 = want.values().sum();
        let wide = want.iter().filter(|(_, n)| **n * 100 >= all).map(|(k, _)| k.as_str());
        for name in ["chromium"].into_iter().chain(wide) {
            assert!(svg.contains(name), "{figure}: {name} in the flame graph");
        }
        if figure != "private_dirty" {
            assert!(svg.contains("/usr/lib/chromium/chromium"), "{figure}: the binary's mapping");
        }
    }
    // The same lines into a file.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.folded");
    let args =
        ["--proc-root", &root, "snapshot", "--format", "folded", "-o", file.to_str().unwrap()];
    assert!(text(&args).is_empty());
    let stdout = text(&["--proc-root", &root, "snapshot", "--format", "folded"]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), stdout);
    let out = run(&["--proc-root", &root, "snapshot", "--format", "folded", "--exact"]);
    assert_eq!(out.status.code(), Some(crate::exit::USAGE), "--exact is the snapshot file's");
}

/// The trace event format's schema, compiled.
fn trace_schema() -> jsonschema::Validator {
    let path = repo_path("testdata/schema/trace-event-format.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert!(jsonschema::meta::is_valid(&schema), "a valid JSON Schema");
    jsonschema::validator_for(&schema).unwrap()
}

#[test]
fn watch_perfetto_is_a_trace_of_one_counter_per_figure_and_sample() {
    let root = python();
    let args = ["--proc-root", &root, "watch", "11364", "--count", "3", "--interval", "50ms"];
    let trace = text(&[&args[..], &["--format", "perfetto"]].concat());
    let doc: Value = serde_json::from_str(&trace).expect("one JSON document");
    let schema = trace_schema();
    let errors: Vec<String> = schema.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    let events = doc["traceEvents"].as_array().unwrap();
    let names: Vec<&Value> = events.iter().filter(|e| e["ph"] == "M").collect();
    assert_eq!(names.len(), 2, "the process and the selection, named once: {names:?}");
    // The same figures as the JSON samples, per sample.
    let json = text(&[&args[..], &["--format", "json"]].concat());
    let samples: Vec<Value> = json
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "sample")
        .collect();
    assert_eq!(samples.len(), 3);
    let times: BTreeSet<u64> =
        events.iter().filter(|e| e["ph"] == "C").map(|e| e["ts"].as_u64().unwrap()).collect();
    assert_eq!(times.len(), 3, "three samples: {times:?}");
    for (ts, sample) in times.iter().zip(&samples) {
        let at = |pid: u64, name: &str| -> Option<u64> {
            events
                .iter()
                .find(|e| e["ts"] == *ts && e["pid"] == pid && e["name"] == name)
                .map(|e| e["args"]["bytes"].as_u64().unwrap())
        };
        let process = &sample["processes"][0];
        for figure in ["pss", "rss", "swap_pss", "pss_dirty"] {
            assert_eq!(at(11364, figure), process[figure].as_u64(), "{figure} at {ts}");
            let total = sample["total"][figure].as_u64();
            assert_eq!(at(SELECTION, &format!("total {figure}")), total, "total {figure} at {ts}");
        }
        for c in sample["categories"].as_array().unwrap() {
            let key = c["category"].as_str().unwrap();
            assert_eq!(
                at(SELECTION, &format!("{key} pss")),
                c["pss"].as_u64(),
                "{key} pss at {ts}"
            );
        }
    }
    // The schema tells a wrong trace: a counter of a string, an event of
    // no phase, no traceEvents.
    let mut wrong = doc.clone();
    let i = events.iter().position(|e| e["ph"] == "C").unwrap();
    wrong["traceEvents"][i]["args"]["bytes"] = "4096".into();
    assert!(!schema.is_valid(&wrong), "a string counter");
    let mut wrong = doc.clone();
    wrong["traceEvents"][i].as_object_mut().unwrap().remove("ph");
    assert!(!schema.is_valid(&wrong), "no phase");
    assert!(!schema.is_valid(&serde_json::json!({"events": []})), "no traceEvents");
}
