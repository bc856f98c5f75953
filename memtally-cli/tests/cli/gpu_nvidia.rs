//! `memtally gpu` with a stand-in `nvidia-smi` on PATH: the hand-written
//! `nvidia-smi -q -x` report of testdata/fixtures/gpu/nvidia (see
//! testdata/fixtures/gpu/README.md), a tool that hangs, fails or prints
//! something else, and none.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::gpu::{entry, figures, json_of, process, MIB};

/// Writes an executable `nvidia-smi` script into a fresh directory.
fn stand_in(body: &str) -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nvidia-smi");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// The notes about nvidia-smi (others may say that some processes' files
/// could not be read, which depends on the machine).
fn nvidia_notes(doc: &Value) -> Vec<String> {
    doc["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n.as_str())
        .filter(|n| n.contains("nvidia-smi"))
        .map(String::from)
        .collect()
}

/// `memtally ARGS` with `path` (the stand-in) first on PATH.
fn with_stand_in(path: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_memtally"))
        .args(args)
        .env("COLUMNS", "200")
        .env(
            "PATH",
            std::env::join_paths([path, Path::new("/usr/bin"), Path::new("/bin")]).unwrap(),
        )
        .output()
        .unwrap()
}

/// `gpu` of this test process as JSON, and how long it took.
fn live_gpu(path: &Path, extra: &[&str]) -> (Value, std::time::Duration) {
    let me = std::process::id().to_string();
    let mut args = vec!["gpu", "--pid", &me, "--format", "json"];
    args.extend(extra);
    let start = std::time::Instant::now();
    let out = with_stand_in(path, &args);
    (json_of(&out), start.elapsed())
}

/// Serves testdata/fixtures/gpu/nvidia/q-x.xml as `nvidia-smi -q -x`
/// (any other arguments fail), this test's PID in place of `@SELF@`.
fn two_gpus() -> tempfile::TempDir {
    let xml = crate::support::repo().join("testdata/fixtures/gpu/nvidia/q-x.xml");
    let me = std::process::id();
    stand_in(&format!(
        "[ \"$*\" = '-q -x' ] || {{ echo \"bad args: $*\" >&2; exit 2; }}\nsed 's/@SELF@/{me}/' '{}'",
        xml.display()
    ))
}

#[test]
fn nvidia_smi_good() {
    let me = std::process::id();
    let dir = two_gpus();
    let (doc, _) = live_gpu(dir.path(), &[]);
    let p = process(&doc, u64::from(me));
    // A graphics process on one GPU, a compute one on the other: one
    // entry per GPU, keyed by its UUID, saying which.
    let a = entry(p, "nvidia", "vram");
    assert_eq!(a["source"], "nvidia-smi");
    assert_eq!(a["device"], "GPU-0a1b2c3d-0000-1111-2222-333344445555");
    assert_eq!(a["nvidia_use"], "graphics");
    assert_eq!(figures(a), [Some(120 * MIB), None, None, None, None]);
    let gpus = p["gpu"].as_array().unwrap();
    assert_eq!(gpus.len(), 2, "{p}");
    assert_eq!(gpus[1]["device"], "GPU-9f8e7d6c-5555-4444-3333-222211110000");
    assert_eq!(gpus[1]["nvidia_use"], "compute");
    assert_eq!(figures(&gpus[1]), [Some(64 * MIB), None, None, None, None]);
    assert_eq!(p["proportional"], 184 * MIB);
    // The machine table: each GPU's total; pid 1's unknown figure adds
    // nothing and is said once.
    let totals: Vec<(&str, u64)> = doc["totals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["device"].as_str().unwrap(), t["total"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        totals,
        [
            ("GPU-0a1b2c3d-0000-1111-2222-333344445555", 120 * MIB),
            ("GPU-9f8e7d6c-5555-4444-3333-222211110000", 64 * MIB)
        ]
    );
    assert_eq!(
        nvidia_notes(&doc),
        ["nvidia-smi lists 1 process without a used-memory figure ([Insufficient Permissions]): unknown, not counted"]
    );
    // The table says what each process uses each GPU for.
    let me = me.to_string();
    let out = with_stand_in(dir.path(), &["gpu", "--pid", &me]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("vram (graphics)") && text.contains("vram (compute)"), "{text}");
}

#[test]
fn nvidia_smi_unknown_figure_is_shown_unknown() {
    // Pid 1 (a process of another user, to nvidia-smi) has no figure: it
    // is listed with an unknown one, never 0, never left out.
    let dir = two_gpus();
    let out = with_stand_in(dir.path(), &["gpu", "--pid", "1", "--format", "json"]);
    let doc = json_of(&out);
    let p = process(&doc, 1);
    let e = entry(p, "nvidia", "vram");
    assert_eq!(e["nvidia_use"], "compute");
    assert_eq!(figures(e), [None, None, None, None, None]);
    assert_eq!(e["proportional"], Value::Null);
}

#[test]
fn nvidia_smi_hanging_is_stopped_with_a_note() {
    let dir = stand_in("sleep 30");
    let (doc, took) = live_gpu(dir.path(), &["--nvidia-timeout", "1"]);
    assert!(took < std::time::Duration::from_secs(10), "took {took:?}");
    let notes = doc["notes"].to_string();
    assert!(notes.contains("did not answer within 1s and was stopped"), "{notes}");
    assert!(doc["processes"].as_array().unwrap().is_empty());
}

#[test]
fn nvidia_smi_failing_or_garbage_is_one_note() {
    let dir = stand_in(
        "echo \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\" >&2\nexit 9",
    );
    let (doc, _) = live_gpu(dir.path(), &[]);
    let notes = nvidia_notes(&doc);
    assert_eq!(notes.len(), 1, "{notes:?}");
    let n = notes[0].as_str();
    assert!(n.contains("failed with status 9") && n.contains("couldn't communicate"), "{n}");
    assert!(!n.contains('\n'));

    let dir = stand_in("echo 'pid, used_gpu_memory [MiB]'\necho 'hello'");
    let (doc, _) = live_gpu(dir.path(), &[]);
    let notes = nvidia_notes(&doc);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("nvidia-smi -q -x printed no XML document"), "{notes:?}");
}

#[test]
fn nvidia_smi_missing_is_silent() {
    if Path::new("/usr/bin/nvidia-smi").exists() || Path::new("/bin/nvidia-smi").exists() {
        println!("skipped: a real nvidia-smi is installed here");
        return;
    }
    let empty = tempfile::tempdir().unwrap();
    let (doc, _) = live_gpu(empty.path(), &[]);
    assert_eq!(nvidia_notes(&doc), Vec::<String>::new());
}

#[test]
fn capture_keeps_what_nvidia_smi_said() {
    // A recording of a CUDA process has no GPU figures in /proc: capture
    // keeps nvidia-smi's report, and `gpu` on the recording reads it back
    // with no nvidia-smi on PATH.
    let me = std::process::id();
    let dir = two_gpus();
    let rec = tempfile::tempdir().unwrap();
    let out_dir = rec.path().join("rec");
    let pid = me.to_string();
    let out_str = out_dir.to_str().unwrap();
    let cap = with_stand_in(dir.path(), &["capture", &pid, "-o", out_str]);
    let said = String::from_utf8_lossy(&cap.stdout);
    assert!(cap.status.success(), "{said}{}", String::from_utf8_lossy(&cap.stderr));
    assert!(said.contains("recorded nvidia-smi -q -x (nvidia-smi.xml)"), "{said}");
    let no_tool = tempfile::tempdir().unwrap();
    let out = with_stand_in(
        no_tool.path(),
        &["--proc-root", out_str, "gpu", "--pid", &pid, "--format", "json"],
    );
    let doc = json_of(&out);
    let p = process(&doc, u64::from(me));
    assert_eq!(p["proportional"], 184 * MIB, "{p}");
    assert_eq!(entry(p, "nvidia", "vram")["nvidia_use"], "graphics");
    // Without the stand-in, capture records no report and says nothing of it.
    let rec2 = rec.path().join("rec2");
    let cap = with_stand_in(no_tool.path(), &["capture", &pid, "-o", rec2.to_str().unwrap()]);
    assert!(cap.status.success());
    assert!(!String::from_utf8_lossy(&cap.stdout).contains("nvidia"));
    assert!(!rec2.join("nvidia-smi.xml").exists());
}

#[test]
fn a_recorded_h100_report_is_read_whole() {
    // What nvidia-smi printed on an H100 (testdata/fixtures/gpu/README.md),
    // served with this test's PID in place of the recorded python3's.
    let xml = crate::support::repo().join("testdata/fixtures/gpu/nvidia/h100-q-x.xml");
    let me = std::process::id();
    let dir = stand_in(&format!("sed 's|<pid>2747</pid>|<pid>{me}</pid>|' '{}'", xml.display()));
    let (doc, _) = live_gpu(dir.path(), &[]);
    let e = entry(process(&doc, u64::from(me)), "nvidia", "vram");
    assert_eq!(e["device"], "GPU-823b4e3d-003f-f673-1bda-769820b57c10");
    assert_eq!(e["nvidia_use"], "compute");
    assert_eq!(figures(e), [Some(4706 * MIB), None, None, None, None]);
    assert_eq!(nvidia_notes(&doc), Vec::<String>::new());
}
