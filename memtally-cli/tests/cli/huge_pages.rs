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

/// A recorded tree's hugetlb mapping: its bytes are in the row and the
/// total (a HUGETLB column), not only in a note (on main the row read
/// RSS 0 / PSS 0); CSV has the two hugetlb columns.
#[test]
fn show_puts_hugetlb_bytes_in_the_row_and_the_total() {
    let root = crate::support::repo_path("testdata/fixtures/linux-variants/hugetlb/proc");
    let text = String::from_utf8(run(&["show", "11364", "--proc-root", &root]).stdout).unwrap();
    let header = text.lines().nth(1).unwrap();
    let cols: Vec<&str> = header.split("  ").map(str::trim).filter(|c| !c.is_empty()).collect();
    let at = cols.iter().position(|c| *c == "HUGETLB").unwrap_or_else(|| panic!("{text}"));
    let cell = |label: &str| -> String {
        let row = text.lines().find(|l| l.starts_with(label)).unwrap_or_else(|| panic!("{text}"));
        let cells: Vec<&str> = row[label.len()..].split_whitespace().collect();
        cells[at - 1].to_string()
    };
    assert_eq!(cell("huge pages (hugetlb)"), "6.0M", "{text}");
    assert_eq!(cell("total"), "6.0M", "{text}");
    assert_eq!(cell("heap / anon rw"), "0", "{text}");
    let csv =
        String::from_utf8(run(&["show", "11364", "--proc-root", &root, "--format", "csv"]).stdout)
            .unwrap();
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = head.iter().position(|c| *c == "private_hugetlb").expect("a private_hugetlb column");
    let row = |first: &str| -> String {
        csv.lines().find(|l| l.starts_with(first)).unwrap().split(',').nth(col).unwrap().into()
    };
    assert_eq!(row("huge_pages,"), (6 * MIB).to_string(), "{csv}");
    assert_eq!(row("total,"), (6 * MIB).to_string(), "{csv}");
    // A tree without hugetlb pages has no such column.
    let plain = crate::support::repo_path("testdata/fixtures/linux/python3-mmap/proc");
    let text = String::from_utf8(run(&["show", "11364", "--proc-root", &plain]).stdout).unwrap();
    assert!(!text.contains("HUGETLB"), "{text}");
}

/// The machine picture calls the hugetlbfs pool `hugetlb` (on main: `huge
/// pages`, right under a THP column it has nothing to do with), and shows
/// THP as the part of the anonymous memory it is.
#[test]
fn machine_calls_the_pool_hugetlb_and_shows_thp_in_the_anonymous_memory() {
    let (_tmp, dir) = crate::support::copied_fixture("python3-mmap");
    let meminfo = std::fs::read_to_string(dir.join("meminfo")).unwrap();
    let meminfo = meminfo
        .replace("AnonHugePages:         0 kB", "AnonHugePages:      4096 kB")
        .replace("HugePages_Total:       0", "HugePages_Total:       4")
        .replace("HugePages_Free:        0", "HugePages_Free:        1")
        .replace("Hugetlb:               0 kB", "Hugetlb:            8192 kB");
    std::fs::write(dir.join("meminfo"), meminfo).unwrap();
    let root = dir.to_str().unwrap();
    let m = run_json(&["--proc-root", root, "machine", "--format", "json"]);
    for l in m["lines"].as_array().unwrap() {
        if l["name"].as_str().unwrap().starts_with("hugetlb_") {
            assert_eq!(l["group"], "hugetlb", "{l}");
        }
    }
    assert_eq!(m["thp"]["anon"].as_u64(), Some(4 * MIB as u64));
    let top = String::from_utf8(run(&["--proc-root", root, "top"]).stdout).unwrap();
    assert!(!top.contains("huge pages"), "{top}");
    let hugetlb =
        top.lines().find(|l| l.starts_with("  hugetlb ")).unwrap_or_else(|| panic!("{top}"));
    assert!(hugetlb.contains("8.0M") && hugetlb.contains("hugetlb_used 6.0M"), "{hugetlb}");
    let processes = top.lines().find(|l| l.starts_with("  processes ")).unwrap();
    assert!(processes.contains("THP 4.0M of the anonymous memory (AnonHugePages)"), "{processes}");
    let table = String::from_utf8(run(&["--proc-root", root, "machine"]).stdout).unwrap();
    assert!(table.contains("of process_anon + anon_unread: THP 4.0M"), "{table}");
    let exposition = String::from_utf8(run(&["--proc-root", root, "export"]).stdout).unwrap();
    assert!(exposition.contains("\nmemtally_machine_thp_anon_bytes 4194304\n"), "{exposition}");
    assert!(exposition.contains(
        "memtally_machine_waterfall_bytes{line=\"hugetlb_used\",group=\"hugetlb\"} 6291456\n"
    ));
}

/// Two more huge pages in the default pool for the test, given back on
/// drop (by as many as were added: what others set stays).
struct HugePool {
    added: u64,
}

const NR_HUGEPAGES: &str = "/proc/sys/vm/nr_hugepages";

fn nr_hugepages() -> u64 {
    std::fs::read_to_string(NR_HUGEPAGES).unwrap().trim().parse().unwrap()
}

impl HugePool {
    fn add(pages: u64) -> Result<HugePool, String> {
        if unsafe { libc::geteuid() } != 0 {
            return Err("raising vm.nr_hugepages needs root".into());
        }
        let before = nr_hugepages();
        std::fs::write(NR_HUGEPAGES, (before + pages).to_string())
            .map_err(|e| format!("{NR_HUGEPAGES}: {e}"))?;
        let added = nr_hugepages().saturating_sub(before);
        let pool = HugePool { added };
        if added < pages {
            return Err(format!(
                "the kernel found {added} of {pages} huge pages (memory fragmented)"
            ));
        }
        Ok(pool)
    }
}

impl Drop for HugePool {
    fn drop(&mut self) {
        let now = nr_hugepages();
        let _ = std::fs::write(NR_HUGEPAGES, now.saturating_sub(self.added).to_string());
    }
}

/// Maps `argv[1]` bytes of MAP_HUGETLB memory and writes every page.
const HUGETLB_C: &str = r#"
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
int main(int argc, char **argv) {
    size_t len = strtoull(argv[1], 0, 10);
    char *p = mmap(0, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
    if (p == MAP_FAILED) { if (write(1, "fail\n", 5) != 5) return 1; return 1; }
    memset(p, 0x5a, len);
    if (write(1, "ready\n", 6) != 6) return 1;
    for (;;) pause();
}
"#;

/// Live: a child with 4 MiB of MAP_HUGETLB memory; `show` has it in the
/// row and the total, the machine picture in its hugetlb group.
#[test]
fn live_hugetlb_mapping_is_in_the_row_the_total_and_the_machine() {
    use std::io::Read;
    let pool = match HugePool::add(2) {
        Ok(p) => p,
        Err(why) => {
            println!("skipped: no huge pages for the test: {why}");
            return;
        }
    };
    let (_dir, exe) = crate::support::lone::build("hugetlb", HUGETLB_C);
    let mut child = crate::support::Killed(
        std::process::Command::new(&exe)
            .arg((4 * MIB).to_string())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut said = [0u8; 5];
    child.0.stdout.as_mut().unwrap().read_exact(&mut said).unwrap();
    if &said != b"ready" {
        println!("skipped: MAP_HUGETLB failed (the pool was taken meanwhile)");
        return;
    }
    let pid = child.0.id().to_string();
    let want = rollup(Path::new(&format!("/proc/{pid}/smaps_rollup")));
    assert_eq!(want.get("private_hugetlb").copied(), Some(4 * MIB as u64));
    let show = run_json(&["show", &pid, "--format", "json"]);
    assert_eq!(show["totals"]["private_hugetlb"].as_u64(), Some(4 * MIB as u64));
    let text = String::from_utf8(run(&["show", &pid]).stdout).unwrap();
    let header = text.lines().nth(1).unwrap();
    assert!(header.contains("HUGETLB"), "{text}");
    let total = text.lines().find(|l| l.starts_with("total")).unwrap();
    assert!(total.contains(" 4.0M "), "{total}");
    let row = text.lines().find(|l| l.starts_with("huge pages (hugetlb)")).unwrap();
    assert!(row.contains(" 4.0M "), "{row}");
    // Over several processes: PRIV HUGETLB, which adds up across them.
    let me = std::process::id().to_string();
    let several = String::from_utf8(run(&["show", "--pid", &pid, "--pid", &me]).stdout).unwrap();
    let header = several.lines().nth(1).unwrap();
    assert!(header.contains("PRIV HUGETLB"), "{several}");
    let total = several.lines().find(|l| l.starts_with("total")).unwrap();
    assert!(total.contains(" 4.0M "), "{total}");
    let m = run_json(&["machine", "--format", "json"]);
    let used = m["lines"].as_array().unwrap().iter().find(|l| l["name"] == "hugetlb_used").unwrap();
    assert_eq!(used["group"], "hugetlb");
    assert!(used["bytes"].as_i64().unwrap() >= 4 * MIB as i64, "{used}");
    drop(child);
    drop(pool);
}
