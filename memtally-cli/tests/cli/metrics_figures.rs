//! The exporter's per-process figures beyond PSS: pss_dirty (the headline
//! dirty column), thp, ksm and hugetlb, equal to what `top --format json`
//! says of the same processes, and every per-row HELP saying whether a sum
//! over processes means something; `promtool check metrics` accepts the
//! result. On recorded trees and a live exec'd child.

use std::path::Path;

use serde_json::Value;

use crate::machine_swap::promtool_accepts;
use crate::support::{lone::lone, repo_path, rollup, run, run_json, MIB};

/// (metric name, how to get it from a `top` JSON process row).
const FIGURES: &[(&str, &[&str])] = &[
    ("pss_dirty", &["pss_dirty"]),
    ("thp", &["anon_huge_pages", "shmem_pmd_mapped", "file_pmd_mapped"]),
    ("ksm", &["ksm"]),
    ("hugetlb", &["shared_hugetlb", "private_hugetlb"]),
];

/// The figure from a top row: the sum of its parts, `None` when the row
/// has none of them.
fn from_top(p: &Value, parts: &[&str]) -> Option<u64> {
    let known: Vec<u64> = parts.iter().filter_map(|k| p[*k].as_u64()).collect();
    (!known.is_empty()).then(|| known.iter().sum())
}

fn export(args: &[&str]) -> String {
    let out = run(args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn export_has_pss_dirty_thp_ksm_hugetlb_as_top_has_them() {
    let samples = crate::prometheus::parse;
    let mut seen_nonzero = std::collections::BTreeSet::new();
    for tree in [
        "testdata/fixtures/linux/chromium-browser/proc",
        "testdata/fixtures/linux/python3-mmap/proc",
        "testdata/fixtures/linux-variants/hugetlb/proc",
    ] {
        let root = repo_path(tree);
        let top = run_json(&["--proc-root", &root, "top", "--all", "--format", "json"]);
        let text = export(&["--proc-root", &root, "export", "--top", "1000"]);
        let got = samples(&text);
        for p in top["processes"].as_array().unwrap() {
            let labels = format!(
                "comm={},pid={},program={}",
                p["comm"].as_str().unwrap(),
                p["pid"],
                p["program"].as_str().unwrap()
            );
            for (name, parts) in FIGURES {
                let metric = format!("memtally_process_{name}_bytes");
                let want = from_top(p, parts).map(|v| v as f64);
                assert_eq!(
                    got.get(&(metric.clone(), labels.clone())).copied(),
                    want,
                    "{metric} {labels} in {tree}"
                );
                if want.unwrap_or(0.0) > 0.0 {
                    seen_nonzero.insert(*name);
                }
            }
        }
        promtool_accepts(&text);
    }
    assert!(
        seen_nonzero.contains("pss_dirty") && seen_nonzero.contains("hugetlb"),
        "{seen_nonzero:?}"
    );
}

/// Every per-row family's HELP says whether it adds up across processes.
#[test]
fn every_row_figure_says_whether_it_is_summable() {
    let root = repo_path("testdata/fixtures/linux/python3-mmap/proc");
    let text = export(&["--proc-root", &root, "export"]);
    let mut rows = 0;
    for help in text.lines().filter(|l| l.starts_with("# HELP memtally_process_")) {
        if help.starts_with("# HELP memtally_process_gpu_") {
            continue;
        }
        rows += 1;
        let summable = help.contains(". Summable over processes");
        let not = help.contains(". Not summable");
        assert!(summable != not, "says one of the two: {help}");
        let name = help.split_whitespace().nth(2).unwrap();
        let proportional =
            ["pss", "pss_dirty", "uss", "swap_pss", "private_dirty", "shmem_swap", "footprint_pss"]
                .iter()
                .any(|f| name == format!("memtally_process_{f}_bytes"));
        assert_eq!(summable, proportional, "{help}");
    }
    assert!(rows >= 10, "{text}");
}

/// Live: the Pss_Dirty of a child that wrote 32 MiB is its rollup's.
#[test]
fn live_pss_dirty_of_a_known_child() {
    let child = lone(32 * MIB);
    let pid = child.child.0.id();
    let now = || rollup(Path::new(&format!("/proc/{pid}/smaps_rollup")))["pss_dirty"];
    let lo = now();
    let text = export(&["export", "--pid", &pid.to_string()]);
    let hi = now();
    let line = text
        .lines()
        .find(|l| l.starts_with(&format!("memtally_process_pss_dirty_bytes{{pid=\"{pid}\"")))
        .unwrap_or_else(|| panic!("{text}"));
    let got: u64 = line.rsplit(' ').next().unwrap().parse().unwrap();
    const SLACK: u64 = 256 << 10;
    assert!(got >= 32 * MIB as u64, "{line}");
    assert!(
        lo.min(hi) - SLACK.min(lo.min(hi)) <= got && got <= lo.max(hi) + SLACK,
        "{got} vs {lo}..{hi}"
    );
    promtool_accepts(&text);
}

/// `--by` given twice publishes both groupings of one scan (issue 38.1:
/// the fleet manifests publish per program and per cgroup, the cgroup rows
/// with their charge); the rest past --top is the first grouping's. Given
/// twice the same, it is published once.
#[test]
fn by_program_and_by_cgroup_at_once() {
    use crate::cgroup::record_process;
    let dir = tempfile::tempdir().unwrap();
    record_process(dir.path(), 10, "web", "0::/app/a\n", [4000, 0, 0]);
    record_process(dir.path(), 11, "web", "0::/app/b\n", [1000, 0, 0]);
    record_process(dir.path(), 12, "db", "0::/app/b\n", [2000, 0, 0]);
    let cg = dir.path().join("sys/fs/cgroup");
    std::fs::create_dir_all(cg.join("app/a")).unwrap();
    std::fs::write(cg.join("cgroup.controllers"), "memory\n").unwrap();
    std::fs::write(cg.join("app/a/memory.current"), "4200000\n").unwrap();
    let root = dir.path().to_str().unwrap();
    let both = ["export", "--proc-root", root, "--top", "1", "--by", "program", "--by", "cgroup"];
    let text = export(&both);
    let s = crate::prometheus::parse(&text);
    let get = |name: &str, labels: &str| s.get(&(name.to_string(), labels.to_string())).copied();
    assert_eq!(get("memtally_program_pss_bytes", "program=web"), Some(5000.0 * 1024.0), "{text}");
    assert_eq!(get("memtally_cgroup_pss_bytes", "cgroup=/app/a"), Some(4000.0 * 1024.0));
    assert_eq!(get("memtally_cgroup_charge_usage_bytes", "cgroup=/app/a"), Some(4200000.0));
    assert_eq!(get("memtally_other_processes_pss_bytes", ""), Some(2000.0 * 1024.0), "db's");
    assert!(s.keys().all(|(n, _)| !n.starts_with("memtally_process_")), "{text}");
    // The same grouping twice: once.
    let keys = |args: &[&str]| -> Vec<(String, String)> {
        crate::prometheus::parse(&export(args)).into_keys().collect()
    };
    let once = ["export", "--proc-root", root, "--by", "program"];
    assert_eq!(keys(&[&once[..], &["--by", "program"]].concat()), keys(&once));
    // Each grouping's HELP and TYPE lines once: promtool takes it.
    promtool_accepts(&text);
}
