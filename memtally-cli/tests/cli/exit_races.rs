//! A process that exits or execs while `memtally capture` records it: the
//! kernel ends its smaps early, at a mapping boundary, without an error.
//! The capture must then fail (exit 3, no tree left) or keep the tree
//! marked incomplete, never leave the part it read as the whole; and what
//! reads a marked tree back says it is partial. (`show` of one process
//! under the same races is the library's:
//! memtally-core/tests/library/races.rs.)

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::{copied_fixture, exec_loop, many_mappings, memtally};

const PAGES: usize = 12_000;

/// `show PID --format json` of a recorded tree: its partial and notes,
/// or `None` when it said the process had exited (exit 3: a capture that
/// kept no mapping before the process was gone).
fn show_back(dir: &std::path::Path, pid: u32) -> Option<(bool, String)> {
    let d = dir.to_str().unwrap();
    let show = memtally()
        .args(["--proc-root", d, "show", &pid.to_string(), "--format", "json"])
        .output()
        .unwrap();
    if show.status.code() == Some(3) {
        assert!(String::from_utf8_lossy(&show.stderr).contains("has exited"));
        return None;
    }
    assert!(show.status.success(), "{}", String::from_utf8_lossy(&show.stderr));
    let show: serde_json::Value = serde_json::from_slice(&show.stdout).unwrap();
    Some((show["partial"].as_bool().unwrap(), show["notes"].to_string()))
}

/// `top --format json` of a recorded tree: its partial and failed.
fn top_back(dir: &std::path::Path) -> (bool, String) {
    let d = dir.to_str().unwrap();
    let top = memtally().args(["--proc-root", d, "top", "--format", "json"]).output().unwrap();
    assert!(top.status.success(), "{}", String::from_utf8_lossy(&top.stderr));
    let top: serde_json::Value = serde_json::from_slice(&top.stdout).unwrap();
    (top["partial"].as_bool().unwrap(), top["failed"].to_string())
}

/// Whether a capture left its incomplete mark in `DIR/PID`.
fn marked(dir: &std::path::Path, pid: u32) -> Option<String> {
    std::fs::read_to_string(dir.join(pid.to_string()).join("memtally-incomplete")).ok()
}

#[test]
fn capture_of_a_process_killed_mid_read_is_never_left_complete() {
    let (mut complete, mut incomplete, mut gone) = (0, 0, 0);
    let runs = 16;
    let tmp = tempfile::tempdir().unwrap();
    for i in 0..runs {
        let child = many_mappings(PAGES);
        let pid = child.pid as u32;
        let dir = tmp.path().join(i.to_string());
        let cap = memtally()
            .args(["capture", &pid.to_string(), "-o", dir.to_str().unwrap()])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(2 * i as u64));
        child.kill();
        let out = cap.wait_with_output().unwrap();
        match out.status.code() {
            Some(0) => {
                if let Some(why) = marked(&dir, pid) {
                    // Kept, said, and read back as partial with the reason.
                    assert_eq!(why.trim(), "exited while being recorded", "run {i}");
                    let said = String::from_utf8_lossy(&out.stdout);
                    assert!(said.contains("incomplete: pid"), "run {i}: {said}");
                    let smaps = std::fs::read(dir.join(pid.to_string()).join("smaps")).unwrap();
                    match show_back(&dir, pid) {
                        Some((partial, notes)) => {
                            assert!(
                                partial && notes.contains("recorded incomplete"),
                                "run {i}: {notes}"
                            )
                        }
                        // Nothing of it was kept: then it is said gone.
                        None => assert!(!smaps.windows(7).any(|w| w == b"VmFlags"), "run {i}"),
                    }
                    let (partial, failed) = top_back(&dir);
                    assert!(partial && failed.contains("recorded incomplete"), "run {i}: {failed}");
                    incomplete += 1;
                    continue;
                }
                let smaps = std::fs::read(dir.join(pid.to_string()).join("smaps")).unwrap();
                let regions =
                    smaps.split(|&b| b == b'\n').filter(|l| l.starts_with(b"VmFlags")).count();
                assert!(
                    regions >= PAGES,
                    "run {i}: exit 0, unmarked, with {regions} regions of {PAGES}+"
                );
                complete += 1;
            }
            Some(3) => {
                gone += 1;
                assert!(
                    !dir.join(pid.to_string()).exists(),
                    "run {i}: a capture that failed left a tree in place"
                );
            }
            other => panic!("run {i}: exit {other:?}: {}", String::from_utf8_lossy(&out.stderr)),
        }
    }
    eprintln!("{runs} kills during capture: {complete} complete, {incomplete} kept marked incomplete, {gone} said gone");
    assert!(incomplete > 0, "no kill landed during a capture: the test aimed badly");
}

/// A recorded tree with the capture's incomplete mark: `show` and `top`
/// say so in their JSON (`partial`, the note's words) and the table. (The
/// library's reading of the mark, zombie included, is tested in
/// memtally-core/tests/library/races.rs.)
#[test]
fn a_tree_marked_incomplete_is_said_partial() {
    let (_tmp, dir) = copied_fixture("python3-mmap");
    assert_eq!(show_back(&dir, 11364), Some((false, "[]".into())));
    assert_eq!(top_back(&dir), (false, "[]".into()));
    std::fs::write(dir.join("11364/memtally-incomplete"), "exited while being recorded\n").unwrap();
    let (partial, notes) = show_back(&dir, 11364).unwrap();
    assert!(
        partial && notes.contains("recorded incomplete (exited while being recorded)"),
        "{notes}"
    );
    let (partial, failed) = top_back(&dir);
    assert!(partial && failed.contains("recorded incomplete"), "{failed}");
    let table =
        memtally().args(["--proc-root", dir.to_str().unwrap(), "show", "11364"]).output().unwrap();
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(table.contains("note: pid 11364 was recorded incomplete"), "{table}");
}

/// `capture` of a shell that execs itself in a loop: every capture is
/// whole (the stack and the vDSO, at the top of the address space, are
/// in its smaps) or marked incomplete; never cut short and unmarked.
#[test]
fn capture_of_a_process_that_execs_mid_read_is_whole_or_marked() {
    let tmp = tempfile::tempdir().unwrap();
    let mut looping = exec_loop(tmp.path(), 7);
    let pid = looping.id();
    let start = Instant::now();
    let (mut runs, mut whole, mut incomplete, mut failed) = (0, 0, 0, 0);
    // At least ten captures however slow the machine (each one is a few
    // hundred ms under load), more while two seconds last.
    while runs < 10 || (start.elapsed() < Duration::from_secs(2) && runs < 200) {
        let dir = tmp.path().join(format!("c{runs}"));
        let out = memtally()
            .args(["capture", &pid.to_string(), "-o", dir.to_str().unwrap()])
            .output()
            .unwrap();
        runs += 1;
        match out.status.code() {
            Some(0) => {
                if let Some(why) = marked(&dir, pid) {
                    assert!(why.contains("ran a new program") || why.contains("exited"), "{why}");
                    incomplete += 1;
                } else {
                    let smaps =
                        std::fs::read_to_string(dir.join(pid.to_string()).join("smaps")).unwrap();
                    assert!(
                        smaps.contains("[stack]") && smaps.contains("[vdso]"),
                        "run {runs}: an unmarked capture cut short:\n{smaps}"
                    );
                    whole += 1;
                }
            }
            // The read itself failed while the program was replaced.
            Some(3) => failed += 1,
            other => panic!("exit {other:?}: {}", String::from_utf8_lossy(&out.stderr)),
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    let _ = looping.kill();
    let _ = looping.wait();
    eprintln!("{runs} captures of a process exec'ing in a loop: {whole} whole, {incomplete} marked incomplete, {failed} failed (exit 3)");
    assert!(runs >= 10);
}
