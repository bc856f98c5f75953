//! `gpu` of a selection reads the selection's files in full and, of the
//! other processes, only what finds the holders of the same clients and
//! buffers: their fds (and their maps only where the selection holds a
//! dma-buf). A live process of many mappings beside it is not read; the
//! figures of every recorded process are those of the whole machine's view.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

use crate::support::lone::{lone, spawn_mapper};
use crate::support::{memtally, repo};

fn fixture() -> PathBuf {
    repo().join("testdata/fixtures/gpu/machine")
}

fn gpu_json(args: &[&str]) -> Value {
    let root = fixture();
    let out = memtally()
        .args(["--proc-root", root.to_str().unwrap(), "gpu", "--format", "json"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Each recorded process shown alone (by PID and by --tree) has exactly
/// the figures it has in the machine's view: shared clients and buffers
/// still divided among every holder, the dma-buf that process 200 only
/// maps (no fd) included.
#[test]
fn a_selected_process_keeps_its_machine_wide_figures() {
    let all = gpu_json(&[]);
    let processes = all["processes"].as_array().unwrap();
    assert!(processes.len() >= 6, "{all}");
    for p in processes {
        let pid = p["pid"].as_u64().unwrap().to_string();
        for args in [vec![pid.as_str()], vec!["--pid", pid.as_str()]] {
            let one = gpu_json(&args);
            let shown = one["processes"].as_array().unwrap();
            assert_eq!(shown.len(), 1, "{args:?}: {one}");
            assert_eq!(&shown[0], p, "gpu {args:?} against the machine's view");
            // The machine's buffers of that process, each once.
            assert_eq!(one["dmabuf"]["size"], p["dmabuf"]["size"], "{args:?}");
        }
    }
    // A tree: 100 and its child 101 share client 11 and buffer 5001 (with 200).
    let tree = gpu_json(&["--tree", "100"]);
    let pick = |doc: &Value, pid: u64| {
        doc["processes"].as_array().unwrap().iter().find(|p| p["pid"] == pid).cloned()
    };
    for pid in [100, 101] {
        assert_eq!(pick(&tree, pid), pick(&all, pid), "pid {pid} in --tree 100");
    }
    assert_eq!(pick(&tree, 101).unwrap()["dmabuf"]["pss"], 1048576, "5001 divided by three");
}

/// Whether strace can trace here.
fn strace() -> bool {
    Command::new("strace").arg("-V").output().is_ok_and(|o| o.status.success())
}

/// `gpu --tree SMALL` beside a live process of 20,000 mappings: the
/// small one's maps is read, the big one's maps and smaps are not opened.
#[test]
fn gpu_of_a_tree_opens_no_other_process_maps() {
    if !strace() {
        eprintln!("skipped: strace is not installed (apt-get install strace)");
        return;
    }
    let big = spawn_mapper(20_000, None);
    let small = lone(4096);
    let (big_pid, small_pid) = (big.child.0.id(), small.child.0.id());
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace");
    let out = Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=openat", "-o"])
        .arg(&trace)
        .arg(env!("CARGO_BIN_EXE_memtally"))
        .args(["gpu", "--tree", &small_pid.to_string(), "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let opened = std::fs::read_to_string(&trace).unwrap();
    let of = |pid: u32, file: &str| format!("\"/proc/{pid}/{file}\"");
    assert!(opened.contains(&of(small_pid, "maps")), "the selection's maps is read");
    for file in ["maps", "smaps"] {
        assert!(!opened.contains(&of(big_pid, file)), "opened /proc/{big_pid}/{file}");
    }
    drop(big);
}
