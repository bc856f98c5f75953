//! Huge pages, THP and KSM figures: per process in `top` JSON and per
//! category in `show`, with a column or line in the tables where non-zero;
//! live on a child that asks for transparent huge pages, and on a recorded
//! tree with every figure set.

use std::path::Path;

use crate::support::{
    fork_ready, map_anonymous, pause_forever, rollup, run, run_json, Forked, MIB,
};

const KEYS: &[&str] = &[
    "anon_huge_pages",
    "shmem_pmd_mapped",
    "file_pmd_mapped",
    "shared_hugetlb",
    "private_hugetlb",
    "ksm",
];

/// A child that maps 8 MiB at a 2 MiB boundary, asks for THP and touches it.
fn spawn_thp() -> Forked {
    let (child, ready) = fork_ready(|ready| unsafe {
        let len = 10 * MIB;
        let p = map_anonymous(len, libc::MAP_PRIVATE);
        let aligned = ((p as usize + 2 * MIB - 1) & !(2 * MIB - 1)) as *mut libc::c_void;
        libc::madvise(aligned, 8 * MIB, libc::MADV_HUGEPAGE);
        libc::memset(aligned, 0x5a, 8 * MIB);
        ready.signal();
        pause_forever()
    });
    assert!(ready, "the child mapped 10 MiB");
    child
}

/// Live: the child's AnonHugePages in `top` JSON is its rollup's, and the
/// table grows a THP column.
#[test]
fn live_thp_is_in_top_json_and_table() {
    let child = spawn_thp();
    let pid = child.pid.to_string();
    let want = rollup(Path::new(&format!("/proc/{pid}/smaps_rollup")));
    if want.get("anon_huge_pages").copied().unwrap_or(0) == 0 {
        println!("skipped: the kernel gave the child no transparent huge page (THP disabled or memory fragmented)");
        return;
    }
    let top = run_json(&["top", "--pid", &pid, "--format", "json"]);
    let p = &top["processes"][0];
    for k in KEYS {
        assert_eq!(p[k].as_u64(), want.get(*k).copied(), "{k}");
    }
    assert!(p["anon_huge_pages"].as_u64().unwrap() >= 2 * MIB as u64);
    let table = String::from_utf8(run(&["top", "--pid", &pid]).stdout).unwrap();
    assert!(table.lines().next().unwrap().contains("THP"), "{table}");
    let plain =
        String::from_utf8(run(&["top", "--pid", &std::process::id().to_string()]).stdout).unwrap();
    assert!(!plain.lines().next().unwrap().contains("THP"), "no column where zero: {plain}");
    let show = run_json(&["show", &pid, "--format", "json"]);
    let heap: u64 = show["categories"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["anon_huge_pages"].as_u64())
        .sum();
    assert_eq!(Some(heap), want.get("anon_huge_pages").copied(), "per category, adding up");
    let text = String::from_utf8(run(&["show", &pid]).stdout).unwrap();
    assert!(text.contains("huge pages / KSM, total: AnonHugePages"), "{text}");
}

/// Recorded: every huge page and KSM figure, per process and per category.
#[test]
fn recorded_huge_and_ksm_figures() {
    let dir = tempfile::tempdir().unwrap();
    let pdir = dir.path().join("77");
    std::fs::create_dir_all(&pdir).unwrap();
    std::fs::write(
        pdir.join("status"),
        "Name:\thuge\nPPid:\t1\nUid:\t0\t0\t0\t0\nVmSize:\t12288 kB\nVmRSS:\t8192 kB\n",
    )
    .unwrap();
    std::fs::write(pdir.join("cmdline"), "huge\0").unwrap();
    std::fs::write(pdir.join("comm"), "huge\n").unwrap();
    let region = |head: &str, rss: u64, anon_huge: u64, ksm: u64, hugetlb: u64| {
        format!("{head}\nSize: {rss} kB\nRss: {rss} kB\nPss: {rss} kB\nShared_Clean: 0 kB\nShared_Dirty: 0 kB\nPrivate_Clean: 0 kB\nPrivate_Dirty: {rss} kB\nAnonymous: {rss} kB\nKSM: {ksm} kB\nAnonHugePages: {anon_huge} kB\nShmemPmdMapped: 0 kB\nFilePmdMapped: 0 kB\nShared_Hugetlb: 0 kB\nPrivate_Hugetlb: {hugetlb} kB\nSwap: 0 kB\nSwapPss: 0 kB\nVmFlags: rd wr mr mw me ac\n")
    };
    let smaps = region("7f0000000000-7f0000400000 rw-p 00000000 00:00 0 ", 4096, 4096, 0, 0)
        + &region("7f1000000000-7f1000400000 rw-p 00000000 00:00 0 ", 4096, 0, 64, 0)
        + &region(
            "7f2000000000-7f2000400000 rw-s 00000000 00:0f 1234 /dev/hugepages/x",
            0,
            0,
            0,
            4096,
        );
    std::fs::write(pdir.join("smaps"), &smaps).unwrap();
    std::fs::write(
        pdir.join("smaps_rollup"),
        "7f0000000000-7f2000400000 ---p 00000000 00:00 0 [rollup]\nRss: 8192 kB\nPss: 8192 kB\nPss_Anon: 8192 kB\nPss_File: 0 kB\nPss_Shmem: 0 kB\nShared_Clean: 0 kB\nShared_Dirty: 0 kB\nPrivate_Clean: 0 kB\nPrivate_Dirty: 8192 kB\nAnonymous: 8192 kB\nKSM: 64 kB\nAnonHugePages: 4096 kB\nShmemPmdMapped: 0 kB\nFilePmdMapped: 0 kB\nShared_Hugetlb: 0 kB\nPrivate_Hugetlb: 4096 kB\nSwap: 0 kB\nSwapPss: 0 kB\n",
    )
    .unwrap();
    let root = dir.path().to_str().unwrap();
    let top = run_json(&["top", "--proc-root", root, "--format", "json"]);
    let p = &top["processes"][0];
    assert_eq!(p["anon_huge_pages"].as_u64(), Some(4 * MIB as u64));
    assert_eq!(p["ksm"].as_u64(), Some(64 * 1024));
    assert_eq!(p["private_hugetlb"].as_u64(), Some(4 * MIB as u64));
    assert_eq!(p["shmem_pmd_mapped"].as_u64(), Some(0));
    assert_eq!(top["totals"]["anon_huge_pages"].as_u64(), Some(4 * MIB as u64));
    let table = String::from_utf8(run(&["top", "--proc-root", root]).stdout).unwrap();
    let header = table.lines().next().unwrap();
    assert!(
        header.contains("THP") && header.contains("HUGETLB") && header.contains("KSM"),
        "{table}"
    );
    let show = run_json(&["show", "77", "--proc-root", root, "--format", "json"]);
    assert_eq!(show["totals"]["anon_huge_pages"].as_u64(), Some(4 * MIB as u64));
    assert_eq!(show["totals"]["ksm"].as_u64(), Some(64 * 1024));
    let with_ksm: Vec<&str> = show["categories"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["ksm"].as_u64().unwrap_or(0) > 0)
        .map(|c| c["category"].as_str().unwrap())
        .collect();
    assert_eq!(with_ksm.len(), 1, "{show}");
    let text = String::from_utf8(run(&["show", "77", "--proc-root", root]).stdout).unwrap();
    assert!(
        text.contains(
            "huge pages / KSM, total: AnonHugePages 4.0M, Private_Hugetlb 4.0M, KSM 64.0K"
        ),
        "{text}"
    );
}
