//! `memtally vmmap --pid` against a stand-in `vmmap` script put first on
//! PATH: good output, a refusal, a failure, garbage, a hang, and no vmmap.

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
