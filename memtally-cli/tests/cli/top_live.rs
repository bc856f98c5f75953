//! `memtally top` and `show` over many processes: shared memory counted
//! once, selections, and the machine picture, on children the test starts.

use crate::support::{rollup, run, run_json, spawn, Mapping, Stopped, MIB};
use serde_json::Value;

const SHARED: usize = 48 * MIB;
const KIDS: usize = 3;

fn region_at(doc: &Value, addr: u64) -> Value {
    doc["regions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["start"].as_u64().unwrap() <= addr && addr < r["end"].as_u64().unwrap())
        .cloned()
        .expect("a region contains the address")
}

/// A parent maps 48 MiB MAP_SHARED and forks 3 children that keep it: each
/// of the 4 processes is charged a quarter in PSS, none of it in USS, and
/// the sum over the tree counts the 48 MiB once.
#[test]
fn shared_memory_is_split_by_pss_and_counted_once() {
    let tree = spawn(Mapping::Shared(SHARED, KIDS));
    let all: Vec<u32> = std::iter::once(tree.pid).chain(tree.children.iter().copied()).collect();
    let share = (SHARED / (KIDS + 1)) as u64;
    let mut pss_sum = 0;
    // The processes' PSS outside the region: forks of this harness, they
    // share its heap copy-on-write, which other tests grow meanwhile.
    let mut outside = 0;
    for pid in &all {
        let doc = run_json(&["show", &pid.to_string(), "--format", "json"]);
        let r = region_at(&doc, tree.addr);
        assert_eq!(r["size"], SHARED, "pid {pid}");
        assert_eq!(r["rss"], SHARED, "pid {pid}");
        let pss = r["pss"].as_u64().unwrap();
        assert!(pss.abs_diff(share) < 4096, "pid {pid}: pss {pss}, want {share} within a page");
        assert_eq!(r["private_dirty"], 0, "shared pages are not private");
        assert_eq!(r["private_clean"], 0);
        assert_eq!(r["shared_dirty"], SHARED);
        assert_eq!(r["category"], "shared_memory");
        pss_sum += pss;
        outside += doc["totals"]["pss"].as_u64().unwrap().saturating_sub(pss);
    }
    // smaps rounds each mapping's PSS down to a kB.
    assert!(pss_sum.abs_diff(SHARED as u64) < 1024 * all.len() as u64, "{pss_sum}");

    let top = run_json(&["top", "--tree", &tree.pid.to_string(), "--format", "json", "--all"]);
    let procs = top["processes"].as_array().unwrap();
    let mut pids: Vec<u64> = procs.iter().map(|p| p["pid"].as_u64().unwrap()).collect();
    pids.sort_unstable();
    let mut want: Vec<u64> = all.iter().map(|&p| p as u64).collect();
    want.sort_unstable();
    assert_eq!(pids, want, "--tree selects the parent and every child");
    for p in procs {
        assert_eq!(p["source"], "smaps_rollup");
        let uss = p["uss"].as_u64().unwrap();
        assert!(uss < share, "USS {uss} leaves the shared region out");
        assert!(p["pss"].as_u64().unwrap() >= share - 4096);
    }
    let total_pss = top["totals"]["pss"].as_u64().unwrap();
    let rss_sum: u64 = procs.iter().map(|p| p["rss"].as_u64().unwrap()).sum();
    assert!(rss_sum >= (SHARED * all.len()) as u64, "RSS counts the region in every process");
    assert!(top["totals"]["rss"].is_null(), "so a total leaves RSS out (model::summable)");
    assert!(
        total_pss >= SHARED as u64 && total_pss < (SHARED + SHARED / 2) as u64 + outside,
        "PSS counts it once: {total_pss} ({outside} outside the region)"
    );

    // show over the whole tree: the shared-memory category holds 48 MiB of PSS once.
    let doc = run_json(&["show", "--tree", &tree.pid.to_string(), "--format", "json"]);
    let shm = doc["categories"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["category"] == "shared_memory")
        .expect("a shared memory category");
    let pss = shm["pss"].as_u64().unwrap();
    assert!(pss.abs_diff(SHARED as u64) < 4096 * all.len() as u64, "{pss}");
    assert_eq!(doc["processes"].as_array().unwrap().len(), all.len());
}

/// On a recorded tree, top's figures are exactly the recorded rollups, and
/// the PSS total is their sum.
#[test]
fn top_totals_are_the_sum_of_rollups() {
    let tree = spawn(Mapping::Shared(4 * MIB, 2));
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let cap = run(&["capture", "--tree", &tree.pid.to_string(), "-o", root]);
    assert!(cap.status.success(), "{}", String::from_utf8_lossy(&cap.stderr));
    let top = run_json(&["--proc-root", root, "top", "--all", "--format", "json"]);
    let procs = top["processes"].as_array().unwrap();
    assert_eq!(procs.len(), 3);
    let mut sum = 0;
    for p in procs {
        let r = rollup(&dir.path().join(p["pid"].to_string()).join("smaps_rollup"));
        for k in ["rss", "pss", "private_dirty", "shared_dirty", "swap", "swap_pss", "pss_anon"] {
            assert_eq!(p[k].as_u64(), r.get(k).copied(), "pid {} {k}", p["pid"]);
        }
        assert_eq!(p["uss"].as_u64(), Some(r["private_clean"] + r["private_dirty"]));
        sum += r["pss"];
    }
    assert_eq!(top["totals"]["pss"].as_u64(), Some(sum));
    assert_eq!(top["machine"]["processes_pss"].as_u64(), Some(sum));
}

/// Live: each process's PSS is its own rollup's. The machine moves while
/// we read, so the check uses processes that hold still (exec'd `sleep`s:
/// no copy-on-write sharing with this busy test process) and brackets
/// memtally's figure between the rollup read just before and just after
/// (the `sleep`s stopped meanwhile, so only others' mappings move it),
/// less half of the file-backed share: memtally itself maps the C library
/// while it reads, which lowers every other mapper's share of it (the
/// observer effect of every PSS tool). Over the whole machine, the sum
/// must agree with the rollups' within 10%, over the processes that held
/// still meanwhile (the same RSS in memtally's read and the rollup read
/// after it: a compiler growing by hundreds of MB in between is not a
/// disagreement).
#[test]
fn live_pss_matches_the_rollups() {
    let read = |pid: u64| {
        let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
        let field = |key: &str| -> Option<u64> {
            let line = text.lines().find(|l| l.starts_with(key))?;
            Some(
                line[key.len()..].trim().trim_end_matches(" kB").trim().parse::<u64>().ok()? * 1024,
            )
        };
        Some((field("Pss:")?, field("Pss_File:")?, field("Rss:")?))
    };
    let mut sleeps: Vec<std::process::Child> = (0..5)
        .map(|_| std::process::Command::new("sleep").arg("30").spawn().expect("sleep runs"))
        .collect();
    // Stopped while read (SIGSTOP): a `sleep` still loading its libraries
    // would otherwise map more between the readings.
    let still = Stopped::new(&sleeps.iter().map(|c| c.id()).collect::<Vec<u32>>());
    let pids: Vec<String> = sleeps.iter().map(|c| c.id().to_string()).collect();
    let before: Vec<(u64, u64, u64)> =
        pids.iter().map(|p| read(p.parse().unwrap()).unwrap()).collect();
    let mut args = vec!["top", "--format", "json", "--pid"];
    args.extend(pids.iter().map(String::as_str));
    let top = run_json(&args);
    let after: Vec<(u64, u64, u64)> =
        pids.iter().map(|p| read(p.parse().unwrap()).unwrap()).collect();
    for (i, pid) in pids.iter().enumerate() {
        let row = top["processes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["pid"].as_u64() == pid.parse().ok())
            .unwrap();
        let pss = row["pss"].as_u64().unwrap();
        let ((b, file, _), (a, _, _)) = (before[i], after[i]);
        let (lo, hi) = (b.min(a).saturating_sub(file / 2 + 4096), b.max(a) + 4096);
        assert!(
            lo <= pss && pss <= hi,
            "pid {pid}: PSS {pss} outside [{lo}, {hi}] (rollup {b} before, {a} after)"
        );
    }
    drop(still);
    for s in &mut sleeps {
        let _ = s.kill();
        let _ = s.wait();
    }

    // Every process's rollup before and after memtally's read: one whose
    // PSS moved much meanwhile (another test's forked family exiting
    // doubles its parent's share without changing its RSS) did not hold
    // still.
    let rollups = || -> std::collections::HashMap<u64, (u64, u64, u64)> {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u64>().ok())
            .filter_map(|pid| Some((pid, read(pid)?)))
            .collect()
    };
    let before = rollups();
    let all = run_json(&["top", "--all", "--format", "json"]);
    let after = rollups();
    let (mut ours, mut theirs, mut still, mut read_processes) = (0u64, 0u64, 0usize, 0usize);
    for p in all["processes"].as_array().unwrap() {
        let pid = p["pid"].as_u64().unwrap();
        let (Some(pss), Some(&(r, _, rss))) = (p["pss"].as_u64(), after.get(&pid)) else {
            continue;
        };
        read_processes += 1;
        // Every library mapper's PSS moves a little as processes come and
        // go; a move of more than 5% is a sharer gone or come.
        let held = |&(b, _, b_rss): &(u64, u64, u64)| b_rss == rss && b.abs_diff(r) * 20 <= r;
        if p["rss"].as_u64() != Some(rss) || !before.get(&pid).is_some_and(held) {
            continue;
        }
        still += 1;
        ours += pss;
        theirs += r;
    }
    assert!(ours > 0);
    assert!(still * 2 >= read_processes, "only {still} of {read_processes} processes held still");
    assert!(ours.abs_diff(theirs) * 10 <= theirs, "PSS sum {ours} vs rollups {theirs}");
    assert!(
        all["totals"]["pss"].as_u64().unwrap() >= ours,
        "the total covers every process with PSS"
    );
}

#[test]
fn selections_narrow_and_group() {
    let tree = spawn(Mapping::Shared(MIB, 2));
    let pid = tree.pid.to_string();
    let one = run_json(&["top", "--pid", &pid, "--format", "json"]);
    assert_eq!(one["processes"].as_array().unwrap().len(), 1);
    assert_eq!(one["processes"][0]["pid"].as_u64(), Some(tree.pid as u64));
    assert!(one["machine"].is_null(), "no machine picture for a selection");

    let kids = run_json(&[
        "top",
        "--pid",
        &tree.children[0].to_string(),
        &tree.children[1].to_string(),
        "--format",
        "json",
    ]);
    assert_eq!(kids["processes"].as_array().unwrap().len(), 2);

    // The test binary's name is the program of all three.
    let program = one["processes"][0]["program"].as_str().unwrap().to_string();
    let grouped = run_json(&["top", "--tree", &pid, "--by", "program", "--format", "json"]);
    let rows = grouped["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["key"], program.as_str());
    assert_eq!(rows[0]["processes"], 3);

    let tree_view = run_json(&["top", "--tree", &pid, "--by", "tree", "--format", "json"]);
    let rows = tree_view["rows"].as_array().unwrap();
    assert_eq!(rows[0]["pid"].as_u64(), Some(tree.pid as u64));
    assert_eq!(rows[0]["depth"], 0);
    assert_eq!(rows[0]["processes"], 3);
    assert_eq!(rows[1]["depth"], 1);
    let sum: u64 = rows[1..].iter().map(|r| r["pss"].as_u64().unwrap()).sum::<u64>()
        + tree_view["processes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["pid"].as_u64() == Some(tree.pid as u64))
            .unwrap()["pss"]
            .as_u64()
            .unwrap();
    assert_eq!(rows[0]["pss"].as_u64(), Some(sum), "the root row sums its subtree");

    let by_user = run_json(&["top", "--tree", &pid, "--by", "user", "--format", "json"]);
    assert_eq!(by_user["rows"][0]["processes"], 3);
    // Selectors narrow together: none of the tree has that name, and a
    // selection that finds nothing is "no such process" (exit code 3).
    let name = crate::support::run(&[
        "top",
        "--tree",
        &pid,
        "--name",
        "^no-such-program-x$",
        "--format",
        "json",
    ]);
    assert_eq!(name.status.code(), Some(3), "{}", String::from_utf8_lossy(&name.stderr));
    let uid = unsafe { libc::getuid() }.to_string();
    let mine = run_json(&["top", "--tree", &pid, "--user", &uid, "--format", "json"]);
    assert_eq!(mine["processes"].as_array().unwrap().len(), 3);
}

#[test]
fn kernel_threads_are_left_out_and_counted() {
    let top = run_json(&["top", "--all", "--format", "json"]);
    let pids: Vec<u64> =
        top["processes"].as_array().unwrap().iter().map(|p| p["pid"].as_u64().unwrap()).collect();
    if std::fs::read_to_string("/proc/2/comm").is_ok_and(|c| c.trim() == "kthreadd") {
        assert!(!pids.contains(&2));
        assert!(top["kernel_threads"].as_u64().unwrap() > 0);
    } else {
        eprintln!("no kthreadd visible here (PID namespace): only checking that the scan ran");
    }
    assert!(pids.contains(&(std::process::id() as u64)), "the test itself is listed");
}

#[test]
fn no_arguments_runs_top_with_the_machine_picture() {
    let out = run(&[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.trim_start().starts_with("PID  USER"), "{text}");
    assert!(text.contains("machine (from meminfo)"), "{text}");
    // Piped, every row (screen.rs: a_pipe_and_full_get_everything); a
    // terminal gets one screen (screen.rs, in tmux).
    assert!(
        out.stderr.is_empty(),
        "nothing on stderr when piped: {:?}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn csv_has_one_line_per_row_with_exact_bytes() {
    let tree = spawn(Mapping::Shared(MIB, 1));
    let out = run(&["top", "--tree", &tree.pid.to_string(), "--format", "csv"]);
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    assert!(lines.next().unwrap().starts_with("pid,ppid,user,source,depth,processes,rss,pss,uss"));
    assert_eq!(lines.count(), 2);
}

#[test]
fn bad_selection_is_a_usage_error() {
    let out = run(&["top", "--name", "("]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--name"));
    let out = run(&["top", "--user", "no-such-user-here"]);
    assert_eq!(out.status.code(), Some(2));
    let out = run(&["show"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs a PID"));
}

/// `free -b`'s used and buff/cache, and whether its `used` is
/// `total - available` (procps-ng 4.0.1 and later) or `total - free -
/// buff/cache` (older).
fn free_b() -> Option<(u64, u64, u64, bool)> {
    let out = std::process::Command::new("free").arg("-b").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let mem: Vec<u64> = text
        .lines()
        .find(|l| l.starts_with("Mem:"))?
        .split_whitespace()
        .skip(1)
        .filter_map(|w| w.parse().ok())
        .collect();
    let version = std::process::Command::new("free").arg("-V").output().ok()?;
    let version = String::from_utf8_lossy(&version.stdout).to_string();
    let v: Vec<u32> =
        version.rsplit(' ').next()?.trim().split('.').filter_map(|p| p.parse().ok()).collect();
    let new_used = v >= vec![4, 0, 1];
    Some((mem[0], mem[1], mem[4], new_used))
}

/// Live, against `free -b`: the picture's used and buff/cache are
/// free's (within what the machine changes between the two reads), the
/// waterfall's lines add up to MemTotal exactly, and a child's known
/// anonymous memory is in the process lines.
#[test]
fn machine_used_and_cache_match_free_and_lines_add_up() {
    let Some((total, _, _, new_used)) = free_b() else {
        println!("skipped: no `free` (procps) on this machine");
        return;
    };
    let child = spawn(Mapping::Anonymous(64 * MIB));
    // Other work on the machine moves memory between the two reads: try
    // a few times for a pair of reads close enough.
    let slack = 256 * MIB as u64;
    let mut m = Value::Null;
    let mut seen = Vec::new();
    for _ in 0..5 {
        let (_, used_before, cache_before, _) = free_b().unwrap();
        m = run_json(&["machine", "--format", "json"]);
        let (_, used, buff_cache, _) = free_b().unwrap();
        let mine = if new_used {
            m["used"].as_u64().unwrap()
        } else {
            total - m["free"].as_u64().unwrap() - m["buff_cache"].as_u64().unwrap()
        };
        let cache = m["buff_cache"].as_u64().unwrap();
        let within = |a: u64, b0: u64, b1: u64| a + slack >= b0.min(b1) && a <= b0.max(b1) + slack;
        seen.push((mine, used, cache, buff_cache));
        if within(mine, used_before, used) && within(cache, cache_before, buff_cache) {
            break;
        }
    }
    drop(child);
    let last = *seen.last().unwrap();
    assert!(
        last.0.abs_diff(last.1) < 2 * slack && last.2.abs_diff(last.3) < 2 * slack,
        "used/buff-cache (memtally, free) per try: {seen:?}"
    );
    assert_eq!(m["total"].as_u64(), Some(total));
    println!(
        "memtally used {} buff/cache {}; free -b used {} buff/cache {}",
        last.0, last.2, last.1, last.3
    );
    // The old picture's "in use" (total - free) was far from free's used
    // whenever the page cache is large; this is the figure that must match.
    let lines = m["lines"].as_array().unwrap();
    let sum: i64 = lines.iter().map(|l| l["bytes"].as_i64().unwrap()).sum();
    assert_eq!(sum as u64, total, "the lines add up to MemTotal");
    let line = |n: &str| lines.iter().find(|l| l["name"] == n).unwrap()["bytes"].as_i64().unwrap();
    assert!(line("process_anon") >= 64 * MIB as i64);
    for l in lines {
        assert!(!l["source"].as_str().unwrap().is_empty());
        if l["name"] != "unexplained" {
            assert!(l["bytes"].as_i64().unwrap() >= 0, "{l}");
        }
    }
    let text = String::from_utf8_lossy(&run(&["machine"]).stdout).to_string();
    for n in [
        "free",
        "process_anon",
        "page_cache_unmapped",
        "slab_reclaimable",
        "unexplained",
        "SReclaimable",
    ] {
        assert!(text.contains(n), "{n} in {text}");
    }
}

/// Recorded: GPU driver memory (amdgpu GTT in sysfs) is a named line, out
/// of the remainder, and the lines still add up to MemTotal exactly.
#[test]
fn recorded_gpu_gtt_is_a_waterfall_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("meminfo"),
        "MemTotal: 1000000 kB\nMemFree: 400000 kB\nMemAvailable: 700000 kB\nBuffers: 1000 kB\nCached: 300000 kB\nShmem: 1000 kB\nAnonPages: 50000 kB\nSReclaimable: 10000 kB\nSUnreclaim: 5000 kB\nSlab: 15000 kB\nKernelStack: 1000 kB\nPageTables: 2000 kB\n",
    )
    .unwrap();
    let root = dir.path().to_str().unwrap();
    let before = run_json(&["machine", "--proc-root", root, "--format", "json"]);
    for (card, bytes) in [("card0", 100 * MIB), ("card1", 28 * MIB)] {
        let d = dir.path().join("sys/class/drm").join(card).join("device");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("mem_info_gtt_used"), format!("{bytes}\n")).unwrap();
    }
    std::fs::create_dir_all(dir.path().join("sys/class/drm/card0-DP-1")).unwrap();
    let m = run_json(&["machine", "--proc-root", root, "--format", "json"]);
    let lines = m["lines"].as_array().unwrap();
    let gtt = lines.iter().find(|l| l["name"] == "gpu_gtt").unwrap();
    assert_eq!(gtt["bytes"].as_u64(), Some(128 * MIB as u64));
    assert!(gtt["source"].as_str().unwrap().contains("mem_info_gtt_used"));
    assert_eq!(
        m["unexplained"].as_i64().unwrap(),
        before["unexplained"].as_i64().unwrap() - 128 * MIB as i64
    );
    let sum: i64 = lines.iter().map(|l| l["bytes"].as_i64().unwrap()).sum();
    assert_eq!(sum, 1_000_000 * 1024);
    // Exactly: 1000000 − (400000 + 50000 + 300000 + 1000 + 10000 + 5000 + 1000 + 2000) kB − GTT.
    assert_eq!(m["unexplained"].as_i64(), Some(231_000 * 1024 - 128 * MIB as i64));
}

/// Sleeping children, killed and reaped when dropped (also when the test
/// fails).
struct Sleepers(Vec<std::process::Child>);

impl Drop for Sleepers {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// memtally's `top --all --format json` with `limit` open files at most
/// and only standard input, output and error open at its start: a
/// descriptor another test left open at the fork (the tests run side by
/// side) is marked close-on-exec, so what is left of the limit does not
/// depend on what else runs.
fn top_with_open_files(limit: u64) -> std::process::Output {
    use std::os::unix::process::CommandExt;
    let mut cmd = crate::support::memtally();
    cmd.args(["top", "--all", "--format", "json"]);
    // SAFETY: between fork and exec only system calls are made
    // (getrlimit, setrlimit, close_range), which are async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            let mut now = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut now) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let lower = libc::rlimit { rlim_cur: limit, rlim_max: now.rlim_max };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &lower) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
            if libc::syscall(
                libc::SYS_close_range,
                3 as libc::c_uint,
                libc::c_uint::MAX,
                CLOSE_RANGE_CLOEXEC,
            ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.output().unwrap()
}

/// A low limit on open files (`ulimit -n 40`) is no reason to leave
/// processes out: the batch of files waiting for their close shrinks to
/// fit it. Before, a full batch of 64 ran into the limit and every process
/// after looked gone: one process listed, exit status 0. With no room at
/// all, the scan fails with the system's reason instead of listing nobody.
#[test]
fn a_low_limit_on_open_files_lists_every_process_or_says_why_not() {
    let kids = Sleepers(
        (0..80).map(|_| std::process::Command::new("sleep").arg("60").spawn().unwrap()).collect(),
    );
    let out = top_with_open_files(40);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let top: Value = serde_json::from_slice(&out.stdout).unwrap();
    let pids: Vec<u64> =
        top["processes"].as_array().unwrap().iter().map(|p| p["pid"].as_u64().unwrap()).collect();
    for kid in &kids.0 {
        assert!(
            pids.contains(&u64::from(kid.id())),
            "child {} left out under ulimit -n 40",
            kid.id()
        );
    }
    let out = top_with_open_files(7);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "no file could be opened, yet exit 0: {stderr}");
    // The scan's own refusal, naming the file it could not open.
    assert!(
        stderr.starts_with("memtally: /proc/") && stderr.contains("Too many open files"),
        "{stderr}"
    );
    drop(kids);
}
