//! Issue 37, item 3: `top` over several processes shows its THP, KSM and
//! HUGETLB columns where some row has the figure (their totals are `-`:
//! full counts do not add up across processes), and `--columns` names
//! every figure (`anon_huge_pages`, `hugetlb`, …).

use std::path::Path;

use crate::support::{repo_path, run};

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

/// A tree of three processes: the recorded hugetlb one (6 MiB of
/// Private_Hugetlb), a recorded chromium browser, and one with 4 MiB of
/// transparent huge pages and 64 KiB of KSM pages.
fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let hugetlb = repo_path("testdata/fixtures/linux-variants/hugetlb/proc");
    copy_dir(&Path::new(&hugetlb).join("11364"), &dir.path().join("11364"));
    std::fs::copy(Path::new(&hugetlb).join("meminfo"), dir.path().join("meminfo")).unwrap();
    let chromium = repo_path("testdata/fixtures/linux/chromium-browser/proc/11672");
    copy_dir(Path::new(&chromium), &dir.path().join("11672"));
    let p = dir.path().join("77");
    std::fs::create_dir_all(&p).unwrap();
    let status = "Name:\thuge\nPPid:\t1\nUid:\t0\t0\t0\t0\nVmSize:\t8192 kB\nVmRSS:\t8192 kB\n";
    std::fs::write(p.join("status"), status).unwrap();
    std::fs::write(p.join("cmdline"), "huge\0").unwrap();
    std::fs::write(p.join("comm"), "huge\n").unwrap();
    let sizes = "Rss: 8192 kB\nPss: 8192 kB\nShared_Clean: 0 kB\nShared_Dirty: 0 kB\nPrivate_Clean: 0 kB\nPrivate_Dirty: 8192 kB\nAnonymous: 8192 kB\nKSM: 64 kB\nAnonHugePages: 4096 kB\nShmemPmdMapped: 0 kB\nFilePmdMapped: 0 kB\nShared_Hugetlb: 0 kB\nPrivate_Hugetlb: 0 kB\nSwap: 0 kB\nSwapPss: 0 kB\n";
    let head = "7f0000000000-7f0000800000 rw-p 00000000 00:00 0 ";
    let smaps = format!("{head}\nSize: 8192 kB\n{sizes}VmFlags: rd wr mr mw me ac\n");
    std::fs::write(p.join("smaps"), smaps).unwrap();
    let rollup =
        format!("{head}[rollup]\nPss_Anon: 8192 kB\nPss_File: 0 kB\nPss_Shmem: 0 kB\n{sizes}");
    std::fs::write(p.join("smaps_rollup"), rollup).unwrap();
    dir
}

fn cells<'a>(text: &'a str, first: &str) -> Vec<&'a str> {
    let line = text.lines().find(|l| l.split_whitespace().next() == Some(first));
    line.unwrap_or_else(|| panic!("no {first} row: {text}")).split_whitespace().collect()
}

#[test]
fn several_processes_keep_the_huge_page_and_ksm_columns() {
    let dir = tree();
    let root = dir.path().to_str().unwrap();
    let out = run(&["top", "--proc-root", root, "--columns", "pss,thp,hugetlb,ksm"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let chosen = String::from_utf8(out.stdout).unwrap();
    let header = cells(&chosen, "PID");
    assert_eq!(header[2..6], ["PSS", "THP", "HUGETLB", "KSM"], "{chosen}");
    assert_eq!(cells(&chosen, "77")[2..6], ["8.0M", "4.0M", "0", "64.0K"], "{chosen}");
    assert_eq!(cells(&chosen, "11364")[4], "6.0M", "{chosen}");

    // By default: the three columns are there as some row has them.
    let out = run(&["top", "--proc-root", root]);
    let text = String::from_utf8(out.stdout).unwrap();
    let header = cells(&text, "PID");
    for h in ["THP", "HUGETLB", "KSM"] {
        assert!(header.contains(&h), "{h}: {text}");
    }
    // The total row sums PSS but leaves the full counts out.
    let total = cells(&text, "total");
    assert!(total.contains(&"-"), "{text}");
}

#[test]
fn columns_name_every_figure() {
    let dir = tree();
    let root = dir.path().to_str().unwrap();
    let args = ["top", "--proc-root", root, "--columns", "anon_huge_pages,private_hugetlb,locked"];
    let out = run(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(cells(&text, "PID")[2..], ["ANON", "THP", "PRIV", "HUGETLB", "LOCKED", "COMMAND"]);
    let row = cells(&text, "77");
    assert_eq!(row[2..4], ["4.0M", "0"], "{text}");
    let csv = run(&["top", "--proc-root", root, "--columns", "anon_huge_pages", "--format", "csv"]);
    let csv = String::from_utf8(csv.stdout).unwrap();
    assert!(csv.starts_with("pid,ppid,user,source,depth,processes,anon_huge_pages,command\n"));
    assert!(csv.lines().any(|l| l.starts_with("77,") && l.contains(",4194304,")), "{csv}");
    let bad = run(&["top", "--proc-root", root, "--columns", "nonsense"]);
    assert_eq!(bad.status.code(), Some(2));
}
