//! Cgroups: which cgroup a process is charged to (the memory controller's
//! path on v1 and hybrid hosts), on recorded v1, v2 and hybrid trees the
//! tests write, and live on this machine.

use std::path::Path;

use crate::support::{map_and_touch, run, run_json, spawn, Mapping, MIB};

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

/// Writes cgroup files under `dir` (a cgroup's directory in a recorded tree).
fn cgroup_files(dir: &Path, files: &[(&str, &str)]) {
    std::fs::create_dir_all(dir).unwrap();
    for (name, body) in files {
        std::fs::write(dir.join(name), body).unwrap();
    }
}

fn row<'a>(view: &'a serde_json::Value, path: &str) -> &'a serde_json::Value {
    view["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["path"] == path)
        .unwrap_or_else(|| panic!("{path} in {view}"))
}

fn part(row: &serde_json::Value, name: &str) -> i64 {
    row["parts"].as_array().unwrap().iter().find(|p| p["name"] == name).unwrap()["bytes"]
        .as_i64()
        .unwrap()
}

const K: u64 = 1024;

/// Recorded v2: memory.current, max, high, peak, swap and memory.stat;
/// the difference between the charge and the PSS named exactly.
#[test]
fn recorded_v2_tree_names_the_charge() {
    let dir = tempfile::tempdir().unwrap();
    record_process(dir.path(), 20, "web", "0::/kubepods/pod1/c1\n", [4000, 1000, 500]);
    record_process(dir.path(), 21, "side", "0::/kubepods/pod1/c2\n", [1000, 0, 0]);
    record_process(dir.path(), 22, "other", "0::/system.slice/x.service\n", [700, 0, 0]);
    let cg = dir.path().join("sys/fs/cgroup");
    cgroup_files(&cg, &[("cgroup.controllers", "cpuset cpu io memory pids\n")]);
    let stat = format!(
        "anon {}\nfile {}\nkernel {}\nkernel_stack {}\npagetables {}\nsock {}\nshmem {}\nfile_mapped {}\nactive_file {}\ninactive_file {}\nslab_reclaimable {}\nslab_unreclaimable {}\n",
        5200 * K, 9000 * K, 800 * K, 100 * K, 200 * K, 12 * K, 2500 * K, 1500 * K, 2000 * K, 4500 * K, 300 * K, 200 * K
    );
    let usage = 5200 * K + 9000 * K + 800 * K + 12 * K + 88 * K;
    cgroup_files(
        &cg.join("kubepods/pod1"),
        &[
            ("memory.current", &format!("{usage}\n")),
            ("memory.max", &format!("{}\n", 64 * 1024 * K)),
            ("memory.high", "max\n"),
            ("memory.peak", &format!("{}\n", 20000 * K)),
            ("memory.swap.current", "4096\n"),
            ("memory.stat", &stat),
        ],
    );
    let root = dir.path().to_str().unwrap();
    let view = run_json(&["cgroup", "/kubepods/pod1", "--proc-root", root, "--format", "json"]);
    assert_eq!(view["layout"]["version"], 2);
    let pod = row(&view, "/kubepods/pod1");
    assert_eq!(pod["processes"], 2, "the pod's rows add its child cgroups' processes");
    assert_eq!(pod["pss"].as_u64(), Some(6500 * K));
    let m = &pod["memory"];
    assert_eq!(m["usage"].as_u64(), Some(usage));
    assert_eq!(m["limit"].as_u64(), Some(64 * 1024 * K));
    assert!(m["high"].is_null(), "max is no limit");
    assert_eq!(m["peak"].as_u64(), Some(20000 * K));
    assert_eq!(m["swap"].as_u64(), Some(4096));
    assert_eq!(m["kernel"].as_u64(), Some(800 * K));
    assert_eq!(pod["working_set"].as_u64(), Some(usage - 4500 * K));
    assert_eq!(part(pod, "anon_not_in_pss"), (5200 - 5000) as i64 * K as i64);
    assert_eq!(part(pod, "page_cache_unmapped"), (9000 - 2500 - 1000) as i64 * K as i64);
    assert_eq!(part(pod, "shmem_unmapped"), (2500 - 500) as i64 * K as i64);
    assert_eq!(part(pod, "kernel"), 800 * K as i64);
    assert_eq!(part(pod, "sock"), 12 * K as i64);
    let sum: i64 =
        pod["parts"].as_array().unwrap().iter().map(|p| p["bytes"].as_i64().unwrap()).sum();
    assert_eq!(sum + 6500 * K as i64, usage as i64, "PSS + parts = usage exactly");
    assert_eq!(part(pod, "other"), 88 * K as i64);
    // The child cgroups without files are listed with their PSS only.
    assert!(row(&view, "/kubepods/pod1/c1")["memory"].is_null());
    assert!(view["rows"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["path"] != "/system.slice/x.service"));
    let text =
        String::from_utf8(run(&["cgroup", "/kubepods", "--proc-root", root]).stdout).unwrap();
    assert!(text.contains("shmem_unmapped 2.0M"), "{text}");
    assert!(text.contains("WSET"), "{text}");
}

/// Recorded v1 and hybrid (v1 memory plus an empty unified tree, like this
/// machine): usage_in_bytes, limit_in_bytes, max_usage_in_bytes, total_*
/// stat keys and kmem.
#[test]
fn recorded_v1_and_hybrid_trees() {
    for hybrid in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let line = if hybrid { "4:memory:/docker/abc\n0::/\n" } else { "4:memory:/docker/abc\n" };
        record_process(dir.path(), 30, "app", line, [2000, 100, 0]);
        let cg = dir.path().join("sys/fs/cgroup");
        if hybrid {
            cgroup_files(&cg.join("unified"), &[("cgroup.controllers", "")]);
        }
        let usage = 2048 * K + 6000 * K + 512 * K;
        let stat = format!(
            "cache 1\nrss 1\ntotal_cache {}\ntotal_rss {}\ntotal_shmem {}\ntotal_mapped_file {}\ntotal_inactive_file {}\ntotal_active_file {}\ntotal_swap 0\n",
            6000 * K, 2048 * K, 1024 * K, 100 * K, 4000 * K, 976 * K
        );
        cgroup_files(&cg.join("memory"), &[("memory.usage_in_bytes", "1\n")]);
        cgroup_files(
            &cg.join("memory/docker/abc"),
            &[
                ("memory.usage_in_bytes", &format!("{usage}\n")),
                ("memory.limit_in_bytes", "9223372036854771712\n"),
                ("memory.max_usage_in_bytes", &format!("{}\n", 9000 * K)),
                ("memory.kmem.usage_in_bytes", &format!("{}\n", 512 * K)),
                ("memory.stat", &stat),
            ],
        );
        let root = dir.path().to_str().unwrap();
        let view = run_json(&["cgroup", "--proc-root", root, "--format", "json"]);
        assert_eq!(view["layout"]["version"], 1, "hybrid={hybrid}");
        let r = row(&view, "/docker/abc");
        assert_eq!(r["processes"], 1);
        let m = &r["memory"];
        assert_eq!(m["usage"].as_u64(), Some(usage));
        assert!(m["limit"].is_null(), "PAGE_COUNTER_MAX is no limit");
        assert_eq!(m["peak"].as_u64(), Some(9000 * K));
        assert_eq!(m["anon"].as_u64(), Some(2048 * K), "total_rss, not rss");
        assert_eq!(r["working_set"].as_u64(), Some(usage - 4000 * K));
        assert_eq!(part(r, "anon_not_in_pss"), 48 * K as i64);
        assert_eq!(part(r, "page_cache_unmapped"), (6000 - 1024 - 100) as i64 * K as i64);
        assert_eq!(part(r, "shmem_unmapped"), 1024 * K as i64);
        assert_eq!(part(r, "kernel"), 512 * K as i64);
        assert_eq!(part(r, "other"), 0);
    }
}

/// A cgroup this test made under its own memory cgroup, removed on drop.
struct Fresh {
    dir: std::path::PathBuf,
    path: String,
}

impl Drop for Fresh {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Makes a fresh child cgroup under this test's own, where it can.
fn fresh_cgroup() -> Result<Fresh, String> {
    let text = std::fs::read_to_string("/proc/self/cgroup").map_err(|e| e.to_string())?;
    let memory_line = own_memory_cgroup();
    let (base, own) = match memory_line {
        Some(p) => ("/sys/fs/cgroup/memory".to_string(), p),
        None => {
            let unified =
                text.lines().find_map(|l| l.strip_prefix("0::")).ok_or("no cgroup line")?;
            ("/sys/fs/cgroup".to_string(), unified.to_string())
        }
    };
    let name = format!("memtally-test-{}", std::process::id());
    let path = format!("{}/{name}", own.trim_end_matches('/'));
    let dir = std::path::PathBuf::from(format!("{base}{path}"));
    std::fs::create_dir(&dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
    let fresh = Fresh { dir, path };
    if !fresh.dir.join("memory.stat").exists() {
        return Err(format!(
            "{} has no memory controller (v2: not enabled in the parent's subtree_control)",
            fresh.dir.display()
        ));
    }
    Ok(fresh)
}

/// Live: a child placed in a fresh cgroup writes a known tmpfs file and
/// touches known anonymous memory; the cgroup view names both (the file
/// as shmem charged to the cgroup that no process maps).
#[test]
fn live_child_in_a_fresh_cgroup_shows_its_tmpfs_and_anon() {
    let fresh = match fresh_cgroup() {
        Ok(f) => f,
        Err(why) => {
            println!("skipped: no writable cgroup for this test: {why}");
            return;
        }
    };
    const ANON: usize = 24 * MIB;
    const TMPFS: usize = 8 * MIB;
    let file =
        std::ffi::CString::new(format!("/dev/shm/memtally-cgroup-test-{}", std::process::id()))
            .unwrap();
    let (mut go, mut ready) = ([0i32; 2], [0i32; 2]);
    assert_eq!(unsafe { libc::pipe(go.as_mut_ptr()) }, 0);
    assert_eq!(unsafe { libc::pipe(ready.as_mut_ptr()) }, 0);
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        // Only async-signal-safe calls: wait to be moved, then charge the new cgroup.
        unsafe {
            let mut b = [0u8; 1];
            if libc::read(go[0], b.as_mut_ptr().cast(), 1) != 1 {
                libc::_exit(1);
            }
            let p = map_and_touch(ANON, 0x5a);
            let fd =
                libc::open(file.as_ptr(), libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC, 0o600);
            if fd < 0 || libc::write(fd, p, TMPFS) != TMPFS as isize {
                libc::_exit(1);
            }
            libc::close(fd);
            libc::write(ready[1], b.as_ptr().cast(), 1);
            loop {
                libc::pause();
            }
        }
    }
    let cleanup = |pid: i32| unsafe {
        libc::kill(pid, libc::SIGKILL);
        libc::waitpid(pid, std::ptr::null_mut(), 0);
        libc::unlink(file.as_ptr());
    };
    if let Err(e) = std::fs::write(fresh.dir.join("cgroup.procs"), pid.to_string()) {
        cleanup(pid);
        println!("skipped: cannot move a child into {}: {e}", fresh.dir.display());
        return;
    }
    let mut b = [1u8; 1];
    unsafe {
        libc::write(go[1], b.as_ptr().cast(), 1);
        assert_eq!(
            libc::read(ready[0], b.as_mut_ptr().cast(), 1),
            1,
            "the child charged its memory"
        );
    }
    let view = run_json(&["cgroup", &fresh.path, "--format", "json"]);
    let text = String::from_utf8(run(&["cgroup", &fresh.path]).stdout).unwrap();
    cleanup(pid);
    let r = row(&view, &fresh.path);
    assert_eq!(r["processes"], 1, "{view}");
    let m = &r["memory"];
    assert_eq!(m["shmem"].as_u64(), Some(TMPFS as u64), "the tmpfs file is charged here: {m}");
    assert_eq!(part(r, "shmem_unmapped"), TMPFS as i64, "and no process maps it");
    let anon = m["anon"].as_u64().unwrap();
    assert!(anon >= ANON as u64 && anon < (ANON + 4 * MIB) as u64, "anon {anon}");
    assert!(r["pss_anon"].as_u64().unwrap() >= ANON as u64);
    let usage = m["usage"].as_u64().unwrap();
    assert!(usage >= (ANON + TMPFS) as u64, "usage {usage}");
    let sum: i64 =
        r["parts"].as_array().unwrap().iter().map(|p| p["bytes"].as_i64().unwrap()).sum();
    assert_eq!(sum + r["pss"].as_i64().unwrap(), usage as i64);
    assert!(text.contains("shmem_unmapped 8.0M"), "{text}");
    assert!(text.contains(&fresh.path), "{text}");
    println!("{text}");
}

/// `export --by cgroup` publishes each cgroup's own figures, the same
/// bytes as `memtally cgroup`, and the machine waterfall adds up.
#[test]
fn export_publishes_the_cgroup_figures() {
    let dir = tempfile::tempdir().unwrap();
    record_process(dir.path(), 40, "a", "0::/app.slice/a.service\n", [3000, 0, 0]);
    record_process(dir.path(), 41, "b", "0::/app.slice/b.service\n", [1000, 0, 0]);
    let cg = dir.path().join("sys/fs/cgroup");
    cgroup_files(&cg, &[("cgroup.controllers", "memory\n")]);
    for (name, usage) in [("a", 5000 * K), ("b", 2000 * K)] {
        cgroup_files(
            &cg.join(format!("app.slice/{name}.service")),
            &[
                ("memory.current", &format!("{usage}\n")),
                ("memory.max", "max\n"),
                ("memory.high", &format!("{}\n", 8000 * K)),
                (
                    "memory.stat",
                    &format!(
                        "anon {}\nfile {}\ninactive_file {}\nshmem 0\nkernel 4096\n",
                        usage / 2,
                        usage / 2,
                        usage / 4
                    ),
                ),
            ],
        );
    }
    std::fs::write(dir.path().join("meminfo"), "MemTotal: 1000000 kB\nMemFree: 500000 kB\nMemAvailable: 800000 kB\nBuffers: 1000 kB\nCached: 100000 kB\nShmem: 10 kB\nAnonPages: 5000 kB\nSReclaimable: 2000 kB\nSUnreclaim: 1000 kB\nSlab: 3000 kB\n").unwrap();
    let root = dir.path().to_str().unwrap();
    let out = run(&["--proc-root", root, "export", "--by", "cgroup"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let samples = crate::prometheus::parse(&String::from_utf8(out.stdout).unwrap());
    let view = run_json(&["cgroup", "--proc-root", root, "--format", "json"]);
    for name in ["a", "b"] {
        let path = format!("/app.slice/{name}.service");
        let r = row(&view, &path);
        let labels = format!("cgroup={path}");
        let get = |m: &str| {
            samples.get(&(format!("memtally_cgroup_charge_{m}_bytes"), labels.clone())).copied()
        };
        assert_eq!(get("usage"), r["memory"]["usage"].as_u64().map(|v| v as f64));
        assert_eq!(get("high"), Some(8000.0 * K as f64));
        assert_eq!(get("limit"), None, "max is no limit: no sample");
        assert_eq!(get("working_set"), r["working_set"].as_u64().map(|v| v as f64));
        assert_eq!(get("kernel"), Some(4096.0));
    }
    assert_eq!(
        samples
            [&("memtally_cgroup_charge_usage_bytes".into(), "cgroup=/app.slice/a.service".into())],
        5000.0 * K as f64
    );
    let waterfall: f64 = samples
        .iter()
        .filter(|((m, _), _)| m == "memtally_machine_waterfall_bytes")
        .map(|(_, v)| v)
        .sum();
    assert_eq!(waterfall, 1_000_000.0 * K as f64);
}

/// A capture records the memory cgroup files of its processes; the
/// recording gives the same cgroup view as the live files it copied.
#[test]
fn capture_records_the_cgroup_files() {
    let Some(path) = own_memory_cgroup().filter(|p| p != "/") else {
        println!("skipped: no v1 memory cgroup here to record (v2 hosts: the unified files are recorded the same way)");
        return;
    };
    let child = spawn(Mapping::Anonymous(4 * MIB));
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("cap");
    let out = run(&["capture", "--pid", &child.pid.to_string(), "-o", out_dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(said.contains("memory cgroup files"), "{said}");
    let recorded = out_dir.join("sys/fs/cgroup/memory").join(path.trim_start_matches('/'));
    let live = std::path::Path::new("/sys/fs/cgroup/memory").join(path.trim_start_matches('/'));
    for f in ["memory.stat", "memory.usage_in_bytes", "memory.limit_in_bytes"] {
        assert!(recorded.join(f).is_file(), "{f} recorded");
    }
    let limit = |d: &Path| std::fs::read_to_string(d.join("memory.limit_in_bytes")).unwrap();
    assert_eq!(limit(&recorded), limit(&live));
    let view = run_json(&["cgroup", "--proc-root", out_dir.to_str().unwrap(), "--format", "json"]);
    assert_eq!(view["layout"]["version"], 1);
    let r = row(&view, &path);
    assert_eq!(r["processes"], 1, "the recorded child");
    let usage = std::fs::read_to_string(recorded.join("memory.usage_in_bytes")).unwrap();
    assert_eq!(r["memory"]["usage"].as_u64(), usage.trim().parse().ok());
}

/// The v1 root, recorded from this machine (testdata/fixtures/cgroup-v1-root):
/// its usage_in_bytes is rss + cache only, so its kmem figure is named
/// beside the usage, not inside its sum, and no part of the line is a
/// negative number. Before, the line read `kernel 763M + other -763M`.
#[test]
fn recorded_v1_root_has_no_kernel_term_and_no_negative_line() {
    let root = crate::support::repo_path("testdata/fixtures/cgroup-v1-root");
    let cg = Path::new(&root).join("sys/fs/cgroup/memory");
    let file =
        |n: &str| std::fs::read_to_string(cg.join(n)).unwrap().trim().parse::<u64>().unwrap();
    let (usage, kmem) = (file("memory.usage_in_bytes"), file("memory.kmem.usage_in_bytes"));
    assert!(kmem > 0, "the recording has kernel memory to leave out");
    let view = run_json(&["cgroup", "--proc-root", &root, "--format", "json"]);
    assert_eq!(view["layout"]["version"], 1);
    let r = row(&view, "/");
    assert_eq!(r["memory"]["usage"].as_u64(), Some(usage));
    let parts = r["parts"].as_array().unwrap();
    assert!(parts.iter().all(|p| p["name"] != "kernel"), "no kernel term in the sum: {r}");
    for p in parts {
        let bytes = p["bytes"].as_i64().unwrap();
        assert!(bytes >= 0 || p["name"] == "beyond_usage", "{p}");
    }
    // The parts still add up to usage − Σ PSS exactly.
    let sum: i64 = parts.iter().map(|p| p["bytes"].as_i64().unwrap()).sum();
    assert_eq!(sum + r["pss"].as_i64().unwrap(), usage as i64);
    let beside = r["beside"].as_array().unwrap();
    assert_eq!(beside.len(), 1, "{r}");
    assert_eq!(beside[0]["name"], "kernel");
    assert_eq!(beside[0]["bytes"].as_u64(), Some(kmem));

    let text = String::from_utf8(run(&["cgroup", "--proc-root", &root]).stdout).unwrap();
    let line = text.lines().find(|l| l.starts_with("/: usage")).unwrap_or_else(|| panic!("{text}"));
    let negative = line.as_bytes().windows(2).any(|w| w[0] == b'-' && w[1].is_ascii_digit());
    assert!(!negative, "no negative figure: {line}");
    assert!(!line.contains("+ kernel"), "kernel is not a term of the v1 root's usage: {line}");
    assert!(line.contains("not in this usage") && line.contains("kernel 7"), "{line}");
}
