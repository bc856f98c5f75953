//! macOS vmmap reports as snapshots: diff two saved reports (text or
//! `memtally vmmap --format json`) and draw their region-size histogram.

use super::{run, run_json};
use serde_json::Value;

const BEFORE: &str = "\
Process:         GpuDemo [5150]
Path:            /Applications/GpuDemo.app/Contents/MacOS/GpuDemo
OS Version:      macOS 26.5.2 (25F84)
VM page size:  16384 bytes

==== Writable regions for process 5150
REGION TYPE                    START - END         [ VSIZE  RSDNT  DIRTY   SWAP] PRT/MAX SHRMOD PURGE    REGION DETAIL
IOSurface                   103000000-103400000    [ 4096K  4096K  4096K     0K] rw-/rw- SM=SHM PURGE=N
IOAccelerator               103400000-103410000    [   64K    64K    64K     0K] rw-/rw- SM=SHM PURGE=V
MALLOC_SMALL                103410000-103c10000    [ 8192K  1024K  1024K     0K] rw-/rwx SM=PRV          DefaultMallocZone_0x1023f0000
";

/// Later: the malloc zone dirtied 3 MiB more, a second IOSurface appeared,
/// and the volatile IOAccelerator region was emptied.
const AFTER: &str = "\
Process:         GpuDemo [5150]
Path:            /Applications/GpuDemo.app/Contents/MacOS/GpuDemo
OS Version:      macOS 26.5.2 (25F84)
VM page size:  16384 bytes

==== Writable regions for process 5150
REGION TYPE                    START - END         [ VSIZE  RSDNT  DIRTY   SWAP] PRT/MAX SHRMOD PURGE    REGION DETAIL
IOSurface                   103000000-103400000    [ 4096K  4096K  4096K     0K] rw-/rw- SM=SHM PURGE=N
IOAccelerator               103400000-103410000    [   64K     0K     0K     0K] rw-/rw- SM=SHM PURGE=E
MALLOC_SMALL                103410000-103c10000    [ 8192K  4096K  4096K     0K] rw-/rwx SM=PRV          DefaultMallocZone_0x1023f0000
IOSurface                   104000000-104200000    [ 2048K  2048K  2048K     0K] rw-/rw- SM=SHM PURGE=N
";

const K: i64 = 1024;

fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

fn check_vmmap_diff(d: &Value) {
    assert_eq!(d["totals"]["delta"]["dirty"].as_i64(), Some((3072 + 2048 - 64) * K));
    let cat = |name: &str| {
        d["categories"].as_array().unwrap().iter().find(|c| c["category"] == name).cloned().unwrap()
    };
    assert_eq!(cat("MALLOC_SMALL")["delta"]["dirty"].as_i64(), Some(3072 * K));
    assert_eq!(cat("IOSurface")["delta"]["dirty"].as_i64(), Some(2048 * K));
    assert_eq!(cat("IOSurface")["delta"]["size"].as_i64(), Some(2048 * K));
    assert_eq!(cat("IOAccelerator")["delta"]["rss"].as_i64(), Some(-64 * K));
    assert_eq!(d["categories"][0]["category"], "MALLOC_SMALL", "largest dirty growth first");
    let appeared: Vec<&Value> =
        d["regions"].as_array().unwrap().iter().filter(|r| r["status"] == "appeared").collect();
    assert_eq!(appeared.len(), 1);
    assert_eq!(appeared[0]["start"].as_u64(), Some(0x104000000));
    assert_eq!(appeared[0]["region_type"], "IOSurface");
}

#[test]
fn two_saved_vmmap_reports_diff_directly() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (write(dir.path(), "a.txt", BEFORE), write(dir.path(), "b.txt", AFTER));
    let d = run_json(&["diff", &a, &b, "--format", "json"]);
    check_vmmap_diff(&d);
    assert_eq!(d["processes"][0]["pid"].as_u64(), Some(5150));
}

/// The IOAccelerator region went from volatile to empty (the system
/// purged it): the diff says so per region, in the table and in JSON.
#[test]
fn diff_shows_purge_state_changes_per_region() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (write(dir.path(), "a.txt", BEFORE), write(dir.path(), "b.txt", AFTER));
    let d = run_json(&["diff", &a, &b, "--format", "json"]);
    let changes = d["purge_changes"].as_array().expect("purge_changes");
    assert_eq!(changes.len(), 1, "{changes:?}");
    let c = &changes[0];
    assert_eq!((c["purge_before"].as_str(), c["purge_after"].as_str()), (Some("V"), Some("E")));
    assert_eq!(c["start"].as_u64(), Some(0x103400000));
    assert_eq!(c["region_type"], "IOAccelerator");
    assert_eq!(c["before"]["rss"].as_i64(), Some(64 * K));
    assert_eq!(c["after"]["rss"].as_i64(), Some(0));
    let out = run(&["diff", &a, &b]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("purge-state changes: 1 region(s)"), "{text}");
    assert!(text.contains("V -> E  103400000-103410000 IOAccelerator"), "{text}");
    let csv = String::from_utf8(run(&["diff", &a, &b, "--format", "csv"]).stdout).unwrap();
    let line = csv.lines().find(|l| l.starts_with("purge,")).expect("a purge line");
    assert!(line.starts_with("purge,103400000-103410000,IOAccelerator V -> E,changed,"), "{line}");
    // The same report on both sides: no change of state.
    let d = run_json(&["diff", &a, &a, "--format", "json"]);
    assert_eq!(d["purge_changes"].as_array().map(Vec::len), Some(0));
}

#[test]
fn vmmap_json_output_is_a_snapshot_too() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.txt", BEFORE);
    let b = write(dir.path(), "b.txt", AFTER);
    let ja = dir.path().join("a.json");
    std::fs::write(&ja, run(&["vmmap", &a, "--format", "json"]).stdout).unwrap();
    // JSON before, text after: the same numbers.
    let d = run_json(&["diff", ja.to_str().unwrap(), &b, "--format", "json"]);
    check_vmmap_diff(&d);
}

/// A vmmap report reads back the same from its text and from its JSON:
/// `diff` of the JSON of each recorded report prints what `diff` of the
/// texts does. (Read as a tree of values, a report whose header has no
/// `Path:` lost its process's name: `"path": null` was taken for a path.)
#[test]
fn a_vmmap_report_diffs_the_same_from_its_text_and_its_json() {
    let dir = tempfile::tempdir().unwrap();
    let mut texts: Vec<std::path::PathBuf> =
        std::fs::read_dir(super::repo().join("testdata/fixtures/vmmap"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "txt"))
            .collect();
    texts.sort();
    let json: Vec<String> = texts
        .iter()
        .map(|t| {
            let out = run(&["vmmap", t.to_str().unwrap(), "--format", "json"]);
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let name = t.file_stem().unwrap().to_string_lossy();
            let path = dir.path().join(format!("{name}.json"));
            std::fs::write(&path, out.stdout).unwrap();
            path.to_str().unwrap().to_string()
        })
        .collect();
    assert!(texts.len() >= 10, "the recorded reports: {texts:?}");
    for i in 0..texts.len() {
        for j in [i, (i + 1) % texts.len()] {
            let (a, b) = (texts[i].to_str().unwrap(), texts[j].to_str().unwrap());
            let from_text = run(&["diff", a, b, "--format", "json", "--min-delta", "0"]);
            let from_json =
                run(&["diff", &json[i], &json[j], "--format", "json", "--min-delta", "0"]);
            assert!(from_text.status.success(), "{}", String::from_utf8_lossy(&from_text.stderr));
            assert_eq!(
                String::from_utf8_lossy(&from_text.stdout),
                String::from_utf8_lossy(&from_json.stdout),
                "diff {a} {b}, from the texts and from their JSON"
            );
        }
    }
}

#[test]
fn a_linux_snapshot_and_a_vmmap_report_do_not_mix() {
    let dir = tempfile::tempdir().unwrap();
    let v = write(dir.path(), "a.txt", BEFORE);
    let linux = dir.path().join("l.json");
    let me = std::process::id().to_string();
    std::fs::write(&linux, run(&["show", &me, "--format", "json"]).stdout).unwrap();
    // Two documents of different systems: bad input (5), as any document
    // diff cannot compare, naming both kinds and what to compare instead.
    let out = run(&["diff", linux.to_str().unwrap(), &v]);
    assert_eq!(out.status.code(), Some(5));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot compare a linux snapshot"), "{err}");
    assert!(err.contains("with a vmmap one"), "{err}");
    assert!(err.contains("compare two Linux snapshots or two vmmap reports"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    let png = write(dir.path(), "x.png", "\u{89}PNG\r\n\u{1a}\n");
    let out = run(&["diff", &png, &v]);
    assert_eq!(out.status.code(), Some(5), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn plot_of_a_vmmap_report_is_a_size_histogram() {
    let dir = tempfile::tempdir().unwrap();
    let b = write(dir.path(), "b.txt", AFTER);
    let svg_path = dir.path().join("h.svg");
    let out = run(&["plot", &b, "-o", svg_path.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (_, desc) = super::svg_data(&svg_path);
    let bars: Vec<(String, u64, u64)> = desc["bars"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["label"].as_str().unwrap().to_string(),
                b["value"].as_u64().unwrap(),
                b["part"].as_u64().unwrap(),
            )
        })
        .collect();
    // 64K (emptied: purgeable), 2M, 4M, 8M.
    assert_eq!(
        bars,
        vec![
            ("≤ 64.0K".to_string(), 1, 1),
            ("≤ 2.0M".to_string(), 1, 0),
            ("≤ 4.0M".to_string(), 1, 0),
            ("≤ 8.0M".to_string(), 1, 0)
        ]
    );
    let only = run(&["plot", &b, "-o", svg_path.to_str().unwrap(), "--types", "IOSurface"]);
    assert!(only.status.success());
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    assert!(svg.contains("IOSurface"));
    assert!(!svg.contains("≤ 8.0M"), "MALLOC_SMALL left out");
    // The option before the input (it took the input for a type), and
    // two types in one value.
    std::fs::remove_file(&svg_path).unwrap();
    let before =
        run(&["plot", "--types", "IOSurface,IOAccelerator", &b, "-o", svg_path.to_str().unwrap()]);
    assert!(before.status.success(), "{}", String::from_utf8_lossy(&before.stderr));
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    assert!(svg.contains("IOSurface") && !svg.contains("≤ 8.0M"), "{svg}");
}

/// JSON and CSV print regions as they are read (bounded memory): every
/// selected region is there once, with or without `--types` and `--by`.
#[test]
fn streamed_json_and_csv_hold_every_selected_region() {
    let dir = super::repo().join("testdata/fixtures/vmmap");
    let mut seen = 0;
    for f in std::fs::read_dir(dir).unwrap() {
        let f = f.unwrap().path();
        let f = f.to_str().unwrap();
        for extra in [&[][..], &["--types", "IOSurface,MALLOC"][..], &["--by", "purge"][..]] {
            let mut args = vec!["vmmap", f, "--format", "json"];
            args.extend(extra);
            let out = run(&args);
            if out.status.code() == Some(5) {
                continue; // a fixture that is meant to be refused
            }
            let v: Value = serde_json::from_slice(&out.stdout).expect("whole JSON");
            let n = v["regions"].as_array().unwrap().len() as u64;
            assert_eq!(Some(n), v["regions_selected"].as_u64(), "{f} {extra:?}");
            args[3] = "csv";
            let csv = String::from_utf8(run(&args).stdout).unwrap();
            if v["regions_read"] == 0 && !v["summary"].as_array().unwrap().is_empty() {
                // No region lines: the CSV is the summary table (vmmap_csv.rs).
                assert!(csv.starts_with("kind,region_type,count,"), "{f}: {csv}");
            } else {
                assert_eq!(csv.lines().count() as u64, n + 1, "{f} {extra:?}");
            }
            seen += 1;
        }
    }
    assert!(seen >= 20, "{seen}");
}

/// Two reports of one process: an IOSurface goes from non-volatile to
/// volatile (the app marked it purgeable). Its dirty bytes stay; its
/// footprint leaves for reclaimable memory (issue 21, item 12).
const FLIP_BEFORE: &str = "\
Process:         GpuDemo [5150]
OS Version:      macOS 26.5.2 (25F84)
VM page size:  16384 bytes
Physical footprint:         13.1M

==== Writable regions for process 5150
REGION TYPE                    START - END         [ VSIZE  RSDNT  DIRTY   SWAP] PRT/MAX SHRMOD PURGE    REGION DETAIL
IOSurface                   103000000-103400000    [ 4096K  4096K  4096K     0K] rw-/rw- SM=SHM PURGE=N
IOSurface                   103400000-103800000    [ 4096K  4096K  4096K     0K] rw-/rw- SM=SHM PURGE=N
MALLOC_SMALL                103810000-104010000    [ 8192K  5120K  5120K     0K] rw-/rwx SM=PRV          DefaultMallocZone_0x1023f0000
";

#[test]
fn a_purge_flip_shows_in_the_footprint_and_reclaimable() {
    let dir = tempfile::tempdir().unwrap();
    let after = FLIP_BEFORE
        .replace(
            "103800000    [ 4096K  4096K  4096K     0K] rw-/rw- SM=SHM PURGE=N",
            "103800000    [ 4096K  4096K  4096K     0K] rw-/rw- SM=SHM PURGE=V",
        )
        .replace("13.1M", "9.1M");
    let (a, b) = (write(dir.path(), "a.txt", FLIP_BEFORE), write(dir.path(), "b.txt", &after));
    let d = run_json(&["diff", &a, &b, "--format", "json"]);
    assert_eq!(d["totals"]["delta"]["dirty"].as_i64(), Some(0), "dirty reads no change");
    let v = &d["vmmap"]["total"];
    assert_eq!(v["footprint"]["before"].as_i64(), Some(13 << 20));
    assert_eq!(v["footprint"]["delta"].as_i64(), Some(-4096 * K));
    assert_eq!(v["reclaimable"]["delta"].as_i64(), Some(4096 * K));
    assert!(d["vmmap"]["physical_footprint"]["delta"].as_i64().unwrap() < 0, "{d}");
    let types = d["vmmap"]["types"].as_array().unwrap();
    assert_eq!(types.len(), 1, "MALLOC_SMALL did not move: {types:?}");
    assert_eq!(types[0]["region_type"], "IOSurface");
    assert_eq!(types[0]["footprint"]["after"].as_i64(), Some(4096 * K), "halved");
    let text = String::from_utf8(run(&["diff", &a, &b]).stdout).unwrap();
    assert!(
        text.contains(
            "footprint: 13.0M -> 9.0M (-4.0M); reclaimable (volatile purgeable): 0 -> 4.0M (+4.0M)"
        ),
        "{text}"
    );
    // CSV: `footprint` lines, the total and each changed type.
    let csv = String::from_utf8(run(&["diff", &a, &b, "--format", "csv"]).stdout).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let line =
        csv.lines().find(|l| l.starts_with("footprint,IOSurface,")).expect("a footprint line");
    let cells: Vec<&str> = line.split(',').collect();
    let at = |name: &str| cells[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!((at("footprint_before"), at("footprint_after")), ("8388608", "4194304"), "{csv}");
    assert_eq!(at("reclaimable_delta"), "4194304", "{csv}");
    // The same report twice: nothing moved.
    let same = run_json(&["diff", &a, &a, "--format", "json"]);
    assert_eq!(same["vmmap"]["total"]["footprint"]["delta"].as_i64(), Some(0));
    assert_eq!(same["vmmap"]["types"].as_array().map(Vec::len), Some(0));
}

/// A `-summary` report has no regions to flip: its VOLATILE and NONVOL
/// columns are compared. The published llama-server report, and the same
/// with its IOAccelerator (graphics) bytes marked volatile.
#[test]
fn summary_only_reports_diff_their_purgeable_columns() {
    let Some(dir) = super::shared().map(|s| s.join("fixtures/vmmap")) else {
        println!("skipping: ../shared/fixtures/vmmap is absent");
        return;
    };
    let f = dir.join("11_macos-26.4.1_vmmap-summary_llama-server.txt");
    let Ok(text) = std::fs::read_to_string(&f) else {
        println!("skipping: no {}", f.display());
        return;
    };
    let row = "IOAccelerator (graphics)          5008K    4864K    4864K       0K       0K    4864K       0K      142 ";
    let volatile = "IOAccelerator (graphics)          5008K    4864K    4864K       0K    4864K       0K       0K      142 ";
    assert!(text.contains(row), "the published row");
    let tmp = tempfile::tempdir().unwrap();
    let b = write(tmp.path(), "b.txt", &text.replace(row, volatile));
    let a = f.to_str().unwrap();
    let d = run_json(&["diff", a, &b, "--format", "json"]);
    let t = &d["vmmap"]["total"];
    for (key, delta) in
        [("volatile", 4864), ("nonvol", -4864), ("footprint", -4864), ("reclaimable", 4864)]
    {
        assert_eq!(t[key]["delta"].as_i64(), Some(delta * K), "{key}: {t}");
    }
    assert_eq!(d["vmmap"]["types"][0]["region_type"], "IOAccelerator (graphics)");
    let out = String::from_utf8(run(&["diff", a, &b]).stdout).unwrap();
    assert!(out.contains("purgeable (summary): volatile 0 -> 4.8M (+4.8M)"), "{out}");
}
