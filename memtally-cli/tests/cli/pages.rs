//! The page-level figures on live children that write known bytes:
//! `top --exact` and `show --exact` (what a group gives back) against the
//! kernel's own figures, `shared` on a forked family, `show --pages` with
//! transparent huge pages and KSM, a 1.4 TB reservation that costs
//! nothing, a family that churns while read, and the runs without the
//! privilege (one line, never zeros) or on a recorded tree (live only).

use std::path::Path;

use serde_json::Value;

use crate::support::pages_child::page_child;
use crate::support::{python_root_path, rollup, run, run_json, MIB};

/// Whether this run may read page frames (root with CAP_SYS_ADMIN);
/// prints why not.
pub(crate) fn frames_readable() -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let ok = root && std::fs::File::open("/proc/kpagecount").is_ok();
    if !ok {
        eprintln!("skipped: reading page frames needs root (CAP_SYS_ADMIN) and /proc/kpagecount");
    }
    ok
}

pub(crate) fn rollup_of(pid: u32) -> std::collections::BTreeMap<String, u64> {
    rollup(&Path::new("/proc").join(pid.to_string()).join("smaps_rollup"))
}

pub(crate) fn num(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} is a number in {v}"))
}

const PAGE: u64 = 4096;

#[test]
fn a_family_gives_back_its_own_pages_and_a_child_alone_its_private_ones() {
    if !frames_readable() {
        return;
    }
    let Some(family) = page_child("family", &[64 * MIB, 16 * MIB]) else { return };
    let (parent, kid) = (family.pids[0], family.pids[1]);
    let tree = parent.to_string();
    let doc = run_json(&["top", "--tree", &tree, "--by", "tree", "--exact", "--format", "json"]);
    let row = &doc["rows"][0];
    assert_eq!(row["pid"].as_u64(), Some(u64::from(parent)), "{doc}");
    // Anonymous pages of an exec'd family are shared only inside it, so
    // the kernel's Pss_Anon summed over the three is every one of them,
    // counted once: the tree's exclusive anonymous bytes, but for what
    // each process's rollup rounds down to whole kB (under 1 KiB each,
    // plus a few bytes of the kernel's fixed-point shares: the difference,
    // whole KiB, is at most 3 KiB).
    let pss_anon: u64 = family.pids.iter().map(|&p| rollup_of(p)["pss_anon"]).sum();
    let anon = num(row, "exclusive_anon");
    assert!(
        anon.is_multiple_of(PAGE) && anon >= pss_anon && anon - pss_anon <= 3 * 1024,
        "exclusive anon {anon} vs the family's Pss_Anon {pss_anon}"
    );
    assert!(anon >= (96 * MIB) as u64, "the 64 MiB before the fork and 16 MiB each: {anon}");
    // File pages only the family maps (its own program) are in it too;
    // the C library, mapped by others, is not.
    let exclusive = num(row, "exclusive");
    assert!(exclusive >= anon && exclusive - anon < 64 * 1024, "{row}");
    assert_eq!(num(row, "exclusive_swap"), 0);
    assert_eq!(doc["exclusive"]["exclusive"], row["exclusive"], "the selection is the tree");

    // One child alone: exactly the pages it maps alone, the kernel's USS.
    let one = run_json(&["top", "--pid", &kid.to_string(), "--exact", "--format", "json"]);
    let r = rollup_of(kid);
    let uss = r["private_clean"] + r["private_dirty"];
    assert_eq!(num(&one["rows"][0], "exclusive"), uss, "{one}");
    assert!(uss >= (16 * MIB) as u64);

    // show --exact: each alone, then together: the same figures.
    let show = run_json(&["show", "--tree", &tree, "--exact", "--format", "json"]);
    assert_eq!(show["together"]["exclusive"], row["exclusive"], "{show}");
    let alone = show["processes"].as_array().unwrap();
    assert_eq!(alone.len(), 3);
    let kid_line = alone.iter().find(|l| l["pid"].as_u64() == Some(u64::from(kid))).unwrap();
    assert_eq!(num(kid_line, "exclusive"), uss);

    // The table names the column and the CSV carries the bytes.
    let table = run(&["top", "--tree", &tree, "--by", "tree", "--exact"]);
    assert!(String::from_utf8_lossy(&table.stdout).contains("EXCLUSIVE"));
    let csv = run(&["top", "--pid", &kid.to_string(), "--exact", "--format", "csv"]);
    let text = String::from_utf8_lossy(&csv.stdout);
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at = header.iter().position(|h| *h == "exclusive").expect("an exclusive column");
    let cells: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(cells[at], uss.to_string());
}

#[test]
fn shared_pairs_a_family_by_what_they_share() {
    if !frames_readable() {
        return;
    }
    let Some(family) = page_child("family", &[32 * MIB, 8 * MIB]) else { return };
    let doc = run_json(&["shared", &family.pids[0].to_string(), "--format", "json"]);
    let pairs = doc["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 3, "three processes, three pairs: {doc}");
    for p in pairs {
        let shared = num(p, "shared");
        // The 32 MiB written before the fork, and the pages of the
        // program and libraries all of them map.
        assert!(shared >= (32 * MIB) as u64 && shared < (40 * MIB) as u64, "{p}");
        // Those 32 MiB are mapped three times: a third of them in each PSS.
        let third = (32 * MIB / 3) as u64;
        assert!(num(p, "pss_a") >= third && num(p, "pss_a") <= num(&p["a"], "pss"), "{p}");
    }
}

#[test]
fn without_cap_sys_admin_exact_says_what_to_run_and_prints_no_zeros() {
    if !frames_readable() {
        return;
    }
    let Some(kid) = page_child("family", &[MIB, MIB]) else { return };
    let pid = kid.pids[1].to_string();
    let bin = env!("CARGO_BIN_EXE_memtally");
    // Root without CAP_SYS_ADMIN: pagemap hides the frame numbers; and
    // nobody: /proc/kpageflags is refused.
    let runs: [&[&str]; 2] = [
        &["--bounding-set", "-sys_admin", "--inh-caps", "-sys_admin"],
        &["--reuid", "65534", "--regid", "65534", "--clear-groups"],
    ];
    for how in runs {
        let out = std::process::Command::new("setpriv")
            .args(how)
            .args([bin, "top", "--pid", &pid, "--exact"])
            .output();
        let Ok(out) = out else { return eprintln!("skipped: no setpriv") };
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(4), "exit 4 (permission) {how:?}: {err}");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        assert!(err.contains("CAP_SYS_ADMIN") && err.contains("run memtally as root"), "{err}");
        assert!(out.stdout.is_empty(), "no table of zeros");
    }
    // show --pages without the privilege: the states any reader gets,
    // and a line for the rest.
    let out = std::process::Command::new("setpriv")
        .args(runs[0])
        .args([bin, "show", &pid, "--pages", "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["source"], "pagemap_scan");
    assert!(doc["totals"]["active"].is_null(), "unknown, not 0: {doc}");
    assert!(num(&doc["totals"], "present") >= (2 * MIB) as u64);
    assert!(doc["notes"][0].as_str().unwrap().contains("kpageflags"), "{doc}");
}

#[test]
fn a_user_sees_the_page_states_of_their_own_process_without_root() {
    if !frames_readable() {
        return;
    }
    // nobody's own child: its pagemap is nobody's to read, the frames not.
    let bin = env!("CARGO_BIN_EXE_memtally");
    let script = "sleep 30 & p=$!; \"$0\" show $p --pages --format json; s=$?; kill $p; exit $s";
    let out = std::process::Command::new("setpriv")
        .args(["--reuid", "65534", "--regid", "65534", "--clear-groups", "sh", "-c", script, bin])
        .output();
    let Ok(out) = out else { return eprintln!("skipped: no setpriv") };
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["source"], "pagemap_scan", "{doc}");
    assert_eq!(doc["partial"], true);
    let totals = &doc["totals"];
    assert!(num(totals, "present") > 0 && num(totals, "file") > 0, "{doc}");
    assert!(totals["referenced"].is_null() && totals["dirty"].is_null(), "unknown, not 0");
}

#[test]
fn a_recorded_tree_says_the_page_figures_are_live_only() {
    let root = python_root_path();
    for args in [
        &["top", "--exact"][..],
        &["show", "11364", "--pages"],
        &["show", "11364", "--pid", "11364", "--exact"],
        &["shared"],
    ] {
        let mut full = vec!["--proc-root", root.as_str()];
        full.extend(args);
        let out = run(&full);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("live") && err.lines().count() == 1, "{err}");
    }
}

/// Bytes memtally read through system calls (`rchar`), run under a shell
/// whose own count takes in its reaped child's.
fn bytes_read(args: &[&str]) -> u64 {
    let bin = env!("CARGO_BIN_EXE_memtally");
    let script = format!("\"$0\" {} >/dev/null || exit 1; cat /proc/$$/io", args.join(" "));
    let out = std::process::Command::new("sh").args(["-c", &script, bin]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find(|l| l.starts_with("rchar:")).expect("rchar");
    line[6..].trim().parse().unwrap()
}

#[test]
fn a_huge_reservation_costs_nothing_to_read() {
    if !frames_readable() {
        return;
    }
    let Some(child) = page_child("reserve", &[8 * MIB]) else { return };
    let pid = child.pids[0].to_string();
    // Its 1.4 TB of pagemap is 2.8 GB of entries; memtally reads the
    // resident ranges only (the written 8 MiB is 16 KiB of entries).
    let read = bytes_read(&["show", &pid, "--pages", "--format", "json"]);
    assert!(read < 16 * MIB as u64, "show --pages read {read} bytes");
    let read = bytes_read(&["top", "--pid", &pid, "--exact", "--format", "json"]);
    assert!(read < 16 * MIB as u64, "top --exact read {read} bytes");
    let doc = run_json(&["show", &pid, "--pages", "--format", "json"]);
    let guard = doc["categories"].as_array().unwrap().iter().find(|c| c["category"] == "guard");
    assert!(guard.is_none(), "the reservation has no pages: {doc}");
}

#[test]
fn page_states_count_transparent_huge_pages() {
    if !frames_readable() {
        return;
    }
    let mode = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled");
    if mode.as_deref().map_or(true, |m| m.contains("[never]")) {
        return eprintln!("skipped: transparent huge pages are off");
    }
    let Some(child) = page_child("thp", &[8 * MIB]) else { return };
    let pid = child.pids[0];
    let thp = rollup_of(pid)["anon_huge_pages"];
    if thp == 0 {
        return eprintln!("skipped: the kernel gave the child no huge page (fragmented memory)");
    }
    let doc = run_json(&["show", &pid.to_string(), "--pages", "--format", "json"]);
    assert_eq!(doc["source"], "kpageflags");
    assert_eq!(num(&doc["totals"], "huge"), thp, "every THP page, as AnonHugePages: {doc}");
    // A huge page mapped by one process is its alone, page by page.
    let one = run_json(&["top", "--pid", &pid.to_string(), "--exact", "--format", "json"]);
    let r = rollup_of(pid);
    let uss = r["private_clean"] + r["private_dirty"];
    let exclusive = num(&one["rows"][0], "exclusive");
    // Every private page is the child's alone. A file page only memtally
    // and the child map (a page of libc memtally touched while reading)
    // is Shared in the child's smaps but the child's alone once
    // memtally's own mappings are taken off the counts: a few pages more.
    assert!(exclusive >= uss && exclusive <= uss + 64 * 1024, "exclusive {exclusive} vs USS {uss}");
}

/// Sets a KSM knob for the test and puts the old value back on drop.
struct KsmKnob {
    path: &'static str,
    old: String,
}

impl KsmKnob {
    fn set(path: &'static str, value: &str) -> Option<KsmKnob> {
        let old = std::fs::read_to_string(path).ok()?;
        std::fs::write(path, value).ok()?;
        Some(KsmKnob { path, old: old.trim().to_string() })
    }
}

impl Drop for KsmKnob {
    fn drop(&mut self) {
        let _ = std::fs::write(self.path, &self.old);
    }
}

#[test]
fn page_states_count_ksm_pages() {
    if !frames_readable() {
        return;
    }
    let Some(child) = page_child("ksm", &[8 * MIB]) else { return };
    let pid = child.pids[0];
    // ksmd faster for the test, then running; both put back on drop
    // (the child's pages go with it).
    let Some(_scan) = KsmKnob::set("/sys/kernel/mm/ksm/pages_to_scan", "5000") else {
        return eprintln!("skipped: no KSM (/sys/kernel/mm/ksm)");
    };
    let Some(_run) = KsmKnob::set("/sys/kernel/mm/ksm/run", "1") else {
        return eprintln!("skipped: KSM cannot be started");
    };
    let merged = || rollup_of(pid).get("ksm").copied().unwrap_or(0);
    let start = std::time::Instant::now();
    while merged() < (4 * MIB) as u64 && start.elapsed() < std::time::Duration::from_secs(20) {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let ksm = merged();
    if ksm == 0 {
        return eprintln!("skipped: ksmd merged nothing within 20 s");
    }
    let doc = run_json(&["show", &pid.to_string(), "--pages", "--format", "json"]);
    let heap = doc["categories"].as_array().unwrap().iter().find(|c| c["category"] == "heap");
    let heap = heap.expect("a heap category");
    // ksmd goes on merging while memtally reads: at least what smaps said.
    assert!(num(heap, "ksm") >= ksm, "{heap} vs smaps KSM {ksm}");
    let notes = doc["notes"].as_array().unwrap();
    assert!(notes.iter().any(|n| n.as_str().unwrap().contains("KSM")), "{doc}");
}

#[test]
fn a_family_that_churns_while_read_gives_marked_figures() {
    if !frames_readable() {
        return;
    }
    let Some(churn) = page_child("churn", &[4 * MIB]) else { return };
    let tree = churn.pids[0].to_string();
    for _ in 0..5 {
        let out = run(&["top", "--tree", &tree, "--exact", "--all", "--format", "json"]);
        // A child gone before it was read is skipped; one gone while its
        // pages were read leaves its row without a figure, marked.
        if out.status.code() == Some(3) {
            continue; // every selected process exited: said so, exit 3
        }
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        for row in doc["rows"].as_array().unwrap() {
            let ex = &row["exclusive"];
            assert!(ex.is_u64() || (ex.is_null() && doc["partial"] == true), "{row} in {doc}");
        }
    }
}

#[test]
fn exact_json_keys_are_documented() {
    if !frames_readable() {
        return;
    }
    let Some(kid) = page_child("family", &[MIB, MIB]) else { return };
    let doc = run_json(&["top", "--pid", &kid.pids[0].to_string(), "--exact", "--format", "json"]);
    let text = std::fs::read_to_string(crate::support::repo().join("docs/json.md")).unwrap();
    for key in ["exclusive", "exclusive_anon", "exclusive_swap", "exclusive_shmem"] {
        assert!(doc["rows"][0].get(key).is_some() && doc["exclusive"].get(key).is_some());
        assert!(text.contains(&format!("`{key}`")), "docs/json.md names {key}");
    }
    let pages = run_json(&["show", &kid.pids[0].to_string(), "--pages", "--format", "json"]);
    for key in pages["totals"].as_object().unwrap().keys().chain(pages.as_object().unwrap().keys())
    {
        assert!(text.contains(&format!("`{key}`")), "docs/json.md names {key}");
    }
}
