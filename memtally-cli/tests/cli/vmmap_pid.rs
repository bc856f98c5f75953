//! `memtally vmmap --pid` against a stand-in `vmmap` script put first on
//! PATH: good output, a refusal, a failure, garbage, a hang, and no vmmap;
//! the summary form (`--summary`), and runs used as snapshots.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_memtally");

/// Writes an executable `vmmap` with `body` into a new directory.
fn stand_in(body: &str) -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("vmmap");
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

fn run_with_path(path: &Path, args: &[&str]) -> (String, String, i32) {
    let old = std::env::var("PATH").unwrap_or_default();
    let out = Command::new(BIN)
        .args(args)
        .env("PATH", format!("{}:{old}", path.display()))
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

#[test]
fn good_output_is_read_and_the_arguments_are_passed() {
    let fixture = &crate::support::repo_path("testdata/fixtures/vmmap/04_modern_gpu_purge.txt");
    // Refuses anything but `-noCoalesce 5150`.
    let dir = stand_in(&format!(
        "[ \"$1\" = -noCoalesce ] && [ \"$2\" = 5150 ] && [ $# -eq 2 ] || {{ echo \"bad args: $*\" >&2; exit 9; }}\ncat '{fixture}'"
    ));
    let (out, err, code) =
        run_with_path(dir.path(), &["vmmap", "--pid", "5150", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["regions_read"], 26);
    assert_eq!(v["source"], "vmmap -noCoalesce 5150");
    let (out, err, code) = run_with_path(dir.path(), &["vmmap", "--pid", "5150", "--seed-view"]);
    assert_eq!(code, 0, "{err}");
    let golden = std::fs::read_to_string(
        crate::support::repo().join("testdata/golden/vmmap/own_04_modern_gpu_purge.default.out"),
    )
    .unwrap();
    assert_eq!(out, golden);
}

#[test]
fn cannot_examine_process_is_explained() {
    let dir = stand_in(
        "echo 'vmmap[123]: [fatal] vmmap cannot examine process 77 (Finder) because the process does not exist.' >&2\nexit 1",
    );
    let (_, err, code) = run_with_path(dir.path(), &["vmmap", "--pid", "77"]);
    assert_eq!(code, 6);
    assert!(
        err.starts_with("memtally: vmmap cannot examine process 77: check that it exists"),
        "{err}"
    );
    assert!(err.contains("sudo"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn non_zero_exit_is_reported_with_its_first_line() {
    let dir = stand_in("echo 'something broke' >&2\necho 'more detail' >&2\nexit 3");
    let (_, err, code) = run_with_path(dir.path(), &["vmmap", "--pid", "12"]);
    assert_eq!(code, 6);
    assert_eq!(
        err.trim_end(),
        "memtally: vmmap -noCoalesce 12 failed with status 3: something broke"
    );
}

#[test]
fn garbage_output_is_not_vmmap_output() {
    let dir = stand_in("echo 'hello'\necho 'IOSurface 12-zz [ 1K ] rw-/rw- SM=SHM'");
    let (_, err, code) = run_with_path(dir.path(), &["vmmap", "--pid", "12"]);
    assert_eq!(code, 5, "{err}");
    assert!(err.contains("vmmap -noCoalesce 12: no vmmap region lines or summary table found in 2 line(s) (line 2:"), "{err}");
}

#[test]
fn a_hanging_vmmap_is_stopped_at_the_timeout() {
    // The child's own child keeps the pipe open: the whole group must go.
    let dir = stand_in("sleep 60 &\nsleep 60");
    let t = Instant::now();
    let (_, err, code) = run_with_path(dir.path(), &["vmmap", "--pid", "12", "--timeout", "1"]);
    assert!(t.elapsed() < Duration::from_secs(20), "took {:?}", t.elapsed());
    assert_eq!(code, 6);
    assert!(err.contains("did not finish within 1s and was stopped"), "{err}");
}

#[test]
fn no_vmmap_on_path() {
    let dir = tempfile::tempdir().unwrap();
    let out =
        Command::new(BIN).args(["vmmap", "--pid", "1"]).env("PATH", dir.path()).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(6));
    assert!(err.contains("vmmap not found on PATH"), "{err}");
}

#[test]
fn the_summary_form_runs_vmmap_summary_and_reads_its_table() {
    let fixture = &crate::support::repo_path("testdata/fixtures/vmmap/09_summary_only.txt");
    let dir = stand_in(&format!(
        "[ \"$1\" = -summary ] && [ \"$2\" = 5150 ] && [ $# -eq 2 ] || {{ echo \"bad args: $*\" >&2; exit 9; }}\ncat '{fixture}'"
    ));
    let args = ["vmmap", "--pid", "5150", "--summary", "--format", "json"];
    let (out, err, code) = run_with_path(dir.path(), &args);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["source"], "vmmap -summary 5150");
    assert_eq!(v["regions_read"], 0);
    assert_eq!(v["summary"].as_array().unwrap().len(), 8, "every row of the table");
    assert_eq!(v["header"]["process"], "llm-server");
    // The same as the saved file read directly, but for its name.
    let (saved, _, _) = run_with_path(dir.path(), &["vmmap", fixture, "--format", "json"]);
    let mut saved: serde_json::Value = serde_json::from_str(&saved).unwrap();
    saved["source"] = v["source"].clone();
    assert_eq!(saved, v);
    let (table, err, code) = run_with_path(dir.path(), &["vmmap", "--pid", "5150", "--summary"]);
    assert_eq!(code, 0, "{err}");
    assert!(table.contains("(from the summary table)"), "{table}");
    // A region listing asks for region lines the summary has not.
    let (_, err, code) =
        run_with_path(dir.path(), &["vmmap", "--pid", "5150", "--summary", "--regions"]);
    assert_eq!(code, 2, "{err}");
    let (_, err, code) = run_with_path(dir.path(), &["vmmap", fixture, "--summary"]);
    assert_eq!(code, 2, "--summary runs vmmap: it needs --pid: {err}");
}

#[test]
fn a_failing_or_hanging_summary_run_says_which_run() {
    let dir = stand_in("echo 'something broke' >&2\nexit 3");
    let (_, err, code) = run_with_path(dir.path(), &["vmmap", "--pid", "12", "--summary"]);
    assert_eq!(code, 6);
    assert_eq!(err.trim_end(), "memtally: vmmap -summary 12 failed with status 3: something broke");
    let dir = stand_in("sleep 60 &\nsleep 60");
    let t = Instant::now();
    let args = ["vmmap", "--pid", "12", "--summary", "--timeout", "1"];
    let (_, err, code) = run_with_path(dir.path(), &args);
    assert!(t.elapsed() < Duration::from_secs(20), "took {:?}", t.elapsed());
    assert_eq!(code, 6);
    assert!(err.contains("vmmap -summary 12 did not finish within 1s and was stopped"), "{err}");
}

/// What a Mac user does with runs of vmmap: each run's JSON is a
/// snapshot that diff, plot and report read (the second run: one
/// IOAccelerator region's purgeable memory emptied).
#[test]
fn runs_are_snapshots_for_diff_plot_and_report() {
    let fixture = &crate::support::repo_path("testdata/fixtures/vmmap/04_modern_gpu_purge.txt");
    let dir = stand_in(&format!(
        "case \"$2\" in 1) cat '{fixture}' ;; *) sed 's/PURGE=V/PURGE=E/' '{fixture}' ;; esac"
    ));
    let out = tempfile::tempdir().unwrap();
    let mut saved = Vec::new();
    for pid in ["1", "2"] {
        let (json, err, code) =
            run_with_path(dir.path(), &["vmmap", "--pid", pid, "--format", "json"]);
        assert_eq!(code, 0, "{err}");
        let p = out.path().join(format!("{pid}.json"));
        std::fs::write(&p, json).unwrap();
        saved.push(p.to_str().unwrap().to_string());
    }
    let (diff, err, code) =
        run_with_path(dir.path(), &["diff", &saved[0], &saved[1], "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let d: serde_json::Value = serde_json::from_str(&diff).unwrap();
    let flips = d["purge_changes"].as_array().map_or(0, Vec::len);
    assert!(flips > 0, "volatile regions became empty: {diff}");
    let svg = out.path().join("a.svg");
    let (_, err, code) =
        run_with_path(dir.path(), &["plot", &saved[0], "-o", svg.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));
    let html = out.path().join("r.html");
    let args = ["report", "--input", &saved[1], "-o", html.to_str().unwrap()];
    let (_, err, code) = run_with_path(dir.path(), &args);
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::read_to_string(&html).unwrap().contains("<html"));
}

#[test]
fn a_bare_pid_where_a_file_is_expected_asks_about_pid() {
    let cwd = tempfile::tempdir().unwrap();
    let run =
        |args: &[&str]| Command::new(BIN).args(args).current_dir(cwd.path()).output().unwrap();
    let out = run(&["vmmap", "640"]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "memtally: 640: no such file; did you mean --pid 640?\n"
    );
    // Another missing file: the system's own words, no guess.
    let out = run(&["vmmap", "nope.txt"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("--pid"));
    // A file that is named 640 is read.
    let fixture = crate::support::repo_path("testdata/fixtures/vmmap/04_modern_gpu_purge.txt");
    std::fs::copy(fixture, cwd.path().join("640")).unwrap();
    let out = run(&["vmmap", "640", "--format", "json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["source"], "640");
}
