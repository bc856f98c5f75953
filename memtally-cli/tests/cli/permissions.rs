//! memtally run as an unprivileged user against root's processes: each
//! case gives its documented message and exit code, and partial results
//! say they are partial. Needs root and `setpriv` to drop privileges;
//! elsewhere each test prints why it was skipped.

use std::process::{Command, Output};

use crate::support::{spawn, Mapping, MIB};

pub(crate) fn as_nobody(args: &[&str]) -> Option<Output> {
    let is_root = unsafe { libc::geteuid() } == 0;
    if !is_root || Command::new("setpriv").arg("--version").output().is_err() {
        eprintln!("skipped: needs root and setpriv to drop to an unprivileged user");
        return None;
    }
    Some(
        Command::new("setpriv")
            .args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                env!("CARGO_BIN_EXE_memtally"),
            ])
            .args(args)
            .output()
            .expect("setpriv runs"),
    )
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn assert_denied(o: &Output, pid: u32) {
    assert_eq!(o.status.code(), Some(4), "{}", err(o));
    let e = err(o);
    assert_eq!(e.lines().count(), 1, "one line: {e}");
    assert!(e.contains("permission denied") && e.contains(&pid.to_string()), "{e}");
    assert!(e.contains("CAP_SYS_PTRACE"), "says what would fix it: {e}");
}

#[test]
fn top_as_nobody_is_partial_and_says_so() {
    let child = spawn(Mapping::Anonymous(MIB));
    let Some(out) = as_nobody(&["top", "--all", "--format", "json"]) else { return };
    assert!(out.status.success(), "{}", err(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["partial"], true);
    assert!(doc["restricted"].as_u64().unwrap() >= 1);
    let me = doc["processes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["pid"].as_u64() == Some(child.pid as u64))
        .expect("root's process is listed from status");
    assert_eq!(me["source"], "status");
    assert!(me["rss"].as_u64().unwrap() >= MIB as u64, "RSS from status");
    assert!(me["pss"].is_null() && me["uss"].is_null(), "unknown, not 0");
    let table = as_nobody(&["top"]).unwrap();
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(text.contains("could not be read in detail"), "{text}");
}

#[test]
fn show_capture_and_snapshot_of_roots_process_are_denied() {
    let child = spawn(Mapping::Anonymous(MIB));
    let pid = child.pid.to_string();
    let Some(show) = as_nobody(&["show", &pid]) else { return };
    assert_denied(&show, child.pid);
    assert_denied(&as_nobody(&["show", "--tree", &pid]).unwrap(), child.pid);
    assert_denied(&as_nobody(&["show", &pid, "--classic"]).unwrap(), child.pid);
    assert_denied(&as_nobody(&["snapshot", &pid]).unwrap(), child.pid);
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("cap");
    assert_denied(
        &as_nobody(&["capture", &pid, "-o", target.to_str().unwrap()]).unwrap(),
        child.pid,
    );
    assert!(!target.exists(), "nothing is written when nothing could be read");
}
