//! Golden parity with the seed tool: `memtally vmmap F --seed-view` must
//! print exactly what `vmmap_seed.py --file F` printed (testdata/golden/vmmap,
//! made by scripts/golden-vmmap.sh), on the repo's fixtures and on the
//! published ones in ../shared. The seed reads `-pages` counts as bytes, so
//! those files are compared with `--page-size 1`, which does the same.

use std::path::PathBuf;

fn shared_dir() -> PathBuf {
    super::repo().join("../shared/fixtures/vmmap")
}

fn run(args: &[&str]) -> (String, String, i32) {
    let out = super::run(args);
    (
        String::from_utf8(out.stdout).expect("utf-8 stdout"),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

fn is_pages(file: &str) -> bool {
    let (json, err, code) = run(&["vmmap", file, "--format", "json"]);
    assert_eq!(code, 0, "{file}: {err}");
    let v: serde_json::Value = serde_json::from_str(&json).expect("json");
    v["header"]["pages"].as_bool().expect("header.pages")
}

/// (golden name, fixture path) pairs; shared ones only when ../shared exists.
fn cases() -> Vec<(PathBuf, PathBuf)> {
    let golden = super::repo().join("testdata/golden/vmmap");
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&golden)
        .expect("testdata/golden/vmmap")
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for g in entries {
        let name = g.file_name().unwrap().to_str().unwrap().to_string();
        let base = name.rsplitn(3, '.').nth(2).expect("NAME.KIND.out").to_string();
        let fixture = if let Some(b) = base.strip_prefix("own_") {
            super::repo().join("testdata/fixtures/vmmap").join(format!("{b}.txt"))
        } else if let Some(b) = base.strip_prefix("shared_") {
            if !shared_dir().is_dir() {
                continue;
            }
            shared_dir().join(format!("{b}.txt"))
        } else {
            panic!("unexpected golden file {name}");
        };
        assert!(fixture.is_file(), "golden {name} has no fixture {}", fixture.display());
        out.push((g, fixture));
    }
    out
}

#[test]
fn seed_view_matches_the_seed_byte_for_byte() {
    if !shared_dir().is_dir() {
        println!("skipping the published fixtures: {} is absent", shared_dir().display());
    }
    let cases = cases();
    assert!(cases.len() >= 24, "only {} golden cases", cases.len());
    let mut failures = Vec::new();
    let mut nonempty = 0;
    for (golden, fixture) in &cases {
        let expected = std::fs::read_to_string(golden).unwrap();
        let file = fixture.to_str().unwrap();
        let mut args = vec!["vmmap", file, "--seed-view"];
        if is_pages(file) {
            args.extend(["--page-size", "1"]);
        }
        if golden.to_str().unwrap().ends_with(".all.out") {
            args.extend(["--types", ""]);
        }
        let (got, err, code) = run(&args);
        assert_eq!(code, 0, "{args:?}: {err}");
        if got != expected {
            failures.push(format!("{args:?} differs from {}:\n{got}", golden.display()));
        }
        if !expected.is_empty() {
            nonempty += 1;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(nonempty >= 12, "only {nonempty} golden files have content");
}

/// Every file of every variant is read without unexplained losses: the only
/// unreadable lines are the ones each file is known to cut short.
#[test]
fn every_fixture_parses_with_only_known_losses() {
    let mut files: Vec<(PathBuf, u64)> = vec![
        ("01_fmt22_vsize_only", 0),
        ("02_fmt22_resident", 0),
        ("03_interleaved_comment", 0),
        ("04_modern_gpu_purge", 0),
        ("05_pages_indented", 0),
        ("06_pages_fractional", 0),
        ("07_default_width_cut", 1),
        ("08_summary_keyrows_cut", 1),
        ("09_summary_only", 0),
        ("10_crash_report", 0),
        ("11_mangled_comment", 0),
        ("12_unreadable", 3),
    ]
    .into_iter()
    .map(|(n, u)| (super::repo().join(format!("testdata/fixtures/vmmap/{n}.txt")), u))
    .collect();
    if shared_dir().is_dir() {
        for (prefix, unreadable) in [
            ("01_", 0),
            ("02_", 0),
            ("03_", 0),
            ("04_", 0),
            ("05_", 0), // the last region line, cut after `rw-`, is read as damaged
            ("06_", 0),
            ("07_", 1), // stops mid-line at `[ 29`
            ("08_", 0),
            ("09_", 0),
            ("10_", 0),
            ("11_", 0),
            ("12_", 0),
            ("13_", 1), // cut after `MALLOC_NANO metadata`
            ("14_", 0),
        ] {
            let f = std::fs::read_dir(shared_dir())
                .unwrap()
                .map(|e| e.unwrap().path())
                .find(|p| p.file_name().unwrap().to_str().unwrap().starts_with(prefix))
                .expect(prefix);
            files.push((f, unreadable));
        }
    } else {
        println!("skipping the published fixtures: {} is absent", shared_dir().display());
    }
    for (f, unreadable) in files {
        let file = f.to_str().unwrap();
        let (json, err, code) = run(&["vmmap", file, "--format", "json", "--types", ""]);
        assert_eq!(code, 0, "{file}: {err}");
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(
            v["unparsed"]["unreadable"].as_u64(),
            Some(unreadable),
            "{file}: {}",
            v["unparsed"]
        );
        let read =
            v["regions_read"].as_u64().unwrap() + v["summary"].as_array().unwrap().len() as u64;
        assert!(read > 0, "{file}: nothing read");
        // --strict fails exactly when something was unreadable, naming lines.
        let (_, err, code) = run(&["vmmap", file, "--strict"]);
        if unreadable > 0 {
            assert_eq!(code, 5, "{file}");
            assert!(err.contains("--strict") && err.contains("line "), "{err}");
        } else {
            assert_eq!(code, 0, "{file}: {err}");
        }
    }
}
