//! Selections that find nothing, memtally's own process, and `watch`'s
//! per-sample output: live children started here.

use std::time::Duration;

use crate::support::{
    fork_ready, pause_forever, run, run_json, spawn, spawn_steady_grower, Mapping, MIB,
};

/// A PID with no `/proc` directory now (and, being above every PID this
/// machine has handed out lately, one that never existed in this test).
fn unused_pid() -> u32 {
    (900_000..4_000_000).find(|p| !std::path::Path::new(&format!("/proc/{p}")).exists()).unwrap()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `top --pid`, `top --tree`, `watch PID`, `show --name`, `snapshot` and
/// `capture` of something that is not there: exit code 3 and one line
/// that says what was asked for.
#[test]
fn empty_explicit_selections_exit_3_with_one_line() {
    let pid = unused_pid().to_string();
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("s.json");
    let cap = dir.path().join("cap");
    let cases: Vec<Vec<&str>> = vec![
        vec!["top", "--pid", &pid],
        vec!["top", "--tree", &pid],
        vec!["top", "--tree", &pid, "--format", "json"],
        vec!["watch", &pid, "--count", "1"],
        vec!["watch", &pid, "--count", "1", "--format", "json"],
        vec!["show", "--tree", &pid],
        vec!["snapshot", "--tree", &pid, "-o", snap.to_str().unwrap()],
        vec!["top", "--name", "^no-process-is-called-this-zq9$"],
        vec!["gpu", "--name", "^no-process-is-called-this-zq9$"],
        vec!["capture", "--name", "^no-process-is-called-this-zq9$", "-o", cap.to_str().unwrap()],
    ];
    for args in cases {
        let out = run(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: one line: {err}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout");
        if args.contains(&pid.as_str()) {
            assert!(err.contains(&pid), "{args:?} names the PID: {err}");
        } else {
            assert!(err.contains("no process matches --name"), "{args:?}: {err}");
        }
    }
    assert!(!snap.exists() && !cap.exists(), "nothing written");
}

/// A kernel thread named alone is refused as `show PID` refuses it (exit
/// code 5, its name). (Beside a real process it is left out and counted:
/// the library's selections test.)
#[test]
fn a_kernel_thread_named_alone_is_bad_input() {
    let comm = std::fs::read_to_string("/proc/2/comm").unwrap_or_default();
    let status = std::fs::read_to_string("/proc/2/status").unwrap_or_default();
    if comm.trim() != "kthreadd" || status.contains("VmSize") {
        eprintln!("skipped: pid 2 is not the kernel thread kthreadd here");
        return;
    }
    for args in [vec!["top", "--pid", "2"], vec!["watch", "2", "--count", "1"]] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(5), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("process 2 (kthreadd) is a kernel thread"),
            "{}",
            stderr(&out)
        );
    }
}

/// A PID that never existed next to a live one: the note says there is
/// no such process, not that it exited during the scan, and the JSON
/// lists it. (What the read finds is the library's selections test.)
#[test]
fn a_missing_pid_is_not_said_to_have_exited() {
    let child = spawn(Mapping::Anonymous(MIB));
    let missing = unused_pid();
    let list = format!("{},{missing}", child.pid);
    let out = run(&["top", "--pid", &list]);
    assert!(out.status.success(), "one of them exists: {}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains("exited during the scan"), "{text}");
    assert!(text.contains(&format!("no such process: {missing}")), "{text}");
    let doc = run_json(&["top", "--pid", &list, "--format", "json"]);
    assert_eq!(doc["missing"], serde_json::json!([missing]));
    assert_eq!(doc["vanished"], 0);
}

/// A `--name` pattern that matches only memtally's own command line
/// finds nothing (memtally leaves itself out); `--include-self` keeps it.
#[test]
fn name_leaves_memtally_itself_out() {
    let token = format!("self-token-{}-zq", std::process::id());
    let pattern = token.as_str();
    let out = run(&["show", "--name", pattern]);
    assert_eq!(out.status.code(), Some(3), "show summed itself: {}", stderr(&out));
    assert!(stderr(&out).contains("only memtally itself matched"), "{}", stderr(&out));
    let out = run(&["top", "--name", pattern, "--format", "json"]);
    assert_eq!(out.status.code(), Some(3));
    let doc = run_json(&["top", "--name", pattern, "--include-self", "--format", "json"]);
    let procs = doc["processes"].as_array().unwrap();
    assert_eq!(procs.len(), 1, "{doc}");
    assert!(procs[0]["command"].as_str().unwrap().contains("--include-self"), "{doc}");
    let help = String::from_utf8(run(&["top", "--help"]).stdout).unwrap();
    assert!(help.contains("--include-self") && help.contains("leave it out"), "{help}");
}

/// `watch --format csv`: a header once, then one CSV row per sample, and
/// nothing else (no table, no summary).
#[test]
fn watch_csv_is_one_row_per_sample() {
    let child = spawn(Mapping::Anonymous(4 * MIB));
    let out = run(&[
        "watch",
        &child.pid.to_string(),
        "--interval",
        "100ms",
        "--count",
        "3",
        "--format",
        "csv",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "header + 3 samples: {text}");
    assert!(lines[0].starts_with("elapsed_s,processes,rss,pss"), "{text}");
    let cols = lines[0].split(',').count();
    for l in &lines[1..] {
        let f: Vec<&str> = l.split(',').collect();
        assert_eq!(f.len(), cols, "{l}");
        assert_eq!(f[1], "1", "one process: {l}");
        let rss: u64 = f[2].parse().unwrap();
        assert!(rss >= 4 * MIB as u64, "the child's 4 MiB: {l}");
    }
}

/// `watch --format json`: JSON Lines, one object per sample as it is
/// taken, then the summary; a constant series has r² null, not 1 or NaN.
#[test]
fn watch_json_is_one_object_per_sample() {
    let child = spawn(Mapping::Anonymous(4 * MIB));
    let pid = child.pid.to_string();
    let out = run(&["watch", &pid, "--interval", "100ms", "--count", "4", "--format", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    let docs: Vec<serde_json::Value> =
        text.lines().map(|l| serde_json::from_str(l).expect("each line is JSON")).collect();
    assert_eq!(docs.len(), 5, "4 samples + summary: {text}");
    for (i, d) in docs[..4].iter().enumerate() {
        assert_eq!(d["type"], "sample");
        assert_eq!(d["index"], i);
        assert!(d["total"]["rss"].as_u64().unwrap() >= 4 * MIB as u64, "{d}");
        assert_eq!(d["processes"][0]["pid"], child.pid);
    }
    let summary = &docs[4];
    assert_eq!(summary["type"], "summary");
    assert_eq!(summary["samples"], 4);
    // The child's memory does not move: its RSS/PSS series is constant.
    let t = summary["trends"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["scope"] == "process" && t["key"] == pid.as_str())
        .unwrap();
    if t["pss_rate"] == 0.0 {
        assert!(t["pss_r2"].is_null(), "r² of a constant series is undefined: {t}");
        assert_eq!(t["steady_growth"], false);
    }
}

/// A recorded tree does not move: every series is constant, so r² is
/// undefined: `null` in JSON, empty in CSV, `-` in the table (not 1, not
/// NaN), and the verdict is no steady growth.
#[test]
fn r2_of_a_constant_series_is_undefined() {
    let root = crate::support::repo_path("testdata/fixtures/linux/python3-mmap/proc");
    let base =
        ["--proc-root", root.as_str(), "watch", "11364", "--interval", "10ms", "--count", "3"];
    let out = run(&[&base[..], &["--format", "json"]].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    let summary: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    let trends = summary["trends"].as_array().unwrap();
    assert!(trends.len() > 2, "{summary}");
    for t in trends {
        assert_eq!(t["pss_rate"], 0.0, "{t}");
        assert!(t["pss_r2"].is_null() && t["dirty_r2"].is_null(), "r² undefined: {t}");
        assert_eq!(t["steady_growth"], false);
    }
    let out = run(&base);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.to_lowercase().contains("nan"), "{text}");
    let total = text.lines().find(|l| l.starts_with("total ")).unwrap();
    assert!(total.trim_end().ends_with('-'), "R² of the total is `-`: {total}");
    assert!(text.contains("verdict: no steady growth"), "{text}");
}

/// A watched process that exits ends the watch with its summary, not an error.
#[test]
fn watch_ends_with_its_summary_when_the_process_exits() {
    let child = spawn_steady_grower(MIB, Duration::from_millis(100), 3);
    let pid = child.pid;
    let mut w = crate::support::memtally()
        .args(["watch", &pid.to_string(), "--interval", "100ms", "--count", "50"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let first = crate::support::watch_samples(&mut w, 3);
    drop(child);
    let out = w.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("watch stopped after"), "{}", stderr(&out));
    assert!(first.starts_with('['), "{first}");
    assert!(String::from_utf8(out.stdout).unwrap().contains("verdict:"));
}

/// `--by tree`: a row adds up its subtree, and the table (PROCS and a
/// note), JSON (`subtree`) and CSV (a `subtree` column) say so.
#[test]
fn tree_rows_say_they_are_subtree_sums() {
    let child = spawn(Mapping::Shared(2 * MIB, 2));
    let pid = child.pid.to_string();
    let out = run(&["top", "--by", "tree", "--tree", &pid]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    let header = text.lines().next().unwrap();
    assert!(header.contains(" PROCS "), "{text}");
    let root_row = text.lines().find(|l| l.trim_start().starts_with(&pid)).unwrap();
    let cells: Vec<&str> = root_row.split_whitespace().collect();
    assert_eq!(cells[2], "3", "the root row adds up 3 processes: {root_row}");
    assert!(text.contains("note: --by tree: each row adds up the process and all its descendants"));

    let doc = run_json(&["top", "--by", "tree", "--tree", &pid, "--format", "json"]);
    let rows = doc["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|r| r["subtree"] == true), "{doc}");
    assert_eq!(rows[0]["processes"], 3);
    let flat = run_json(&["top", "--tree", &pid, "--format", "json"]);
    assert!(flat["rows"].as_array().unwrap().iter().all(|r| r["subtree"] == false));

    let out = run(&["top", "--by", "tree", "--tree", &pid, "--format", "csv"]);
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "subtree").expect("a subtree column");
    for l in lines {
        assert_eq!(l.split(',').nth(col), Some("true"), "{l}");
    }
}

/// Processes that can be read only from status (as an unprivileged user,
/// root's children) sort by their RSS, not by PID as text.
#[test]
fn unreadable_processes_sort_by_rss() {
    let small = spawn(Mapping::Anonymous(MIB));
    let big = spawn(Mapping::Anonymous(16 * MIB));
    let pids = format!("{},{}", small.pid, big.pid);
    let Some(out) = crate::permissions::as_nobody(&["top", "--pid", &pids, "--format", "json"])
    else {
        return;
    };
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows: Vec<u64> =
        doc["rows"].as_array().unwrap().iter().map(|r| r["pid"].as_u64().unwrap()).collect();
    assert_eq!(rows, vec![big.pid as u64, small.pid as u64], "{doc}");
    // Every unreadable row of the whole machine: RSS never rises down the list.
    let out = crate::permissions::as_nobody(&["top", "--all", "--format", "json"]).unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rss: Vec<u64> = doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["pss"].is_null())
        .map(|r| r["rss"].as_u64().unwrap_or(0))
        .collect();
    assert!(rss.windows(2).all(|w| w[0] >= w[1]), "{rss:?}");
}

/// Permission denied says what blocked the read: here memtally's own uid
/// without CAP_SYS_PTRACE (it told root to run as root before).
#[test]
fn permission_denied_names_memtallys_own_standing() {
    let child = spawn(Mapping::Anonymous(MIB));
    let Some(out) = crate::permissions::as_nobody(&["show", &child.pid.to_string()]) else {
        return;
    };
    assert_eq!(out.status.code(), Some(4));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("memtally runs as uid 65534 without CAP_SYS_PTRACE"), "{err}");
}

/// A process of memtally's own user that is not dumpable (it called
/// prctl(PR_SET_DUMPABLE, 0)): the message says so instead of telling the
/// user to run as that very user.
#[test]
fn a_process_that_is_not_dumpable_is_named() {
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: needs root to start a process as another user");
        return;
    }
    let (child, ready) = fork_ready(|ready| unsafe {
        // Raw system calls: the C library's setuid is not safe after a
        // fork of a multi-threaded process.
        if libc::syscall(libc::SYS_setgid, 65534) != 0
            || libc::syscall(libc::SYS_setuid, 65534) != 0
        {
            libc::_exit(1);
        }
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
        ready.signal();
        pause_forever()
    });
    let out = crate::permissions::as_nobody(&["show", &child.pid.to_string()]);
    drop(child);
    let Some(out) = out else { return };
    assert!(ready, "the child dropped to uid 65534");
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("not dumpable"), "{err}");
    assert!(!err.contains("run it as that user"), "it is that user: {err}");
}
