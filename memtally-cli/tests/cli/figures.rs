//! Figures that mean one thing everywhere (issue 13): columns summed over
//! processes are proportional (PSS DIRTY, SWAP PSS), a column name has one
//! meaning in every command, and `show --by path` ranks by PSS.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::support::lone::family;
use crate::support::{
    fork_ready, memtally, pause_forever, repo, rollup, run_json, Forked, Stopped, MIB,
};

/// Runs memtally with a wide COLUMNS, so no table is cut; its stdout.
pub fn wide(args: &[&str]) -> String {
    let out = memtally().env("COLUMNS", "400").args(args).output().expect("memtally runs");
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The header line of a table: the first line that has `first` as a word.
fn header<'a>(table: &'a str, first: &str) -> &'a str {
    table
        .lines()
        .find(|l| l.split_whitespace().next() == Some(first))
        .unwrap_or_else(|| panic!("no header starting {first}:\n{table}"))
}

/// The column names of a header line (separated by two spaces or more).
fn names(head: &str) -> Vec<String> {
    head.split("  ").map(str::trim).filter(|c| !c.is_empty()).map(String::from).collect()
}

/// The cell under the right-aligned column `column` in the first line
/// whose first word is `row`.
pub fn cell(table: &str, first: &str, row: &str, column: &str) -> String {
    let head = header(table, first);
    let at = head
        .find(&format!(" {column} "))
        .or_else(|| head.ends_with(&format!(" {column}")).then(|| head.len() - column.len() - 1))
        .unwrap_or_else(|| panic!("no column {column} in {head:?}"));
    let end = at + 1 + column.len();
    let line = table
        .lines()
        .find(|l| l.split_whitespace().next() == Some(row))
        .unwrap_or_else(|| panic!("no row {row}:\n{table}"));
    line[..end.min(line.len())].split_whitespace().last().unwrap().to_string()
}

/// `48.3M` -> bytes (to the table's precision).
pub fn bytes(human: &str) -> f64 {
    let (n, unit) = human.split_at(human.len() - 1);
    let scale = match unit {
        "K" => 1024.0,
        "M" => 1024.0 * 1024.0,
        "G" => 1024.0 * 1024.0 * 1024.0,
        _ => return human.trim_end_matches('B').parse().unwrap(),
    };
    n.parse::<f64>().unwrap() * scale
}

fn rollups(pids: &[u32]) -> BTreeMap<u32, BTreeMap<String, u64>> {
    pids.iter().map(|p| (*p, rollup(&PathBuf::from(format!("/proc/{p}/smaps_rollup"))))).collect()
}

/// The dirty figures of each rollup, the ones the family test compares:
/// the rest (clean file PSS as other processes map or unmap the same
/// libraries, Referenced as reclaim ages the pages) moves on a loaded
/// machine without touching what is tested.
fn dirty(r: &BTreeMap<u32, BTreeMap<String, u64>>) -> Vec<[u64; 3]> {
    r.values().map(|m| [m["pss_dirty"], m["private_dirty"], m["shared_dirty"]]).collect()
}

fn sum(r: &BTreeMap<u32, BTreeMap<String, u64>>, key: &str) -> u64 {
    r.values().map(|m| m[key]).sum()
}

/// A family of five processes sharing a written 48 MiB region: `top` and
/// `show --tree` show dirty memory as the sum of the kernel's Pss_Dirty
/// (about 48 MiB), not shared + private dirty in full (about 5 x 48 MiB).
/// The family is an exec'd C program (not a fork of this harness, whose
/// heap other tests write meanwhile), stopped while it is read: its dirty
/// figures hold still from the rollups before to the rollups after.
#[test]
fn dirty_of_a_forked_family_is_the_sum_of_pss_dirty() {
    let family = family(48 * MIB, 4);
    let pids = family.pids();
    let pid = pids[0].to_string();
    let _still = Stopped::new(&pids);
    let before = rollups(&pids);
    let top = run_json(&["top", "--tree", &pid, "--all", "--format", "json"]);
    let table = wide(&["top", "--tree", &pid, "--all"]);
    let show = run_json(&["show", "--tree", &pid, "--format", "json"]);
    let show_table = wide(&["show", "--tree", &pid]);
    assert_eq!(dirty(&rollups(&pids)), dirty(&before), "a stopped family's dirty figures");
    let pss_dirty = sum(&before, "pss_dirty");
    let full = sum(&before, "private_dirty") + sum(&before, "shared_dirty");
    println!(
        "family of {}: shared + private dirty {full} B, sum of Pss_Dirty {pss_dirty} B",
        pids.len()
    );
    assert!(full > 4 * 48 * MIB as u64, "the region is dirty in every process");
    assert!(pss_dirty >= 48 * MIB as u64 && pss_dirty < full / 2);
    assert_eq!(top["processes"].as_array().unwrap().len(), pids.len());
    assert_eq!(top["totals"]["pss_dirty"].as_u64(), Some(pss_dirty), "top JSON");
    for p in top["processes"].as_array().unwrap() {
        let want = before[&(p["pid"].as_u64().unwrap() as u32)]["pss_dirty"];
        assert_eq!(p["pss_dirty"].as_u64(), Some(want));
    }
    // The table's dirty column is that sum, to its precision.
    let shown = bytes(&cell(&table, "PID", "total", "PSS DIRTY"));
    println!("top --tree total PSS DIRTY: {shown} B shown");
    assert!((shown - pss_dirty as f64).abs() <= pss_dirty as f64 * 0.01, "{table}");
    // show over the family: only figures that add up. show sums each
    // mapping's Pss_Dirty, which smaps rounds down to a kB: within a kB
    // a mapping of the rollups' figure.
    let from_show = show["totals"]["pss_dirty"].as_u64().unwrap();
    assert!(from_show.abs_diff(pss_dirty) <= pss_dirty / 200, "show JSON {from_show}");
    // Its rows, dirty first by the figure that adds up.
    let rows: Vec<u64> =
        show["rows"].as_array().unwrap().iter().map(|r| r["pss_dirty"].as_u64().unwrap()).collect();
    assert!(rows.windows(2).all(|w| w[0] >= w[1]), "by Pss_Dirty: {rows:?}");
    let head = names(header(&show_table, "CATEGORY"));
    for gone in ["RSS", "SHR DIRTY", "CLEAN", "SWAP"] {
        assert!(!head.iter().any(|h| h == gone), "{gone} summed in full: {head:?}");
    }
    let shown = bytes(&cell(&show_table, "CATEGORY", "total", "PSS DIRTY"));
    println!("show --tree total PSS DIRTY: {shown} B shown");
    assert!((shown - pss_dirty as f64).abs() <= pss_dirty as f64 * 0.01, "{show_table}");
}

/// A copy of a recorded tree in a temporary directory, with its one
/// process's rollup swap figures set (a variant made by the test, never
/// written over the recording).
fn recorded_with_swap(swap_kb: u64, swap_pss_kb: u64) -> (tempfile::TempDir, String) {
    let from = repo().join("testdata/fixtures/linux/python3-mmap/proc");
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&from, dir.path());
    let rollup = dir.path().join("11364/smaps_rollup");
    let text = std::fs::read_to_string(&rollup).unwrap();
    let text: String = text
        .lines()
        .map(|l| match l.split_once(':') {
            Some(("Swap", _)) => format!("Swap:           {swap_kb} kB\n"),
            Some(("SwapPss", _)) => format!("SwapPss:        {swap_pss_kb} kB\n"),
            _ => format!("{l}\n"),
        })
        .collect();
    std::fs::write(&rollup, text).unwrap();
    let root = dir.path().to_str().unwrap().to_string();
    (dir, root)
}

fn copy_tree(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// SWAP is raw Swap wherever it is printed; the proportional figure is
/// SWAP PSS (`swap_pss` in JSON and CSV), in `top` and `show` alike.
#[test]
fn swap_and_swap_pss_have_one_name_each() {
    let (_dir, root) = recorded_with_swap(8192, 2048);
    let top = wide(&["--proc-root", &root, "top"]);
    assert_eq!(cell(&top, "PID", "11364", "SWAP PSS"), "2.0M", "{top}");
    assert!(!names(header(&top, "PID")).iter().any(|h| h == "SWAP"), "{top}");
    let json = run_json(&["--proc-root", &root, "top", "--format", "json"]);
    assert_eq!(json["processes"][0]["swap"].as_u64(), Some(8192 * 1024));
    assert_eq!(json["processes"][0]["swap_pss"].as_u64(), Some(2048 * 1024));
    // `--sort swap` sorts by swap, `--sort swap_pss` by SwapPss; the
    // explorer's column is top's.
    let show = wide(&["--proc-root", &root, "show", "11364"]);
    let head = names(header(&show, "CATEGORY"));
    assert!(head.iter().any(|h| h == "SWAP") && !head.iter().any(|h| h == "SWAP PSS"));
    let csv = String::from_utf8(
        memtally().args(["--proc-root", &root, "top", "--format", "csv"]).output().unwrap().stdout,
    )
    .unwrap();
    let head: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    let col = |k: &str| row[head.iter().position(|h| *h == k).unwrap()];
    assert_eq!((col("swap"), col("swap_pss")), ("8388608", "2097152"));
}

/// `show --by path` ranks rows by PSS: a large clean file mapping comes
/// before small dirty ones (it came after every dirty row before).
#[test]
fn show_by_path_ranks_by_pss() {
    // On disk (target/tmp), not a tmpfs /tmp, whose pages would be shmem.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let file = dir.path().join("clean-64m.bin");
    std::fs::write(&file, vec![7u8; 64 * MIB]).unwrap();
    // Written back, so its page cache is clean.
    std::fs::File::open(&file).unwrap().sync_all().unwrap();
    let child = spawn_file_reader(&file, 64 * MIB);
    let pid = child.pid.to_string();
    let doc = run_json(&["show", &pid, "--by", "path", "--format", "json"]);
    let rows = doc["rows"].as_array().unwrap();
    assert_eq!(rows[0]["key"], file.to_str().unwrap(), "first row: {}", rows[0]);
    let pss: Vec<u64> = rows.iter().map(|r| r["pss"].as_u64().unwrap()).collect();
    assert!(pss.windows(2).all(|w| w[0] >= w[1]), "sorted by PSS: {pss:?}");
    assert_eq!(rows[0]["private_dirty"], 0, "the file mapping is clean");
    let table = wide(&["show", &pid, "--by", "path"]);
    let first = table.lines().nth(2).unwrap();
    assert!(first.ends_with(file.to_str().unwrap()), "{table}");
    // Asked for, dirty first still works.
    let dirty = run_json(&["show", &pid, "--by", "path", "--sort", "dirty", "--format", "json"]);
    assert_ne!(dirty["rows"][0]["key"], file.to_str().unwrap());
}

/// Forks a child that maps `len` bytes of `file` read-only, reads every
/// page, says so through a pipe and waits to be killed. Only
/// async-signal-safe calls after the fork.
fn spawn_file_reader(file: &Path, len: usize) -> Forked {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(file.as_os_str().as_bytes()).unwrap();
    let (child, ready) = fork_ready(|ready| unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_RDONLY);
        let p = libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_PRIVATE, fd, 0);
        if fd < 0 || p == libc::MAP_FAILED {
            libc::_exit(1);
        }
        let mut sum = 0u8;
        for off in (0..len).step_by(4096) {
            sum = sum.wrapping_add(std::ptr::read_volatile((p as *const u8).add(off)));
        }
        std::hint::black_box(sum);
        ready.signal();
        pause_forever()
    });
    assert!(ready, "child ready");
    child
}

/// A child holding a written 24 MiB /dev/shm file: `show` says that its
/// USS and private dirty are tmpfs pages, and they are: once the child is
/// killed, the file still holds its 24 MiB.
#[test]
fn shmem_is_shown_apart_and_outlives_the_process() {
    use std::os::unix::ffi::OsStrExt;
    let path = PathBuf::from(format!("/dev/shm/memtally-figures-{}", std::process::id()));
    if !Path::new("/dev/shm").is_dir() {
        println!("skipped: no /dev/shm");
        return;
    }
    struct Remove(PathBuf);
    impl Drop for Remove {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
    let _remove = Remove(path.clone());
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    let len = 24 * MIB;
    let (child, ready) = fork_ready(|ready| unsafe {
        let fd = libc::open(c.as_ptr(), libc::O_CREAT | libc::O_RDWR, 0o600);
        if fd < 0 || libc::ftruncate(fd, len as libc::off_t) != 0 {
            libc::_exit(1);
        }
        let rw = libc::PROT_READ | libc::PROT_WRITE;
        let p = libc::mmap(std::ptr::null_mut(), len, rw, libc::MAP_SHARED, fd, 0);
        if p == libc::MAP_FAILED {
            libc::_exit(1);
        }
        libc::memset(p, 0x5a, len);
        ready.signal();
        pause_forever()
    });
    assert!(ready, "the child mapped {}", path.display());
    let pid = child.pid.to_string();

    let doc = run_json(&["show", &pid, "--format", "json"]);
    let shmem = &doc["shmem"];
    println!("shmem part of {pid}: {shmem}");
    assert_eq!(shmem["uss"].as_u64(), Some(len as u64), "{shmem}");
    assert_eq!(shmem["private_dirty"].as_u64(), Some(len as u64));
    let table = wide(&["show", &pid]);
    let line = table.lines().find(|l| l.starts_with("shmem:")).unwrap_or_else(|| panic!("{table}"));
    assert!(
        line.starts_with("shmem: 24.0M of the PSS is tmpfs / shared memory")
            && line.contains("24.0M of it mapped here alone (in USS; 24.0M of that dirty)"),
        "{line}"
    );
    let top = wide(&["top", "--pid", &pid]);
    assert!(top.contains("is tmpfs / shared memory (Pss_Shmem"), "{top}");
    let top = run_json(&["top", "--pid", &pid, "--format", "json"]);
    assert!(top["processes"][0]["pss_shmem"].as_u64().unwrap() >= len as u64);

    // Killed: the pages it wrote stay, in the file.
    drop(child);
    let meta = std::fs::metadata(&path).unwrap();
    use std::os::unix::fs::MetadataExt;
    println!("after the kill {} holds {} B", path.display(), meta.blocks() * 512);
    assert_eq!(meta.blocks() * 512, len as u64, "the tmpfs pages outlive the process");
}

/// Before Linux 6.0 smaps_rollup has no Pss_Dirty: `top` shows PRIV DIRTY
/// (which adds up too) under that name and says why in a note. The tree is
/// a recording copied to a temporary directory without its Pss_Dirty lines.
#[test]
fn without_pss_dirty_top_shows_private_dirty_and_says_so() {
    let from = repo().join("testdata/fixtures/linux/chromium-renderer/proc");
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&from, dir.path());
    for file in ["smaps_rollup", "smaps"] {
        let path = dir.path().join("11755").join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let kept: String = text
            .lines()
            .filter(|l| !l.starts_with("Pss_Dirty:"))
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(&path, kept).unwrap();
    }
    let root = dir.path().to_str().unwrap();
    let table = wide(&["--proc-root", root, "top"]);
    let head = names(header(&table, "PID"));
    assert!(head.iter().any(|h| h == "PRIV DIRTY"), "{head:?}");
    assert!(!head.iter().any(|h| h == "PSS DIRTY"), "{head:?}");
    // Private_Dirty 6152 kB; Shared_Dirty (14580 kB) is left out.
    assert_eq!(cell(&table, "PID", "11755", "PRIV DIRTY"), "6.0M", "{table}");
    assert!(table.contains("note: this kernel gives no Pss_Dirty"), "{table}");
}
