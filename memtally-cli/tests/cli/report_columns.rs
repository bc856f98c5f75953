//! The report's process table speaks `top`'s words with `top`'s figures:
//! SWAP PSS (SwapPss and shared memory's swap once, not the full Swap
//! that counts a page shared by two processes twice), FOOTPRINT PSS
//! (Pss_Anon + SwapPss), also for a process whose rollup the full read
//! dropped (not of the same instant as its smaps); and categories as
//! `show` prints them.

use std::collections::HashMap;

use serde_json::Value;

use crate::support::{copied_fixture, run};

/// A recorded chromium whose smaps and rollup both swap 400 KiB with a
/// SwapPss of 200 KiB, and whose rollup's Rss is 4 KiB off its smaps':
/// `top` reads the rollup, the report's full read drops it.
fn tree() -> (tempfile::TempDir, String) {
    let (tmp, dir) = copied_fixture("chromium-browser");
    let pid = dir.join("11672");
    let swap = "Swap:                  0 kB\nSwapPss:               0 kB";
    let swapped = "Swap:                400 kB\nSwapPss:             200 kB";
    let smaps = std::fs::read_to_string(pid.join("smaps")).unwrap();
    assert!(smaps.contains(swap));
    std::fs::write(pid.join("smaps"), smaps.replacen(swap, swapped, 1)).unwrap();
    let rollup = std::fs::read_to_string(pid.join("smaps_rollup")).unwrap();
    let rollup = rollup
        .replace(swap, swapped)
        .replace("Rss:              211800 kB", "Rss:              211804 kB");
    std::fs::write(pid.join("smaps_rollup"), rollup).unwrap();
    (tmp, dir.to_str().unwrap().to_string())
}

/// `top --format json`'s processes by PID.
fn top(root: &str) -> HashMap<u64, Value> {
    let out = run(&["top", "--proc-root", root, "--format", "json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["processes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["pid"].as_u64().unwrap(), p.clone()))
        .collect()
}

#[test]
fn the_process_table_has_top_s_names_and_top_s_figures() {
    let (_tmp, root) = tree();
    let dir = tempfile::tempdir().unwrap();
    let page = crate::report::report(dir.path(), "cols.html", &["--proc-root", &root]);
    let html = std::fs::read_to_string(&page).unwrap();
    let heads =
        html.split(r#"<table id="procs""#).nth(1).unwrap().split("</thead>").next().unwrap();
    for name in [">PSS<", ">USS<", ">PSS DIRTY<", ">SWAP PSS<", ">FOOTPRINT PSS<", ">RSS<"] {
        assert!(heads.contains(name), "{name} in {heads}");
    }
    assert!(!heads.contains(">Swap<") && !heads.contains(">Footprint<"), "{heads}");
    let top = top(&root);
    let rows = crate::report::rows(&html);
    let json = crate::report::embedded(&page);
    let p = &json["processes"][0];
    assert_eq!(p["pid"], 11672);
    // The full read dropped the rollup: its PSS is the mappings' sum.
    assert_ne!(p["totals"]["pss"], top[&11672]["pss"], "the rollup was dropped");
    let cells = &rows[&11672];
    // Columns: pid, PSS, USS, dirty, SWAP PSS, FOOTPRINT PSS, RSS.
    assert_eq!(cells[4], 200 * 1024, "SWAP PSS is SwapPss, not Swap's 400K");
    let t = &top[&11672];
    let swap_pss = t["swap_pss"].as_i64().unwrap() + t["shmem_swap"].as_i64().unwrap();
    assert_eq!(cells[4], swap_pss, "SWAP PSS as top shows it");
    assert_eq!(cells[5], t["footprint_pss"].as_i64().unwrap(), "FOOTPRINT PSS as top shows it");
    assert!(cells[5] > 0);
}

#[test]
fn categories_are_named_as_show_names_them() {
    let (_tmp, root) = tree();
    let dir = tempfile::tempdir().unwrap();
    let page = crate::report::report(dir.path(), "cats.html", &["--proc-root", &root]);
    let html = std::fs::read_to_string(&page).unwrap();
    for label in ["file read-only data", "RELRO (relocated ro)", "file code"] {
        assert!(html.contains(&format!("<td>{label}</td>")), "{label} in the detail table");
        assert!(html.contains(&format!(r#"data-label="{label}""#)), "{label} in the treemap");
    }
    for key in ["file_rodata", "relro", "file_code"] {
        assert!(!html.contains(&format!("<td>{key}</td>")), "{key} in a table");
        assert!(!html.contains(&format!(r#"data-label="{key}""#)), "{key} in the treemap");
    }
}
