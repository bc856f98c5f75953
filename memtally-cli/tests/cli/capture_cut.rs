//! A capture stopped midway says so (issue 35 item 4): a `capture --tree`
//! ended by a signal keeps the processes it recorded, marks the tree
//! incomplete (read back as partial, with a note), says on standard error
//! what it kept, and exits 128 + the signal; one that finished within the
//! signal's grace exits 0 with its whole output; one that fails on a full
//! disk leaves no empty directory behind.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::{fork_ready, map_and_touch, memtally, names, pause_forever, run, Forked};

/// A tree of `1 + kids` processes, each with about `pages` mappings (its
/// smaps takes milliseconds to read: a capture of the tree takes long
/// enough for a signal to land in its middle).
fn slow_tree(pages: usize, kids: usize) -> Forked {
    let (child, ready) = fork_ready(|ready| unsafe {
        let p = map_and_touch(pages * 4096, 0x5a);
        for i in (0..pages).step_by(2) {
            libc::mprotect((p as *mut u8).add(i * 4096).cast(), 4096, libc::PROT_READ);
        }
        for _ in 0..kids {
            if libc::fork() == 0 {
                pause_forever();
            }
        }
        ready.signal();
        pause_forever()
    });
    assert!(ready, "the tree is up");
    child
}

/// The process directories of a recording.
fn pid_dirs(dir: &Path) -> Vec<String> {
    names(dir).into_iter().filter(|n| n.bytes().all(|b| b.is_ascii_digit())).collect()
}

/// Starts `memtally ARGS`, sends `sig` once `ready` holds (polled; within
/// 20 s), and waits (bounded) for its end.
fn signal_when(args: &[&str], sig: i32, ready: impl Fn() -> bool) -> std::process::Output {
    let mut child = memtally()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("memtally starts");
    let t = Instant::now();
    while !ready() && t.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            panic!("memtally did not end within 10 s of the signal");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn a_tree_capture_stopped_by_a_signal_is_marked_and_read_back_partial() {
    let tree = slow_tree(6000, 30);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("rec");
    let d = dir.to_str().unwrap();
    let root = tree.pid.to_string();
    let out = signal_when(&["capture", "--tree", &root, "-o", d], libc::SIGTERM, || {
        dir.is_dir() && !pid_dirs(&dir).is_empty()
    });
    let stderr = String::from_utf8_lossy(&out.stderr);
    let kept = pid_dirs(&dir);
    assert!(
        kept.len() < 31,
        "the signal landed after the capture's end ({} processes): the test aimed badly; {stderr}",
        kept.len()
    );
    assert_eq!(out.status.code(), Some(128 + libc::SIGTERM), "{stderr}");
    assert!(!kept.is_empty());
    assert!(
        stderr.contains(&format!(
            "capture stopped by a signal: {} of 31 selected processes kept in {d}, marked incomplete",
            kept.len()
        )),
        "{stderr}"
    );
    let mark = std::fs::read_to_string(dir.join("memtally-incomplete")).unwrap();
    assert!(mark.contains(&format!("{} of 31 selected processes recorded", kept.len())), "{mark}");
    assert!(names(&dir).iter().all(|n| !n.starts_with(".memtally")), "{:?}", names(&dir));
    // Read back: partial, with the note.
    let top = run(&["--proc-root", d, "top", "--format", "json"]);
    assert!(top.status.success(), "{}", String::from_utf8_lossy(&top.stderr));
    let v: serde_json::Value = serde_json::from_slice(&top.stdout).unwrap();
    assert_eq!(v["partial"], true, "{v}");
    let notes = v["notes"].to_string();
    assert!(notes.contains("the recording is incomplete (stopped early"), "{notes}");
    // A whole capture of the same tree has no mark and reads back whole.
    let whole = tmp.path().join("whole");
    let w = whole.to_str().unwrap();
    let out = run(&["capture", "--tree", &root, "-o", w]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(pid_dirs(&whole).len(), 31);
    assert!(!whole.join("memtally-incomplete").exists());
    let v: serde_json::Value =
        serde_json::from_slice(&run(&["--proc-root", w, "top", "--format", "json"]).stdout)
            .unwrap();
    assert_eq!(v["partial"], false, "{v}");
}

#[test]
fn a_capture_that_finished_within_the_grace_exits_0_whole() {
    let one = slow_tree(8000, 0);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("rec");
    let d = dir.to_str().unwrap();
    let pid = one.pid.to_string();
    // The directory is made once smaps is read: the signal lands while
    // the process's files are written.
    let out = signal_when(&["capture", &pid, "-o", d], libc::SIGINT, || dir.is_dir());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{:?} {stderr}", out.status.signal());
    assert_eq!(pid_dirs(&dir), std::slice::from_ref(&pid));
    assert!(!dir.join("memtally-incomplete").exists());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(&format!("read it back with: memtally --proc-root {d} show {pid}")));
}

/// A small tmpfs mounted for the test; unmounted (lazily) on drop.
struct Mounted(PathBuf, #[allow(dead_code)] tempfile::TempDir);

impl Mounted {
    fn tmpfs(size: &str) -> Option<Mounted> {
        let tmp = tempfile::tempdir().unwrap();
        let at = tmp.path().join("small");
        std::fs::create_dir(&at).unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size},mode=0755"), "tmpfs"])
            .arg(&at)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Mounted(at, tmp))
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[test]
fn a_capture_that_fails_on_a_full_disk_removes_the_directory_it_made() {
    let Some(small) = Mounted::tmpfs("64k") else {
        eprintln!("skipped: cannot mount a tmpfs (needs root)");
        return;
    };
    let big = slow_tree(2000, 0);
    let dir = small.0.join("rec");
    let out = run(&["capture", &big.pid.to_string(), "-o", dir.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("No space left on device"), "{stderr}");
    assert!(!dir.exists(), "left behind: {:?}", names(&dir));
    assert!(names(&small.0).is_empty(), "{:?}", names(&small.0));
    // The same capture where there is room is whole.
    let room = tempfile::tempdir().unwrap();
    let out = run(&["capture", &big.pid.to_string(), "-o", room.path().to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}
