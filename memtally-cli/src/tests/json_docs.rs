//! The JSON documents against their documentation: every key a table of
//! docs/json.md, docs/gpu-json.md or docs/vmmap-json.md names appears in
//! real output on the recorded fixtures, and no key appears that a table
//! does not name. A key added to a printer without a line in the docs (or
//! a documented key a printer lost) fails here. (`wss`, on a live child:
//! tests/cli/json_docs.rs.)

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use super::json_keys::{check, documented, keys, listed, none};
use super::{repo, repo_path, run, run_json, shared};

fn python_root() -> String {
    repo_path("testdata/fixtures/linux/python3-mmap/proc")
}

#[test]
fn show_keys_are_the_documented_ones() {
    let doc = run_json(&["--proc-root", &python_root(), "show", "11364", "--format", "json"]);
    let top = documented("json.md", "`memtally show … --format json`", 0);
    check("show", &top, &keys(&doc), &[], &none());
    // A region: its table, the size keys, and smaps' non-size keys (strings).
    let region = documented("json.md", "### A region", 0);
    let sizes = listed("json.md", "### Size keys");
    for r in doc["regions"].as_array().expect("regions") {
        let attributes = keys(r).into_iter().filter(|k| r[k].is_string() && !region.contains(k));
        let also: BTreeSet<String> = sizes.iter().cloned().chain(attributes).collect();
        // Keys of smaps lines an older kernel does not print.
        check("a show region", &region, &keys(r), &["thp_eligible", "protection_key"], &also);
    }
    check(
        "show totals",
        &sizes,
        &keys(&doc["totals"]),
        &sizes.iter().map(String::as_str).collect::<Vec<_>>(),
        &none(),
    );
}

#[test]
fn top_keys_are_the_documented_ones() {
    let doc = run_json(&["--proc-root", &python_root(), "top", "--format", "json"]);
    let top = documented("json.md", "`memtally top --format json`", 0);
    // `exclusive` is there with `--exact` only (live: tests/cli/pages.rs).
    check("top", &top, &keys(&doc), &["exclusive"], &none());
}

#[test]
fn files_keys_are_the_documented_ones() {
    let chromium = repo_path("testdata/fixtures/linux/chromium-browser/proc");
    let doc = run_json(&["--proc-root", &chromium, "files", "--format", "json"]);
    let top = documented("json.md", "`memtally files --format json`", 0);
    check("files", &top, &keys(&doc), &[], &none());
    let row = documented("json.md", "`memtally files --format json`", 1);
    let mapper = documented("json.md", "`memtally files --format json`", 2);
    for f in doc["files"].as_array().expect("files") {
        check("a files row", &row, &keys(f), &[], &none());
        for m in f["mappers"].as_array().expect("mappers") {
            check("a files mapper", &mapper, &keys(m), &[], &none());
        }
    }
}

#[test]
fn snapshot_and_diff_keys_are_the_documented_ones() {
    let out = run(&["--proc-root", &python_root(), "snapshot", "11364"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<Value> = String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object a line"))
        .collect();
    let heading = "`memtally snapshot`";
    let kinds = documented("json.md", heading, 0);
    // `exact`, `exclusive` and `wss` are there with `--exact` and `--wss`
    // only (live: tests/cli/snapshot_exact.rs); `dropped` where a read
    // did not stand.
    check("snapshot head", &documented("json.md", heading, 1), &keys(&lines[0]), &["wss"], &none());
    let mut seen = BTreeSet::new();
    for line in &lines[1..] {
        let kind = keys(line);
        assert_eq!(kind.len(), 1, "a record of one key: {line}");
        let kind = kind.into_iter().next().unwrap();
        let (table, optional): (usize, &[&str]) = match kind.as_str() {
            "process" => (2, &[]),
            "end" => (3, &["exact", "exclusive"]),
            _ => {
                seen.insert(kind);
                continue;
            }
        };
        check(
            &kind,
            &documented("json.md", heading, table),
            &keys(&line[&kind]),
            optional,
            &none(),
        );
        seen.insert(kind);
    }
    check("snapshot lines", &kinds, &seen, &["dropped"], &none());
    let snap = super::snapshot_value(&out.stdout);
    let one = documented("json.md", heading, 4);
    check("snapshot, one object", &one, &keys(&snap), &["exact", "wss"], &none());
    let dir = std::env::temp_dir().join(format!("memtally-json-docs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("a.json");
    std::fs::write(&file, serde_json::to_vec(&snap).unwrap()).unwrap();
    let f = file.to_str().unwrap();
    let diff = run_json(&["diff", f, f, "--format", "json"]);
    std::fs::remove_dir_all(&dir).ok();
    let documented_diff = documented("json.md", "`memtally diff --format json`", 0);
    // `notes` is there only when a snapshot disagrees with itself;
    // `vmmap` only for two vmmap reports (vmmap_over_time.rs); `exact`
    // only for two `--exact` snapshots (snapshot_exact.rs); `regions_left`
    // only past `--regions` (bounded_inputs.rs).
    let optional = ["notes", "vmmap", "exact", "regions_left"];
    check("diff", &documented_diff, &keys(&diff), &optional, &none());
}

#[test]
fn gpu_keys_are_the_documented_ones() {
    let root = repo().join("testdata/fixtures/gpu/machine");
    let doc = run_json(&["--proc-root", root.to_str().unwrap(), "gpu", "--format", "json"]);
    let heading = "`memtally gpu --format json`";
    check("gpu", &documented("gpu-json.md", heading, 0), &keys(&doc), &[], &none());
    let process = documented("gpu-json.md", heading, 1);
    let entry = documented("gpu-json.md", heading, 2);
    let processes = doc["processes"].as_array().expect("processes");
    assert!(!processes.is_empty(), "the fixture has GPU processes");
    for p in processes {
        check("a gpu process", &process, &keys(p), &[], &none());
        // `nvidia_use` is in nvidia-smi's entries only (the recorded tree
        // has none: tests/cli/gpu_nvidia.rs reads it).
        for e in p["gpu"].as_array().expect("gpu entries") {
            check("a gpu entry", &entry, &keys(e), &["nvidia_use"], &none());
        }
    }
    for e in doc["totals"].as_array().expect("totals") {
        check("a gpu total", &entry, &keys(e), &["nvidia_use"], &none());
    }
}

fn check_vmmap(file: &Path) {
    let doc = run_json(&["vmmap", file.to_str().unwrap(), "--format", "json"]);
    let what = file.display().to_string();
    // `grouped` comes with `--by` only.
    check(
        &what,
        &documented("vmmap-json.md", "## Top level", 0),
        &keys(&doc),
        &["grouped"],
        &none(),
    );
    let header = documented("vmmap-json.md", "## `header`", 0);
    let every: Vec<&str> = header.iter().map(String::as_str).collect();
    check(&format!("{what} header"), &header, &keys(&doc["header"]), &every, &none());
    let region = documented("vmmap-json.md", "## region", 0);
    for r in doc["regions"].as_array().expect("regions") {
        check(&format!("{what} region"), &region, &keys(r), &[], &none());
    }
    let unparsed = documented("vmmap-json.md", "## `unparsed`", 0);
    let samples: BTreeSet<String> =
        ["unreadable_samples", "damaged_samples"].map(String::from).into();
    check(&format!("{what} unparsed"), &unparsed, &keys(&doc["unparsed"]), &[], &samples);
}

#[test]
fn vmmap_keys_are_the_documented_ones() {
    let mut files: Vec<std::path::PathBuf> =
        std::fs::read_dir(repo().join("testdata/fixtures/vmmap"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
    match shared() {
        Some(s) => files.extend(
            std::fs::read_dir(s.join("fixtures/vmmap")).unwrap().map(|e| e.unwrap().path()),
        ),
        None => eprintln!("skipped ../shared/fixtures/vmmap: ../shared is absent"),
    }
    files.retain(|f| f.extension().is_some_and(|e| e == "txt"));
    files.sort();
    assert!(!files.is_empty());
    for f in &files {
        check_vmmap(f);
    }
}

#[test]
fn the_key_reader_reads_tables_and_skips_prose() {
    let region = documented("json.md", "### A region", 0);
    assert!(region.contains("start") && region.contains("end") && region.contains("thp_eligible"));
    assert!(!region.iter().any(|k| k.contains('…')));
    let sizes = listed("json.md", "### Size keys");
    assert!(sizes.contains("pss_dirty") && sizes.contains("locked"), "{sizes:?}");
}

/// The key order of the documents: every object's keys sorted (the order
/// they have always printed in, which render::json keeps), so a document
/// parsed and printed again is the same bytes; `show` prints its head
/// and regions first, as they stream, so there each region is.
#[test]
fn documents_print_their_keys_sorted() {
    let python = python_root();
    let gpu = repo_path("testdata/fixtures/gpu/machine");
    let printed = |args: &[&str]| {
        let out = run(args);
        assert!(out.status.success(), "memtally {args:?}");
        String::from_utf8(out.stdout).expect("UTF-8")
    };
    let sorted = |text: &str| {
        let doc: Value = serde_json::from_str(text).expect("JSON");
        serde_json::to_string(&doc).unwrap() + "\n"
    };
    for args in [
        &["--proc-root", &python, "top", "--format", "json"][..],
        &["--proc-root", &python, "top", "--by", "cgroup", "--format", "json"],
        &["--proc-root", &python, "machine", "--format", "json"],
        &["--proc-root", &python, "cgroup", "--format", "json"],
        &["--proc-root", &python, "show", "--tree", "11364", "--format", "json"],
        &["--proc-root", &gpu, "gpu", "--format", "json"],
    ] {
        let text = printed(args);
        assert_eq!(sorted(&text), text, "memtally {args:?}: keys out of order");
    }
    let text = printed(&["--proc-root", &python, "show", "11364", "--format", "json"]);
    assert!(text.starts_with(r#"{"comm":"#), "the head first: {}", &text[..80]);
    let doc: Value = serde_json::from_str(&text).unwrap();
    for r in doc["regions"].as_array().expect("regions") {
        let region = serde_json::to_string(r).unwrap();
        assert!(text.contains(&region), "a region's keys out of order: {region}");
    }
}

/// Every document printed with `--format json` carries `schema`, the
/// version CHANGELOG.md's compatibility promise is about; each line of
/// `watch`'s JSON Lines too. Snapshot files carry `memtally_snapshot`
/// instead (their own format version, read back by `diff`).
#[test]
fn every_json_document_carries_its_schema_version() {
    let python = python_root();
    let gpu = repo_path("testdata/fixtures/gpu/machine");
    let vmmap = repo_path("testdata/fixtures/vmmap/02_fmt22_resident.txt");
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("a.json");
    let snap_arg = snap.to_str().unwrap();
    let taken = run(&["--proc-root", &python, "snapshot", "11364", "-o", snap_arg]);
    assert!(taken.status.success());
    let text = std::fs::read_to_string(&snap).unwrap();
    let head: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(head["memtally_snapshot"], 2, "a snapshot's first line has its format version");
    for args in [
        &["--proc-root", &python, "top", "--format", "json"][..],
        &["--proc-root", &python, "top", "--by", "cgroup", "--format", "json"],
        &["--proc-root", &python, "machine", "--format", "json"],
        &["--proc-root", &python, "cgroup", "--format", "json"],
        &["--proc-root", &python, "show", "11364", "--format", "json"],
        &["--proc-root", &python, "show", "--tree", "11364", "--format", "json"],
        &["--proc-root", &python, "show", "11364", "--classic", "--format", "json"],
        &["--proc-root", &gpu, "gpu", "--format", "json"],
        &["vmmap", &vmmap, "--format", "json"],
        &["diff", snap_arg, snap_arg, "--format", "json"],
        &["--proc-root", &python, "watch", "--pid", "11364", "--count", "2", "--format", "json"],
    ] {
        let out = run(args);
        assert!(
            out.status.success(),
            "memtally {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(!text.trim().is_empty(), "memtally {args:?} printed nothing");
        for line in text.lines() {
            let doc: Value = serde_json::from_str(line).expect("one JSON document a line");
            assert_eq!(doc["schema"], 1, "memtally {args:?}: {}", &line[..line.len().min(200)]);
        }
    }
}
