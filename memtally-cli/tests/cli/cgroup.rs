//! Cgroups: which cgroup a process is charged to (the memory controller's
//! path on v1 and hybrid hosts), on recorded v1, v2 and hybrid trees the
//! tests write, and live on this machine.

use std::path::Path;

use crate::support::{run, run_json, spawn, Mapping, MIB};

/// Writes a process into a recorded `/proc` tree: status, a rollup with
/// the given anonymous, file and shmem PSS (kB), and its cgroup file.
pub fn record_process(proc: &Path, pid: u32, name: &str, cgroup: &str, kb: [u64; 3]) {
    let dir = proc.join(pid.to_string());
    std::fs::create_dir_all(&dir).unwrap();
    let [anon, file, shmem] = kb;
    let pss = anon + file + shmem;
    std::fs::write(
        dir.join("status"),
        format!(
            "Name:\t{name}\nPPid:\t1\nUid:\t0\t0\t0\t0\nVmSize:\t{} kB\nVmRSS:\t{pss} kB\n",
            pss * 2
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("smaps_rollup"),
        format!(
            "00400000-7fff00000000 ---p 00000000 00:00 0  [rollup]\nRss: {pss} kB\nPss: {pss} kB\nPss_Anon: {anon} kB\nPss_File: {file} kB\nPss_Shmem: {shmem} kB\nShared_Clean: 0 kB\nShared_Dirty: 0 kB\nPrivate_Clean: {file} kB\nPrivate_Dirty: {} kB\nAnonymous: {anon} kB\nSwap: 0 kB\nSwapPss: 0 kB\n",
            anon + shmem
        ),
    )
    .unwrap();
    std::fs::write(dir.join("cmdline"), format!("{name}\0")).unwrap();
    std::fs::write(dir.join("cgroup"), cgroup).unwrap();
}

/// The memory controller's line of this process's `/proc/self/cgroup`.
fn own_memory_cgroup() -> Option<String> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    text.lines().find_map(|l| {
        let mut p = l.splitn(3, ':');
        let (_, controllers, path) = (p.next()?, p.next()?, p.next()?);
        controllers.split(',').any(|c| c == "memory").then(|| path.to_string())
    })
}

fn keys_by_pid(top: &serde_json::Value) -> std::collections::BTreeMap<u64, String> {
    top["processes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["pid"].as_u64().unwrap(), p["cgroup"].as_str().unwrap_or("").to_string()))
        .collect()
}

/// Recorded: on v1/hybrid the memory controller's path names the cgroup
/// (the unified `0::/` says nothing); on v2 the `0::` path does.
#[test]
fn processes_are_under_the_memory_controllers_path_on_recorded_trees() {
    let dir = tempfile::tempdir().unwrap();
    let proc = dir.path();
    let hybrid = "9:name=systemd:/\n4:memory:/process_api/abc\n1:cpu:/\n0::/\n";
    let v1 = "11:cpu,cpuacct:/docker/d1\n4:memory:/docker/d1\n";
    let v2 = "0::/system.slice/app.service\n";
    record_process(proc, 10, "hybrid", hybrid, [100, 0, 0]);
    record_process(proc, 11, "v1", v1, [200, 0, 0]);
    record_process(proc, 12, "v2", v2, [300, 0, 0]);
    let root = proc.to_str().unwrap();
    let top = run_json(&["top", "--proc-root", root, "--by", "cgroup", "--format", "json"]);
    let keys = keys_by_pid(&top);
    assert_eq!(keys[&10], "/process_api/abc");
    assert_eq!(keys[&11], "/docker/d1");
    assert_eq!(keys[&12], "/system.slice/app.service");
    let rows: Vec<&str> =
        top["rows"].as_array().unwrap().iter().map(|r| r["key"].as_str().unwrap()).collect();
    assert_eq!(rows, ["/system.slice/app.service", "/docker/d1", "/process_api/abc"]);
    let one =
        run_json(&["top", "--proc-root", root, "--cgroup", "/process_api", "--format", "json"]);
    let pids: Vec<u64> =
        one["processes"].as_array().unwrap().iter().map(|p| p["pid"].as_u64().unwrap()).collect();
    assert_eq!(pids, [10]);
}

/// Live: a child of this test is found under this test's own memory
/// cgroup (on this hybrid host every process used to land under `/`).
#[test]
fn live_child_is_found_by_its_memory_cgroup() {
    let Some(path) = own_memory_cgroup() else {
        println!("skipped: this host has no v1 memory controller (a v2-only host: the 0:: path is the memory cgroup)");
        return;
    };
    if path == "/" {
        println!("skipped: this test runs in the root memory cgroup");
        return;
    }
    let child = spawn(Mapping::Anonymous(4 * MIB));
    let top = run_json(&["top", "--cgroup", &path, "--all", "--format", "json"]);
    let keys = keys_by_pid(&top);
    assert_eq!(keys.get(&(child.pid as u64)).map(String::as_str), Some(path.as_str()), "{keys:?}");
    assert_eq!(keys.get(&(std::process::id() as u64)).map(String::as_str), Some(path.as_str()));
    let out = run(&["top", "--by", "cgroup", "--all"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains(&path));
}
