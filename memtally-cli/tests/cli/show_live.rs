//! `memtally show` on live children this test starts itself: exact bytes.

use crate::support::{rollup, run, run_json, spawn, Mapping, MIB};

/// The child's 64 MiB region shows exactly 64 MiB resident and private dirty.
#[test]
fn anonymous_mapping_is_exact_to_the_byte() {
    let child = spawn(Mapping::Anonymous(64 * MIB));
    let doc = run_json(&["show", &child.pid.to_string(), "--format", "json"]);
    assert_eq!(doc["pid"], child.pid);
    let regions = doc["regions"].as_array().unwrap();
    // The kernel may merge the mapping with a neighbour, so find the region
    // that contains the address and check it holds at least our bytes, and
    // exactly our bytes when it is ours alone.
    let r = regions
        .iter()
        .find(|r| {
            let (s, e) = (r["start"].as_u64().unwrap(), r["end"].as_u64().unwrap());
            s <= child.addr && child.addr < e
        })
        .expect("a region contains the child's address");
    let size = r["size"].as_u64().unwrap();
    assert!(size >= (64 * MIB) as u64);
    if size == (64 * MIB) as u64 {
        assert_eq!(r["rss"], 64 * MIB);
        assert_eq!(r["private_dirty"], 64 * MIB);
        assert_eq!(r["anonymous"], 64 * MIB);
    }
    assert!(r["private_dirty"].as_u64().unwrap() >= (64 * MIB) as u64);
    assert_eq!(r["category"], "heap");
    assert_eq!(r["path"], serde_json::Value::Null);
    assert_eq!(r["perms"], "rw-p");
}

/// The totals equal the kernel's own sum (`smaps_rollup`), field by field.
///
/// Live, memtally itself maps the same C library as the child while it
/// reads, which lowers the child's file-backed PSS for that moment (the
/// observer effect every PSS tool has). So: a capture records smaps and
/// smaps_rollup in the same moment and must agree exactly; live, every
/// figure that is not proportional must agree exactly, and PSS may only
/// be lower by at most the file-backed part.
#[test]
fn totals_equal_smaps_rollup_field_by_field() {
    let child = spawn(Mapping::Anonymous(16 * MIB));
    let pid = child.pid.to_string();

    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    crate::support::capture_consistent(child.pid, dir.path());
    let recorded = rollup(&dir.path().join(&pid).join("smaps_rollup"));
    let doc = run_json(&["--proc-root", root, "show", &pid, "--format", "json"]);
    let totals = doc["totals"].as_object().unwrap();
    for (k, v) in &recorded {
        assert_eq!(totals.get(k).and_then(|t| t.as_u64()), Some(*v), "recorded total {k}");
    }
    for k in ["rss", "pss", "pss_anon", "private_dirty", "shared_dirty", "private_clean", "swap"] {
        assert!(recorded.contains_key(k), "rollup has {k}");
    }

    // Other tests in this process write to pages the forked child still
    // shares copy-on-write, which moves its figures; compare only when the
    // rollup was the same before and after memtally read it.
    let path = std::path::PathBuf::from(format!("/proc/{pid}/smaps_rollup"));
    for _ in 0..50 {
        let before = rollup(&path);
        let doc = run_json(&["show", &pid, "--format", "json"]);
        if rollup(&path) != before {
            continue;
        }
        let totals = doc["totals"].as_object().unwrap();
        let got = |k: &str| totals.get(k).and_then(|t| t.as_u64()).unwrap();
        for (k, v) in &before {
            if matches!(k.as_str(), "pss" | "pss_file" | "private_clean" | "shared_clean") {
                continue;
            }
            assert_eq!(got(k), *v, "live total {k}");
        }
        assert!(got("pss") <= before["pss"] && got("pss") >= before["pss"] - before["pss_file"]);
        // A clean file page the child alone maps is shared with memtally
        // while memtally maps the same library: clean bytes may move from
        // private to shared for that moment, never appear or vanish.
        let clean = |f: &dyn Fn(&str) -> u64| f("private_clean") + f("shared_clean");
        assert_eq!(clean(&got), clean(&|k| before[k]), "live clean total");
        assert!(got("private_clean") <= before["private_clean"]);
        assert!(totals.get("kernel_page_size").is_none(), "page sizes are not summed");
        return;
    }
    panic!("the child's rollup never held still across a memtally run");
}

#[test]
fn grouping_by_path_and_perms_adds_up_to_the_same_totals() {
    let child = spawn(Mapping::Anonymous(4 * MIB));
    let pid = child.pid.to_string();
    let by_cat = run_json(&["show", &pid, "--format", "json"]);
    for by in ["path", "perms"] {
        let doc = run_json(&["show", &pid, "--by", by, "--format", "json"]);
        let rows = doc["rows"].as_array().unwrap();
        let sum: u64 = rows.iter().map(|r| r["size"].as_u64().unwrap()).sum();
        assert_eq!(Some(sum), doc["totals"]["size"].as_u64(), "--by {by}");
        let regions: u64 = rows.iter().map(|r| r["regions"].as_u64().unwrap()).sum();
        assert_eq!(regions as usize, doc["regions"].as_array().unwrap().len());
        assert_eq!(doc["totals"]["size"], by_cat["totals"]["size"]);
    }
}

#[test]
fn top_limits_rows_and_sort_orders_them() {
    let child = spawn(Mapping::Anonymous(8 * MIB));
    let pid = child.pid.to_string();
    let doc = run_json(&[
        "show", &pid, "--by", "path", "--top", "3", "--sort", "size", "--format", "json",
    ]);
    let rows = doc["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    assert!(doc["rows_omitted"].as_u64().unwrap() > 0);
    let sizes: Vec<u64> = rows.iter().map(|r| r["size"].as_u64().unwrap()).collect();
    assert!(sizes.windows(2).all(|w| w[0] >= w[1]), "{sizes:?}");
    let table = run(&["show", &pid, "--by", "path", "--top", "3"]);
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(text.contains("more rows not shown"), "{text}");
}

#[test]
fn regions_view_lists_every_mapping_in_table_and_csv() {
    let child = spawn(Mapping::Anonymous(2 * MIB));
    let pid = child.pid.to_string();
    let doc = run_json(&["show", &pid, "--format", "json"]);
    let n = doc["regions"].as_array().unwrap().len();
    let csv = run(&["show", &pid, "--regions", "--format", "csv"]);
    assert!(csv.status.success());
    let text = String::from_utf8(csv.stdout).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    assert!(header.starts_with("pid,start,end,perms,category,path,size,rss,pss"), "{header}");
    assert_eq!(lines.count(), n);
    let table = run(&["show", &pid, "--regions"]);
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(text.lines().nth(1).unwrap().starts_with("ADDRESS"));
    assert!(text.contains(&format!("{:012x}", child.addr)), "the child's region is listed");
}

/// A capture read back with --proc-root gives the same regions as live.
#[test]
fn capture_round_trips_through_proc_root() {
    let child = spawn(Mapping::Anonymous(3 * MIB));
    let pid = child.pid.to_string();
    let dir = tempfile::tempdir().unwrap();
    crate::support::capture_consistent(child.pid, dir.path());
    for f in ["smaps", "maps", "smaps_rollup", "status", "statm", "cmdline", "comm"] {
        assert!(dir.path().join(&pid).join(f).is_file(), "{f} recorded");
    }
    assert!(dir.path().join("meminfo").is_file());
    let recorded =
        run_json(&["--proc-root", dir.path().to_str().unwrap(), "show", &pid, "--format", "json"]);
    let recorded_rollup = rollup(&dir.path().join(&pid).join("smaps_rollup"));
    assert_eq!(recorded["totals"]["rss"].as_u64(), recorded_rollup.get("rss").copied());
    assert_eq!(
        recorded["totals"]["private_dirty"].as_u64(),
        recorded_rollup.get("private_dirty").copied()
    );
    let live = run_json(&["show", &pid, "--format", "json"]);
    let starts = |d: &serde_json::Value| -> Vec<u64> {
        d["regions"].as_array().unwrap().iter().map(|r| r["start"].as_u64().unwrap()).collect()
    };
    assert_eq!(starts(&recorded), starts(&live));
    assert_eq!(recorded["command"], live["command"]);
}
