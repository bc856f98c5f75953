//! SIGINT, SIGTERM and SIGHUP (issue 27 item 7): every command ends
//! within about a second of each, keeps what it promised (a watch file
//! holds the samples taken; a written file is whole or absent), leaves
//! no temporary file, and exits 128 + the signal (130, 143, 129). Every
//! wait is bounded; every child is killed on failure.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Child, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::hostile::copy_dir;
use crate::support::stall::Stalled;
use crate::support::tmux::{child_of, Tmux};
use crate::support::{memtally, names, repo, spawn, Killed, Mapping, MIB};

const SIGNALS: [(i32, &str); 3] =
    [(libc::SIGINT, "SIGINT"), (libc::SIGTERM, "SIGTERM"), (libc::SIGHUP, "SIGHUP")];

/// How long after the signal a command may take to end: the second it
/// has, and room for a loaded test machine.
const WITHIN: Duration = Duration::from_millis(1800);

fn recorded() -> PathBuf {
    repo().join("testdata/fixtures/linux/python3-mmap/proc")
}

fn start(args: &[&str]) -> Killed {
    Killed(
        memtally()
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("memtally starts"),
    )
}

/// Reads `n` lines of `child`'s standard output (within 20 s), the
/// command's sign that it is under way.
fn read_lines(child: &mut Child, n: usize) -> Vec<String> {
    let out = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            if tx.send(line.unwrap_or_default()).is_err() {
                return;
            }
        }
    });
    let t = Instant::now();
    let mut lines = Vec::new();
    while lines.len() < n {
        let left = Duration::from_secs(20).saturating_sub(t.elapsed());
        match rx.recv_timeout(left) {
            Ok(l) => lines.push(l),
            Err(_) => panic!("only {} of {n} lines in 20 s: {lines:?}", lines.len()),
        }
    }
    lines
}

/// Sends `sig` and waits (bounded) for the end: its status and how long it took.
fn signal_and_wait(child: &mut Child, sig: i32) -> (Option<ExitStatus>, Duration) {
    assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(10) {
        if let Some(s) = child.try_wait().unwrap() {
            return (Some(s), t.elapsed());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    (None, t.elapsed())
}

/// Whether process `pid` has a handler for `sig` now (`SigCgt` in its
/// status): before memtally takes its signals, the default action ends it.
fn catches(pid: u32, sig: i32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (sig - 1)) != 0)
}

fn stderr(child: &mut Child) -> String {
    let mut s = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut s);
    }
    s
}

/// Asserts `child` ended for `sig` as promised: 128 + sig, within [`WITHIN`].
fn assert_ended(what: &str, child: &mut Child, sig: (i32, &str)) -> Duration {
    let (status, took) = signal_and_wait(child, sig.0);
    let err = stderr(child);
    let code = status.and_then(|s| s.code());
    assert_eq!(code, Some(128 + sig.0), "{what} after {}: {status:?} in {took:?}: {err}", sig.1);
    assert!(took < WITHIN, "{what} took {took:?} to end after {}", sig.1);
    took
}

/// `watch -o FILE` stopped by each signal: FILE holds every sample
/// printed before it (and no temporary file is left), the summary is
/// printed, and the status is 128 + the signal.
#[test]
fn watch_file_holds_the_samples_taken_after_each_signal() {
    let child = spawn(Mapping::Anonymous(MIB));
    let pid = child.pid.to_string();
    for sig in SIGNALS {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.csv");
        let mut watch = start(&[
            "watch",
            &pid,
            "--interval",
            "100ms",
            "--no-categories",
            "--format",
            "json",
            "-o",
            file.to_str().unwrap(),
        ]);
        // JSON Lines: one per sample, so 5 lines are 5 samples taken.
        let seen = read_lines(&mut watch.0, 5);
        let took = assert_ended("watch -o", &mut watch.0, sig);
        assert_eq!(names(dir.path()), ["s.csv"], "after {}: the file alone", sig.1);
        let csv = std::fs::read_to_string(&file).unwrap();
        let samples: std::collections::BTreeSet<&str> =
            csv.lines().skip(1).filter_map(|l| l.split(',').next()).collect();
        assert!(
            samples.len() >= seen.len(),
            "after {}: {} samples in the file, {} printed before the signal",
            sig.1,
            samples.len(),
            seen.len()
        );
        eprintln!("watch -o, {}: ended in {took:?}, {} samples kept", sig.1, samples.len());
    }
}

/// Waits (at most 5 s) until a thread of `child` waits in the hung mount
/// (its `wchan` is a FUSE wait, as `fuse_get_req`): the read that never
/// returns has begun. Where the kernel hides `wchan`, the 5 s pass.
fn wait_hung(child: &Child) {
    let tasks = format!("/proc/{}/task", child.id());
    let hung = || {
        std::fs::read_dir(&tasks).into_iter().flatten().flatten().any(|t| {
            std::fs::read_to_string(t.path().join("wchan")).is_ok_and(|w| w.starts_with("fuse"))
        })
    };
    let t = Instant::now();
    while !hung() && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Each long-running command ends within about a second of each signal,
/// with 128 + the signal: watch (between samples), serve (its listener),
/// and a command stuck in a read that never returns (a hung mount).
#[test]
fn long_commands_end_within_a_second_of_each_signal() {
    let root = recorded();
    let root = root.to_str().unwrap();
    // The three signals side by side, each with its own processes, files
    // and hung mount (readers of one hung mount queue behind each other's
    // locks in the kernel, and the second could end only after the first).
    let one = |sig: (i32, &str)| {
        let tmp = tempfile::tempdir().unwrap();
        let stalled_root = tmp.path().join("proc");
        copy_dir(&recorded(), &stalled_root);
        let stall = Stalled::mount(&stalled_root.join("11364"))
            .map_err(|why| eprintln!("stuck read: skipped: no stalling file system here ({why})"))
            .ok();
        let mut watch = start(&["--proc-root", root, "watch", "11364", "--interval", "1h"]);
        read_lines(&mut watch.0, 1);
        let took = assert_ended("watch", &mut watch.0, sig);
        eprintln!("watch, {}: {took:?}", sig.1);

        let mut serve = start(&["--proc-root", root, "serve", "--listen", "127.0.0.1:0"]);
        read_lines(&mut serve.0, 1);
        let took = assert_ended("serve", &mut serve.0, sig);
        eprintln!("serve, {}: {took:?}", sig.1);

        if stall.is_some() {
            let stalled = stalled_root.to_str().unwrap();
            let mut show = start(&["--proc-root", stalled, "show", "11364"]);
            wait_hung(&show.0);
            let took = assert_ended("show on a hung mount", &mut show.0, sig);
            eprintln!("show stuck in a read, {}: {took:?}", sig.1);
            // Ended for it while reading: no file, and no temporary one.
            let dir = tempfile::tempdir().unwrap();
            let file = dir.path().join("s.json");
            let mut snap =
                start(&["--proc-root", stalled, "snapshot", "11364", "-o", file.to_str().unwrap()]);
            wait_hung(&snap.0);
            assert_ended("snapshot -o on a hung mount", &mut snap.0, sig);
            assert_eq!(names(dir.path()), Vec::<String>::new(), "after {}", sig.1);
            // Ended for it with its file open (watch makes it before the
            // first sample, which never returns): the temporary file goes
            // too (memtally_core::write::remove_unfinished).
            let series = dir.path().join("series.csv");
            let args = ["--proc-root", stalled, "watch", "11364", "-o", series.to_str().unwrap()];
            let mut watch = start(&args);
            wait_hung(&watch.0);
            assert_ended("watch -o on a hung mount", &mut watch.0, sig);
            assert_eq!(names(dir.path()), Vec::<String>::new(), "after {}", sig.1);
        }
        drop(stall);
    };
    std::thread::scope(|scope| {
        for sig in SIGNALS {
            scope.spawn(move || one(sig));
        }
    });
}

/// `snapshot -o FILE` signalled at moments from its start to its end:
/// the file is whole (valid JSON) or absent, never a temporary file left
/// beside it; ended by the signal, the status is 143. (Signalled before
/// memtally takes the signals, its first milliseconds, the default action
/// ends it: then too nothing is left.)
#[test]
fn snapshot_to_a_file_under_sigterm_is_whole_or_absent() {
    for delay_ms in [0u64, 10, 25, 40, 55, 70, 85, 100, 150] {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.json");
        let mut snap = start(&["snapshot", "-o", file.to_str().unwrap()]);
        std::thread::sleep(Duration::from_millis(delay_ms));
        // Not yet caught: the default action may end it (on a loaded
        // machine memtally can take longer than the delay to start). A
        // handler set between this look and the signal still gives 143.
        let caught = catches(snap.0.id(), libc::SIGTERM);
        let (status, took) = signal_and_wait(&mut snap.0, libc::SIGTERM);
        let err = stderr(&mut snap.0);
        let code = status.and_then(|s| s.code());
        let before_start = !caught && status.and_then(|s| s.signal()) == Some(libc::SIGTERM);
        assert!(
            matches!(code, Some(0 | 143)) || before_start,
            "SIGTERM at {delay_ms} ms: {status:?}: {err}"
        );
        assert!(took < WITHIN, "snapshot took {took:?} to end after SIGTERM");
        let left = names(dir.path());
        match left.as_slice() {
            [] => {}
            [one] if one == "s.json" => {
                // A file left is a whole snapshot (its end line read).
                crate::support::read_snapshot(&file);
            }
            other => panic!("SIGTERM at {delay_ms} ms left {other:?}"),
        }
        eprintln!("snapshot -o, SIGTERM at {delay_ms} ms: {code:?} in {took:?}, left {left:?}");
    }
}

/// `ui` in a terminal: each signal puts the terminal back and the shell
/// sees 128 + the signal.
#[test]
fn ui_exits_128_plus_each_signal() {
    if !Tmux::available() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    let bin = env!("CARGO_BIN_EXE_memtally");
    let rec = recorded();
    for sig in SIGNALS {
        let t = Tmux::start(80, 24, &repo());
        t.line(&format!("{bin} --proc-root {} ui --interval 1h; echo exit=$?", rec.display()));
        t.wait_for("the machine screen", |s| s.contains("machine (from meminfo)"));
        let shell: u32 = t.display("#{pane_pid}").parse().unwrap();
        let ui = child_of(shell).expect("memtally runs under the pane's shell");
        let sent = Instant::now();
        assert_eq!(unsafe { libc::kill(ui as i32, sig.0) }, 0);
        let want = format!("exit={}", 128 + sig.0);
        let screen = t.wait_for(&want, |s| s.lines().any(|l| l.starts_with("exit=")));
        let took = sent.elapsed();
        assert!(screen.lines().any(|l| l.trim() == want), "after {}:\n{screen}", sig.1);
        assert!(took < Duration::from_secs(3), "ui took {took:?} after {}", sig.1);
        eprintln!("ui, {}: {want} within {took:?}", sig.1);
    }
}
