//! No address leak through output files (issue 35 item 7): what memtally
//! writes of a root process, read as root, is its user's alone, as the
//! process's own `/proc/PID/maps` is: another user reading the capture,
//! the snapshot or the report gets "Permission denied" too.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;

use crate::support::{run, spawn, Mapping, MIB};

const NOBODY: u32 = 65534;

/// Whether user `nobody` can read `path` (`cat` run as nobody).
fn nobody_reads(path: &Path) -> bool {
    std::process::Command::new("cat")
        .arg(path)
        .uid(NOBODY)
        .gid(NOBODY)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("cat runs")
        .success()
}

#[test]
fn captures_snapshots_and_reports_of_a_root_process_are_private() {
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: needs root (the files of a root process)");
        return;
    }
    let child = spawn(Mapping::Anonymous(MIB));
    let pid = child.pid.to_string();
    // The premise: nobody may not read the process's maps.
    assert!(!nobody_reads(&Path::new("/proc").join(&pid).join("maps")));
    let tmp = tempfile::tempdir().unwrap();
    // Anyone may pass through the directory: only the files' modes guard them.
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(nobody_reads(Path::new("/etc/hostname")) || nobody_reads(Path::new("/etc/passwd")));

    let capture = tmp.path().join("rec");
    let out = run(&["capture", &pid, "-o", capture.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let maps = capture.join(&pid).join("maps");
    assert!(std::fs::read_to_string(&maps).unwrap().contains(&format!("{:x}-", child.addr)));
    assert!(!nobody_reads(&maps), "nobody reads the capture's maps");
    assert!(!nobody_reads(&capture.join(&pid).join("smaps")));
    let mode = std::fs::metadata(capture.join(&pid)).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
    // The machine's files are no secret.
    assert!(nobody_reads(&capture.join("meminfo")));

    let snap = tmp.path().join("snap.json");
    let out = run(&["snapshot", &pid, "-o", snap.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(std::fs::metadata(&snap).unwrap().len() > 0);
    assert_eq!(std::fs::metadata(&snap).unwrap().permissions().mode() & 0o777, 0o600);
    assert!(!nobody_reads(&snap), "nobody reads the snapshot");

    let page = tmp.path().join("report.html");
    let out = run(&["report", &pid, "-o", page.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(std::fs::read_to_string(&page).unwrap().contains("<html"));
    assert_eq!(std::fs::metadata(&page).unwrap().permissions().mode() & 0o777, 0o600);
    assert!(!nobody_reads(&page), "nobody reads the report");
}
