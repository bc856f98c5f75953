//! Totals that add up (issue 21): every figure summed over processes is
//! proportional or private, checked in every view that sums on a forked
//! family sharing written pages; and the two footprints, against the
//! `status` and `smaps_rollup` of a live child.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::figures::{bytes, cell};
use crate::support::lone::{family, lone, Family};
use crate::support::{rollup, run, run_json, MIB};

/// The figures a sum over several processes must not carry: each counts
/// a page the family shares once per process.
const FULL_COUNT: &[&str] = &["rss", "shared_dirty", "shared_clean", "swap", "anonymous", "dirty"];

/// `obj` (a sum over several processes) has no full-count figure, or has
/// it `null`.
fn no_full_count(what: &str, obj: &Value) {
    for k in FULL_COUNT {
        assert!(obj.get(*k).is_none_or(Value::is_null), "{what}: {k} summed in full: {obj}");
    }
}

/// Σ of `key` over the per-process objects whose `pid` is one of `pids`.
fn sum_of(objs: &[Value], pids: &[u32], key: &str) -> u64 {
    objs.iter()
        .filter(|p| p["pid"].as_u64().is_some_and(|pid| pids.contains(&(pid as u32))))
        .map(|p| p[key].as_u64().unwrap_or_else(|| panic!("{key} of {p}")))
        .sum()
}

const LEN: usize = 16 * MIB;
const CHILDREN: usize = 3;

/// The family, with its PIDs as `--pid` arguments.
fn the_family() -> (Family, Vec<u32>, String) {
    let f = family(LEN, CHILDREN);
    let pids = f.pids();
    let list = pids.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    (f, pids, list)
}

/// The family shares its written pages: each process's Shared_Dirty holds
/// them in full, its Pss_Dirty a quarter (what makes the rule matter).
fn check_the_family_shares(pids: &[u32]) {
    for &pid in pids {
        let r = rollup(Path::new(&format!("/proc/{pid}/smaps_rollup")));
        assert!(r["shared_dirty"] >= LEN as u64, "pid {pid}: {r:?}");
        assert!(r["pss_dirty"] < (LEN / 2) as u64, "pid {pid}: {r:?}");
    }
}

#[test]
fn every_view_that_sums_over_processes_sums_proportional_figures_only() {
    let (_f, pids, list) = the_family();
    check_the_family_shares(&pids);
    let root = pids[0].to_string();

    // top: totals, and the rows of several processes (program, tree).
    let top = run_json(&["top", "--pid", &list, "--format", "json"]);
    let procs = top["processes"].as_array().unwrap().clone();
    no_full_count("top totals", &top["totals"]);
    assert_eq!(top["totals"]["pss_dirty"].as_u64(), Some(sum_of(&procs, &pids, "pss_dirty")));
    assert_eq!(top["totals"]["pss"].as_u64(), Some(sum_of(&procs, &pids, "pss")));
    for p in &procs {
        assert!(p["shared_dirty"].as_u64().unwrap() >= LEN as u64, "per process, in full: {p}");
    }
    for by in ["program", "tree"] {
        let doc = run_json(&["top", "--pid", &list, "--by", by, "--format", "json"]);
        let rows = doc["rows"].as_array().unwrap();
        let several = rows.iter().find(|r| r["processes"].as_u64() == Some(pids.len() as u64));
        let several = several.unwrap_or_else(|| panic!("--by {by}: a row of the family: {doc}"));
        no_full_count(&format!("top --by {by} row"), several);
        assert_eq!(several["pss_dirty"], top["totals"]["pss_dirty"], "--by {by}");
    }
    let table = String::from_utf8(run(&["top", "--pid", &list]).stdout).unwrap();
    let total = table.lines().find(|l| l.starts_with("total")).unwrap();
    let rss_column = table.lines().next().unwrap().find("RSS").unwrap();
    assert_eq!(total[..rss_column + 3].trim_end().chars().last(), Some('-'), "{table}");

    // show over several processes: totals, categories, rows.
    let show = run_json(&["show", "--pid", &list, "--format", "json"]);
    no_full_count("show totals", &show["totals"]);
    for c in show["categories"].as_array().unwrap() {
        no_full_count("show category", c);
    }
    for r in show["rows"].as_array().unwrap() {
        no_full_count("show row", r);
    }
    let own: Vec<Value> = show["processes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let mut t = p["totals"].clone();
            t["pid"] = p["pid"].clone();
            t
        })
        .collect();
    assert_eq!(show["totals"]["pss_dirty"].as_u64(), Some(sum_of(&own, &pids, "pss_dirty")));

    // watch: JSON Lines, CSV, the table's lines.
    let out = run(&[
        "watch",
        "--pid",
        &list,
        "--count",
        "2",
        "--interval",
        "100ms",
        "--categories",
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    for line in text.lines() {
        let doc: Value = serde_json::from_str(line).unwrap();
        if doc["type"] != "sample" {
            continue;
        }
        no_full_count("watch total", &doc["total"]);
        for c in doc["categories"].as_array().unwrap() {
            no_full_count("watch category", c);
        }
        let procs = doc["processes"].as_array().unwrap();
        assert_eq!(doc["total"]["pss_dirty"].as_u64(), Some(sum_of(procs, &pids, "pss_dirty")));
    }
    let out =
        run(&["watch", "--pid", &list, "--count", "2", "--interval", "100ms", "--format", "csv"]);
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    for line in lines {
        let cells: BTreeMap<&str, &str> = header.iter().copied().zip(line.split(',')).collect();
        for k in FULL_COUNT.iter().filter(|k| cells.contains_key(**k)) {
            assert_eq!(cells[k], "", "watch CSV: {k} summed in full: {line}");
        }
        let pss_dirty: u64 = cells["pss_dirty"].parse().unwrap();
        assert!(pss_dirty < (2 * LEN) as u64, "Σ Pss_Dirty counts the pages once: {line}");
        assert!(pss_dirty >= LEN as u64 * 9 / 10, "{line}");
    }
    let out = run(&["watch", "--pid", &list, "--count", "2", "--interval", "100ms"]);
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text.lines().find(|l| l.starts_with('[')).unwrap();
    assert!(line.contains("PSS dirty") && !line.contains("RSS"), "{line}");

    // plot: the series file's total, drawn as Pss_Dirty.
    let dir = tempfile::tempdir().unwrap();
    let series = dir.path().join("s.csv");
    let out = run(&[
        "watch",
        "--pid",
        &list,
        "--count",
        "2",
        "--interval",
        "100ms",
        "-o",
        series.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let svg = dir.path().join("s.svg");
    let (s, v) = (series.to_str().unwrap(), svg.to_str().unwrap());
    let out = run(&["plot", s, "-o", v, "--figure", "pss_dirty"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (_, data) = crate::support::svg_data(&svg);
    let total = data["lines"].as_array().unwrap().iter().find(|l| l["label"] == "total pss_dirty");
    let total = total.unwrap_or_else(|| panic!("a total line: {data}"));
    for p in total["points"].as_array().unwrap() {
        let y = p[1].as_u64().unwrap();
        assert!(y < (2 * LEN) as u64 && y >= LEN as u64 * 9 / 10, "{p}");
    }
    let out = run(&["plot", s, "-o", v, "--figure", "shared_dirty"]);
    if out.status.success() {
        let (_, data) = crate::support::svg_data(&svg);
        let lines = data["lines"].as_array().unwrap();
        assert!(!lines.iter().any(|l| l["label"] == "total shared_dirty"), "{data}");
    }

    // snapshot totals and categories; diff of it.
    let snap = crate::support::run_snapshot(&["snapshot", "--pid", &list]);
    no_full_count("snapshot totals", &snap["totals"]);
    for c in snap["categories"].as_array().unwrap() {
        no_full_count("snapshot category", c);
    }
    let a = dir.path().join("a.json");
    std::fs::write(&a, serde_json::to_vec(&snap).unwrap()).unwrap();
    let a = a.to_str().unwrap();
    let diff = run_json(&["diff", a, a, "--format", "json"]);
    no_full_count("diff totals before", &diff["totals"]["before"]);
    no_full_count("diff totals delta", &diff["totals"]["delta"]);
    assert!(diff.get("notes").is_none_or(|n| n.as_array().is_some_and(Vec::is_empty)), "{diff}");

    // export: a program row of the family, and the rest past --top (the
    // samples, not the HELP lines that name the metrics).
    let samples = |args: &[&str]| -> Vec<String> {
        let text = String::from_utf8(run(args).stdout).unwrap();
        text.lines().filter(|l| !l.starts_with('#')).map(String::from).collect()
    };
    let has = |lines: &[String], name: &str| lines.iter().any(|l| l.starts_with(name));
    let program = samples(&["export", "--tree", &root, "--by", "program"]);
    assert!(has(&program, "memtally_program_pss_bytes{program=\"cow_family\"}"), "{program:?}");
    assert!(!has(&program, "memtally_program_rss_bytes{program=\"cow_family\"}"), "{program:?}");
    let rest = samples(&["export", "--tree", &root, "--top", "1"]);
    assert!(has(&rest, "memtally_other_processes_pss_bytes "), "{rest:?}");
    assert!(!has(&rest, "memtally_other_processes_rss_bytes "), "{rest:?}");
}

/// `status` of a live process as (RssAnon, VmSwap) bytes.
fn status_footprint(pid: u32) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb = |key: &str| -> u64 {
        let line = text.lines().find(|l| l.starts_with(key)).unwrap();
        line[key.len()..].trim().trim_end_matches("kB").trim().parse::<u64>().unwrap() * 1024
    };
    kb("RssAnon:") + kb("VmSwap:")
}

#[test]
fn footprints_match_status_and_the_rollup_of_a_live_child() {
    let child = lone(8 * MIB);
    let pid = child.child.0.id();
    let p = pid.to_string();
    let footprint = status_footprint(pid);
    let r = rollup(Path::new(&format!("/proc/{pid}/smaps_rollup")));
    let summable = r["pss_anon"] + r["swap_pss"];
    assert!(footprint >= (8 * MIB) as u64, "{footprint}");

    let top = run_json(&["top", "--pid", &p, "--format", "json"]);
    let proc = &top["processes"][0];
    assert_eq!(proc["footprint"].as_u64(), Some(footprint), "top: status RssAnon + VmSwap");
    assert_eq!(proc["footprint_pss"].as_u64(), Some(summable), "top: Pss_Anon + SwapPss");
    let table =
        String::from_utf8(run(&["top", "--pid", &p, "--sort", "footprint"]).stdout).unwrap();
    assert!(table.lines().next().unwrap().contains("FOOTPRINT"), "{table}");
    let csv = String::from_utf8(run(&["top", "--pid", &p, "--format", "csv"]).stdout).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |k: &str| row[header.iter().position(|h| *h == k).unwrap()];
    assert_eq!(col("footprint"), footprint.to_string());
    assert_eq!(col("footprint_pss"), summable.to_string());

    let show = run_json(&["show", &p, "--format", "json"]);
    assert_eq!(show["totals"]["footprint"].as_u64(), Some(footprint), "show");
    assert_eq!(show["totals"]["footprint_pss"].as_u64(), Some(summable), "show");
    let text = String::from_utf8(run(&["show", &p]).stdout).unwrap();
    assert!(text.contains("footprint ") && text.contains("footprint_pss "), "{text}");

    // Where smaps is denied (an unprivileged user against root's child),
    // the footprint still comes from status.
    if let Some(out) = crate::permissions::as_nobody(&["top", "--pid", &p, "--format", "json"]) {
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let denied = &doc["processes"][0];
        assert_eq!(denied["source"], "status", "{doc}");
        assert!(denied["pss"].is_null(), "{doc}");
        assert_eq!(denied["footprint"].as_u64(), Some(footprint), "denied smaps: {doc}");
        assert!(denied["footprint_pss"].is_null(), "no rollup, no summable footprint: {doc}");
    }

    let snap = crate::support::run_snapshot(&["snapshot", "--pid", &p]);
    assert_eq!(snap["processes"][0]["totals"]["footprint"].as_u64(), Some(footprint), "snapshot");

    let out = run(&["watch", &p, "--count", "1", "--format", "json"]);
    let sample: Value =
        serde_json::from_str(String::from_utf8(out.stdout).unwrap().lines().next().unwrap())
            .unwrap();
    let sampled = &sample["processes"][0];
    assert_eq!(sampled["footprint"].as_u64(), Some(footprint), "watch");
    assert_eq!(sampled["footprint_pss"].as_u64(), Some(summable), "watch");

    let out = run(&["export", "--pid", &p]);
    let text = String::from_utf8(out.stdout).unwrap();
    let metric = |name: &str| -> Option<u64> {
        text.lines()
            .find(|l| l.starts_with(name) && l.contains(&format!("pid=\"{pid}\"")))
            .and_then(|l| l.rsplit(' ').next()?.parse().ok())
    };
    assert_eq!(metric("memtally_process_footprint_bytes{"), Some(footprint), "{text}");
    assert_eq!(metric("memtally_process_footprint_pss_bytes{"), Some(summable), "{text}");
    assert!(
        text.lines().any(|l| l.starts_with("# HELP memtally_process_footprint_bytes")
            && l.contains("Not summable")),
        "HELP says which footprint adds up: {text}"
    );
}

/// The explorer's group rows follow the rule too: the family's program
/// row (four processes) shows `-` for RSS and its dirty memory once.
#[test]
fn explorer_group_rows_sum_proportional_figures_only() {
    use crate::support::tmux::Tmux;
    if !Tmux::available() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    let (_f, pids, _) = the_family();
    check_the_family_shares(&pids);
    let t = Tmux::start(120, 40, &crate::support::repo());
    t.line(&format!("{} ui --by program", env!("CARGO_BIN_EXE_memtally")));
    t.wait_text("machine (from meminfo)");
    t.keys(&["Enter"]);
    t.wait_text("PROGRAM");
    t.text("/");
    t.wait_text("(Enter keeps, Esc clears)");
    t.text("cow_family");
    t.keys(&["Enter"]);
    let s = t.wait_for("the family's row", |s| {
        s.lines().any(|l| l.trim_start().starts_with("cow_family ") && l.contains(" 4 "))
    });
    let header = s.lines().find(|l| l.contains("PROGRAM")).unwrap();
    let words: Vec<&str> = header.split_whitespace().collect();
    assert_eq!(
        &words[..9],
        ["PROGRAM", "PROCS", "USS", "PSS", "RSS", "SWAP", "PSS", "PSS", "DIRTY"],
        "{s}"
    );
    let line = s.lines().find(|l| l.trim_start().starts_with("cow_family ")).unwrap();
    // cow_family PROCS USS PSS RSS SWAP-PSS PSS-DIRTY: one cell each.
    let cells: Vec<&str> = line.split_whitespace().collect();
    let at = |h: &str| {
        cells[["PROGRAM", "PROCS", "USS", "PSS", "RSS", "SWAP PSS", "PSS DIRTY"]
            .iter()
            .position(|c| *c == h)
            .unwrap()]
    };
    assert_eq!(at("PROCS"), "4", "{s}");
    assert_eq!(at("RSS"), "-", "RSS of four processes is not summed:\n{s}");
    let dirty = at("PSS DIRTY");
    assert!(
        dirty.starts_with("16.") || dirty.starts_with("17."),
        "Σ Pss_Dirty counts 16 MiB once:\n{s}"
    );
}

/// The `Swap` of the mapping of `file` in `/proc/PID/smaps`.
fn mapping_swap(pid: u32, file: &Path) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps")).unwrap();
    let name = file.to_str().unwrap();
    let mut inside = false;
    for line in text.lines() {
        if line.contains('-') && line.split_whitespace().nth(1).is_some_and(|p| p.len() == 4) {
            inside = line.ends_with(name);
        } else if inside && line.starts_with("Swap:") {
            return line[5..].trim().trim_end_matches("kB").trim().parse::<u64>().unwrap() * 1024;
        }
    }
    panic!("no mapping of {name} in pid {pid}'s smaps");
}

/// A 32 MiB /dev/shm file, written by a child inside a memory cgroup
/// whose limit is 8 MiB, goes to a zram swap device the test made; a
/// second child maps it too. The kernel gives both mappings the file's
/// swap as `Swap` and none of it as `SwapPss`: top, show and snapshot
/// count it once (`shmem_swap`, in SWAP PSS). Before, top's SWAP PSS
/// total left it out whole.
#[test]
fn swapped_shared_memory_counts_once_in_the_swap_pss_totals() {
    use crate::support::lone::ShmMapper;
    use crate::support::swap::{MemCgroup, ShmFile, ZramSwap};
    if unsafe { libc::geteuid() } != 0 {
        println!("skipped: needs root (zram, swapon, a memory cgroup)");
        return;
    }
    // Dropped last to first: the children, the file, the cgroup, the swap.
    let _zram = match ZramSwap::make(128 * MIB as u64) {
        Ok(z) => z,
        Err(why) => return println!("skipped: {why}"),
    };
    let cg = match MemCgroup::make("memtally-shmem-swap", 8 * MIB as u64) {
        Ok(c) => c,
        Err(why) => return println!("skipped: {why}"),
    };
    let file = ShmFile(format!("/dev/shm/memtally-shmem-swap-{}", std::process::id()).into());
    let mut writer = ShmMapper::start(&file.0, 32 * MIB, true);
    let mut reader = ShmMapper::start(&file.0, 32 * MIB, false);
    cg.add(writer.pid());
    cg.add(reader.pid());
    writer.map();
    reader.map();
    let (a, b) = (writer.pid(), reader.pid());
    let swapped = mapping_swap(a, &file.0);
    assert!(swapped >= 16 * MIB as u64, "the limit pushed the file into swap: {swapped}");
    assert_eq!(mapping_swap(b, &file.0), swapped, "both map the whole file");
    for pid in [a, b] {
        let r = rollup(Path::new(&format!("/proc/{pid}/smaps_rollup")));
        assert!(r["swap"] >= swapped && r["swap_pss"] < MIB as u64, "no SwapPss for shmem: {r:?}");
    }
    let list = format!("{a},{b}");

    let top = run_json(&["top", "--pid", &list, "--format", "json"]);
    let procs = top["processes"].as_array().unwrap();
    let shares: Vec<u64> = procs.iter().map(|p| p["shmem_swap"].as_u64().unwrap()).collect();
    assert_eq!(shares.iter().sum::<u64>(), swapped, "counted once: {shares:?}");
    assert!(shares.iter().all(|&s| s.abs_diff(swapped / 2) <= 4096), "split in two: {shares:?}");
    for p in procs {
        let (fp, share) = (p["footprint_pss"].as_u64().unwrap(), p["shmem_swap"].as_u64().unwrap());
        assert_eq!(p["footprint_pss_shmem"].as_u64(), Some(fp + share), "asked for: {p}");
    }
    let totals = &top["totals"];
    assert_eq!(totals["shmem_swap"].as_u64(), Some(swapped));
    let swap_pss = totals["swap_pss"].as_u64().unwrap();
    let table = String::from_utf8(run(&["top", "--pid", &list]).stdout).unwrap();
    let shown = bytes(&cell(&table, "PID", "total", "SWAP PSS"));
    let want = (swap_pss + swapped) as f64;
    assert!((shown - want).abs() <= want * 0.01, "SWAP PSS total {shown} vs {want}:\n{table}");
    assert!(table.contains("SWAP PSS includes"), "{table}");

    let show = run_json(&["show", "--pid", &list, "--format", "json"]);
    assert_eq!(show["totals"]["shmem_swap"].as_u64(), Some(swapped), "show");
    let shm =
        show["categories"].as_array().unwrap().iter().find(|c| c["category"] == "shared_memory");
    assert_eq!(shm.unwrap()["shmem_swap"].as_u64(), Some(swapped), "show's shared memory row");
    let text =
        String::from_utf8(run(&["show", "--pid", &a.to_string(), &b.to_string()]).stdout).unwrap();
    assert!(text.lines().any(|l| l.starts_with("shared memory")), "the row stays: {text}");
    let shown = bytes(&cell(&text, "CATEGORY", "shared", "SWAP PSS"));
    assert!((shown - swapped as f64).abs() <= swapped as f64 * 0.01, "{shown}:\n{text}");

    let snap = crate::support::run_snapshot(&["snapshot", "--pid", &list]);
    assert_eq!(snap["totals"]["shmem_swap"].as_u64(), Some(swapped), "snapshot");

    // The exporter: the shares, once in all.
    let text = String::from_utf8(run(&["export", "--pid", &list]).stdout).unwrap();
    let exported: u64 = text
        .lines()
        .filter(|l| l.starts_with("memtally_process_shmem_swap_bytes{"))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(exported, swapped, "{text}");

    // The machine: swap used taken apart, the file's swap among the
    // processes' SWAP PSS (once), the parts adding up, none below 0.
    let machine = run_json(&["machine", "--format", "json"]);
    let s = &machine["swap_used"];
    let used = s["used"].as_u64().unwrap_or_else(|| panic!("swap in use: {machine}"));
    let parts = s["parts"].as_array().unwrap();
    assert_eq!(parts.iter().map(|p| p["bytes"].as_u64().unwrap()).sum::<u64>(), used, "{s}");
    let named: Vec<&str> = parts.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(named, ["processes", "swap_cache", "unmapped_or_unread"]);
    assert!(s["processes_swap"].as_u64().unwrap() >= swapped, "{s}");
    assert!(parts[0]["bytes"].as_u64().unwrap() >= swapped.min(used), "{s}");
    let text = String::from_utf8(run(&["machine"]).stdout).unwrap();
    assert!(text.contains("swap used"), "{text}");
    drop((writer, reader));
}
