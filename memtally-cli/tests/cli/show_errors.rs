//! `memtally show` on processes it cannot read: one clear line, the
//! documented exit code, never a panic.

use std::process::Command;

use crate::support::{run, spawn, Mapping, MIB};

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn missing_process_exits_3_with_one_line() {
    // PIDs above pid_max (at most 2^22) never exist.
    let out = run(&["show", "4194305"]);
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no process 4194305"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn kernel_thread_is_refused_with_the_reason() {
    // kthreadd is PID 2 on every Linux; in a PID namespace it may be absent.
    let comm = std::fs::read_to_string("/proc/2/comm").unwrap_or_default();
    if comm.trim() != "kthreadd" {
        eprintln!("skipped: PID 2 is not kthreadd here (PID namespace)");
        return;
    }
    let out = run(&["show", "2"]);
    assert_eq!(out.status.code(), Some(5));
    let err = stderr(&out);
    assert!(err.contains("kernel thread"), "{err}");
    assert_eq!(err.lines().count(), 1);
}

/// Sort fields are types parsed by clap (issue 20): a bad one is clap's
/// usage error (exit 2) naming the value and listing every possible one,
/// where the library used to check the names by hand.
#[test]
fn bad_sort_field_is_refused_by_clap_with_the_possible_values() {
    for (args, listed) in [
        (&["show", "1", "--sort", "bogus"][..], "regions, anonymous, locked"),
        (&["top", "--sort", "pss,bogus"][..], "footprint_pss_shmem, processes, pid"),
        (&["diff", "a.json", "b.json", "--sort", "bogus"][..], "swap_pss, size"),
        (
            &["plot", "s.csv", "-o", "s.svg", "--figure", "bogus"][..],
            "swap_pss, pss_dirty, footprint",
        ),
    ] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = stderr(&out);
        assert!(err.contains("invalid value 'bogus'"), "{args:?}: {err}");
        assert!(err.contains("[possible values: ") && err.contains(listed), "{args:?}: {err}");
    }
    // `active` is a GPU column, not a figure: no view reads it for another.
    let out = run(&["top", "--sort", "active"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn unreadable_recorded_smaps_is_a_parse_error_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("77");
    std::fs::create_dir(&p).unwrap();
    std::fs::write(p.join("comm"), "x\n").unwrap();
    std::fs::write(p.join("cmdline"), "x\0").unwrap();
    std::fs::write(p.join("smaps"), "1000-2000 r--p 0 08:01 5 /x\nRss:  many kB\n").unwrap();
    let out = run(&["--proc-root", dir.path().to_str().unwrap(), "show", "77"]);
    assert_eq!(out.status.code(), Some(5));
    let err = stderr(&out);
    assert!(err.contains("77/smaps") && err.contains("line 2"), "{err}");
}

/// Runs memtally as an unprivileged user when this machine lets us
/// (root with setpriv); returns `None` with a printed reason otherwise.
fn as_nobody(args: &[&str]) -> Option<std::process::Output> {
    let is_root = unsafe { libc::geteuid() } == 0;
    let has_setpriv = Command::new("setpriv").arg("--version").output().is_ok();
    if !is_root || !has_setpriv {
        eprintln!("skipped: needs root and setpriv to drop to an unprivileged user");
        return None;
    }
    let bin = env!("CARGO_BIN_EXE_memtally");
    Some(
        Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", bin])
            .args(args)
            .output()
            .expect("setpriv runs"),
    )
}

#[test]
fn another_users_process_says_who_and_what_would_fix_it() {
    let child = spawn(Mapping::Anonymous(MIB));
    let Some(out) = as_nobody(&["show", &child.pid.to_string()]) else { return };
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("permission denied"), "{err}");
    assert!(err.contains("uid 0") || err.contains("user root"), "{err}");
    assert!(err.contains("CAP_SYS_PTRACE"), "{err}");
}

/// Where maps can be read but smaps cannot, show says only virtual sizes
/// are known, and --classic still works.
#[test]
fn maps_only_gives_virtual_sizes_marked_partial() {
    let src = crate::support::repo().join("testdata/fixtures/linux/maps-only");
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("4242");
    std::fs::create_dir(&p).unwrap();
    std::fs::copy(src.join("maps"), p.join("maps")).unwrap();
    std::fs::write(p.join("comm"), "sleep\n").unwrap();
    std::fs::write(p.join("cmdline"), "sleep\x00100\x00").unwrap();
    std::fs::write(p.join("smaps"), "").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p.join("smaps"), std::fs::Permissions::from_mode(0o000)).unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let root = dir.path().to_str().unwrap();
    let Some(out) = as_nobody(&["--proc-root", root, "show", "4242", "--format", "json"]) else {
        return;
    };
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["source"], "maps");
    assert_eq!(doc["partial"], true);
    assert!(doc["totals"]["size"].as_u64().unwrap() > 0);
    assert!(doc["totals"].get("rss").is_none(), "rss is unknown, not 0");
    let table = as_nobody(&["--proc-root", root, "show", "4242"]).unwrap();
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(text.contains("virtual sizes are known"), "{text}");
    let classic = as_nobody(&["--proc-root", root, "show", "4242", "--classic"]).unwrap();
    assert!(classic.status.success());
    assert!(String::from_utf8_lossy(&classic.stdout).starts_with("Backed by file:\n"));
}

/// A zombie (exited, not yet reaped) has no memory: a clear "has exited".
#[test]
fn zombie_is_reported_as_exited() {
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        unsafe { libc::_exit(0) };
    }
    // Wait until it is a zombie, without reaping it.
    for _ in 0..100 {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        if status.contains("State:\tZ") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let out = run(&["show", &pid.to_string()]);
    unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("has exited"), "{err}");
    assert_eq!(err.lines().count(), 1);
}

/// Snapshot kind, process source and region purge are enums read by
/// serde (issue 20): an edited snapshot with a value memtally never
/// writes is a one-line parse error naming the value (exit 5), and the
/// same document with the values memtally writes compares cleanly.
#[test]
fn a_snapshot_with_an_unknown_kind_source_or_purge_is_a_one_line_error() {
    let doc = |kind: &str, source: &str, purge: &str| {
        format!(
            r#"{{"memtally_snapshot":1,"kind":"{kind}","time":null,"unix_time":null,"host":null,"kernel":null,"proc_root":null,"processes":[{{"pid":7,"command":"x","source":"{source}","totals":{{"rss":4096}},"categories":[],"regions":[{{"start":4096,"end":8192,"path":null,"category":"heap","purge":"{purge}","rss":4096}}]}}],"totals":{{"rss":4096}},"categories":[]}}"#
        )
    };
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.json");
    std::fs::write(&good, doc("vmmap", "vmmap", "V")).unwrap();
    let out = run(&["diff", good.to_str().unwrap(), good.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    for (name, text, value) in [
        ("kind", doc("macos", "vmmap", "V"), "macos"),
        ("source", doc("vmmap", "smapz", "V"), "smapz"),
        ("purge", doc("vmmap", "vmmap", "Q"), "Q"),
    ] {
        let bad = dir.path().join(format!("{name}.json"));
        std::fs::write(&bad, text).unwrap();
        let out = run(&["diff", good.to_str().unwrap(), bad.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(5), "{name}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains("not a valid snapshot") && err.contains(value), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
    }
}
