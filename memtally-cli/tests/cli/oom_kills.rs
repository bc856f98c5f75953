//! OOM kills as counters (issue 38.3): the machine's `/proc/vmstat`
//! `oom_kill` and each cgroup's (`memory.events` on v2, `memory.oom_control`
//! on v1), on recorded trees and live: a child in a fresh v1 memory cgroup
//! with a 16 MiB limit reads until the OOM killer kills it, and both
//! counters count it.

use std::path::Path;
use std::process::Command;

use crate::cgroup::record_process;
use crate::support::run;

fn write(dir: &Path, files: &[(&str, &str)]) {
    std::fs::create_dir_all(dir).unwrap();
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
    }
}

fn export_by_cgroup(args: &[&str]) -> std::collections::BTreeMap<(String, String), f64> {
    let mut all = vec!["export", "--by", "cgroup"];
    all.extend_from_slice(args);
    let out = run(&all);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    crate::prometheus::parse(&String::from_utf8(out.stdout).unwrap())
}

#[test]
fn recorded_v1_and_v2_trees_give_the_oom_kill_counters() {
    for v2 in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        record_process(dir.path(), 40, "a", &cgroup_line(v2, "/app/a"), [3000, 0, 0]);
        std::fs::write(dir.path().join("vmstat"), "nr_free_pages 1\noom_kill 7\npgfault 9\n")
            .unwrap();
        let cg = dir.path().join("sys/fs/cgroup");
        if v2 {
            write(&cg, &[("cgroup.controllers", "memory\n")]);
            write(
                &cg.join("app/a"),
                &[
                    ("memory.current", "4096\n"),
                    ("memory.stat", "anon 4096\n"),
                    (
                        "memory.events",
                        "low 0\nhigh 0\nmax 5\noom 4\noom_kill 3\noom_group_kill 0\n",
                    ),
                ],
            );
        } else {
            write(&cg.join("memory"), &[("memory.usage_in_bytes", "8192\n")]);
            write(
                &cg.join("memory/app/a"),
                &[
                    ("memory.usage_in_bytes", "4096\n"),
                    ("memory.stat", "total_rss 4096\n"),
                    ("memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n"),
                ],
            );
        }
        let s = export_by_cgroup(&["--proc-root", dir.path().to_str().unwrap()]);
        let kills =
            s.get(&("memtally_cgroup_charge_oom_kills_total".into(), "cgroup=/app/a".into()));
        assert_eq!(kills, Some(&if v2 { 3.0 } else { 2.0 }), "v2 {v2}: {s:?}");
        assert_eq!(s.get(&("memtally_machine_oom_kills_total".into(), String::new())), Some(&7.0));
    }
    // A tree without vmstat or the events files: no counter, never a 0.
    let dir = tempfile::tempdir().unwrap();
    record_process(dir.path(), 40, "a", "0::/app/a\n", [3000, 0, 0]);
    write(&dir.path().join("sys/fs/cgroup"), &[("cgroup.controllers", "memory\n")]);
    write(&dir.path().join("sys/fs/cgroup/app/a"), &[("memory.current", "4096\n")]);
    let s = export_by_cgroup(&["--proc-root", dir.path().to_str().unwrap()]);
    assert!(s.keys().all(|(m, _)| !m.contains("oom_kills")), "{s:?}");
}

fn cgroup_line(v2: bool, path: &str) -> String {
    if v2 {
        format!("0::{path}\n")
    } else {
        format!("4:memory:{path}\n0::/\n")
    }
}

fn machine_kills() -> u64 {
    std::fs::read_to_string("/proc/vmstat")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("oom_kill ")?.parse().ok())
        .unwrap()
}

/// A v1 memory cgroup of this test's, removed on drop (its processes killed first).
struct Made(std::path::PathBuf, Vec<std::process::Child>);

impl Drop for Made {
    fn drop(&mut self) {
        for c in &mut self.1 {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = std::fs::remove_dir(&self.0);
    }
}

#[test]
fn a_live_oom_kill_is_counted_in_the_cgroup_and_on_the_machine() {
    let base = Path::new("/sys/fs/cgroup/memory");
    let oom_control_has_kills = std::fs::read_to_string(base.join("memory.oom_control"))
        .is_ok_and(|t| t.lines().any(|l| l.starts_with("oom_kill ")));
    if !oom_control_has_kills || std::fs::read_to_string("/proc/vmstat").is_err() {
        println!("skipped: no v1 memory controller with oom_kill counts here");
        return;
    }
    let name = format!("memtally-oom-test-{}", std::process::id());
    let dir = base.join(&name);
    if let Err(e) = std::fs::create_dir(&dir) {
        println!("skipped: cannot make {}: {e}", dir.display());
        return;
    }
    let mut made = Made(dir.clone(), Vec::new());
    std::fs::write(dir.join("memory.limit_in_bytes"), "16777216").unwrap();
    let _ = std::fs::write(dir.join("memory.swappiness"), "0");
    let _ = std::fs::write(dir.join("memory.memsw.limit_in_bytes"), "16777216");
    let into = |cmd: &str| {
        Command::new("sh")
            .arg("-c")
            .arg(format!("echo $$ > {}/cgroup.procs && exec {cmd}", dir.display()))
            .spawn()
            .unwrap()
    };
    // A process that stays, so that the cgroup has a row.
    made.1.push(into("sleep 60"));
    let before = machine_kills();
    // `tail /dev/zero` keeps every byte of its one endless line.
    let mut hog = into("tail /dev/zero");
    let status = hog.wait().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(libc::SIGKILL), "the OOM killer ends it: {status:?}");
    let path = format!("/{name}");
    let s = export_by_cgroup(&["--cgroup", &path]);
    let kills = s[&("memtally_cgroup_charge_oom_kills_total".into(), format!("cgroup={path}"))];
    assert_eq!(kills, 1.0, "{s:?}");
    let machine = s[&("memtally_machine_oom_kills_total".into(), String::new())];
    assert!(machine >= (before + 1) as f64, "{machine} vs {before} before");
}
