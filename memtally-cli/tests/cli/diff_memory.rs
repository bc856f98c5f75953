//! `diff` of two large `memtally snapshot` files keeps neither whole
//! (issue 12): its peak memory stays under a quarter of one file's size,
//! and the regions that appeared or vanished are still listed exactly.

use std::io::Write;
use std::path::Path;

use crate::support::memtally;

/// Writes a snapshot file of one process with the regions numbered
/// `regions` (each one page, at an address of its number).
fn write_snapshot(path: &Path, regions: impl Iterator<Item = u64>) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(
        f,
        r#"{{"memtally_snapshot":2,"kind":"linux","time":null,"unix_time":null,"host":null,"kernel":null,"proc_root":null,"machine":null}}"#
    )
    .unwrap();
    for n in regions {
        let start = 0x1000_0000 + n * 8192;
        writeln!(
            f,
            r#"{{"region":{{"start":{start},"end":{},"perms":"rw-p","path":"/usr/lib/libbig-{}.so","category":"code","offset":0,"inode":{n},"size":4096,"rss":4096,"pss":4096,"private_dirty":4096,"anonymous":4096,"referenced":4096}}}}"#,
            start + 4096,
            n % 500
        )
        .unwrap();
    }
    writeln!(
        f,
        r#"{{"process":{{"pid":42,"ppid":null,"user":null,"comm":"big","command":"big","source":"smaps","totals":{{"rss":4096}},"categories":[]}}}}"#
    )
    .unwrap();
    writeln!(
        f,
        r#"{{"end":{{"processes":1,"totals":{{"rss":4096}},"categories":[],"notes":[],"shmem_swap":[null]}}}}"#
    )
    .unwrap();
    f.flush().unwrap();
}

/// Runs memtally with `args`; its output and peak resident memory (KiB).
fn run_measured(args: &[&str]) -> (std::process::Output, u64) {
    let child = memtally()
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    // Read the output on threads while this one waits for the exit with its usage.
    let mut child = child;
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut so, &mut v).unwrap();
        v
    });
    let err = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut se, &mut v).unwrap();
        v
    });
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::wait4(pid, &mut status, 0, &mut usage) }, pid);
    std::mem::forget(child); // reaped above
    let output = std::process::Output {
        status: std::os::unix::process::ExitStatusExt::from_raw(status),
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    };
    (output, usage.ru_maxrss as u64)
}

#[test]
fn diff_of_large_snapshots_stays_under_one_file_in_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a.json"), tmp.path().join("b.json"));
    let n = 100_000u64;
    write_snapshot(&a, 0..n);
    // After: the last 10 gone, 5 new ones beyond.
    write_snapshot(&b, (0..n - 10).chain(n..n + 5));
    let size = std::fs::metadata(&a).unwrap().len();
    let (out, peak_kib) =
        run_measured(&["diff", a.to_str().unwrap(), b.to_str().unwrap(), "--format", "json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let regions = doc["regions"].as_array().unwrap();
    let count = |s: &str| regions.iter().filter(|r| r["status"] == s).count();
    assert_eq!((count("appeared"), count("vanished")), (5, 10), "{regions:?}");
    for r in regions {
        let k = (r["start"].as_u64().unwrap() - 0x1000_0000) / 8192;
        let expected = if r["status"] == "appeared" { n..n + 5 } else { n - 10..n };
        assert!(expected.contains(&k), "{r}");
    }
    // What the same run needs for two small snapshots: the program itself.
    let (c, d) = (tmp.path().join("c.json"), tmp.path().join("d.json"));
    write_snapshot(&c, 0..10);
    write_snapshot(&d, 0..10);
    let (small, base_kib) = run_measured(&["diff", c.to_str().unwrap(), d.to_str().unwrap()]);
    assert!(small.status.success());
    let grew = peak_kib.saturating_sub(base_kib) * 1024;
    eprintln!(
        "diff of two {} MB snapshots ({n} regions each): peak {peak_kib} KiB, {base_kib} KiB for two small ones",
        size / 1_000_000
    );
    assert!(
        grew < size / 4,
        "diff grew by {grew} bytes for {size}-byte snapshots: it holds them whole"
    );
}

/// `show --format json` of one process with `regions` one-page regions,
/// each with the figures smaps gives a mapping.
pub(crate) fn write_show(path: &Path, regions: u64) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    write!(f, r#"{{"pid":42,"comm":"big","command":"big","source":"smaps","totals":{{"rss":4096}},"regions":["#).unwrap();
    let figures: String = [
        "size",
        "rss",
        "pss",
        "pss_dirty",
        "shared_clean",
        "shared_dirty",
        "private_clean",
        "private_dirty",
        "referenced",
        "anonymous",
        "ksm",
        "lazy_free",
        "anon_huge_pages",
        "shmem_pmd_mapped",
        "file_pmd_mapped",
        "shared_hugetlb",
        "private_hugetlb",
        "swap",
        "swap_pss",
        "locked",
    ]
    .iter()
    .map(|k| format!(r#","{k}":4096"#))
    .collect();
    for n in 0..regions {
        let start = 0x1000_0000 + n * 8192;
        let comma = if n > 0 { "," } else { "" };
        write!(
            f,
            r#"{comma}{{"start":{start},"end":{},"perms":"rw-p","path":"/usr/lib/libbig-{}.so","category":"code","offset":0,"inode":{n}{figures},"thp_eligible":"0"}}"#,
            start + 4096,
            n % 500
        )
        .unwrap();
    }
    write!(f, "]}}").unwrap();
    f.flush().unwrap();
}

/// The peak resident memory (KiB) of `memtally ARGS` as GNU time measures
/// it (`-f %M`), checked to succeed; `None` without /usr/bin/time. (The
/// rusage of a child this process starts counts this process's pages as
/// they were when it was started: the test harness's, not memtally's.)
fn peak_kib(args: &[&str]) -> Option<u64> {
    let bin = memtally().get_program().to_owned();
    let out = std::process::Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .arg(bin)
        .args(args)
        .output()
        .ok()?;
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    Some(err.lines().last()?.trim().parse().unwrap())
}

/// Another document `diff` reads (issue 35 item 2): it is read whole, but
/// into its typed shape, not a tree of JSON values (about 17 times its
/// size: a 40 MB report page took 676 MiB).
#[test]
fn diff_of_show_json_holds_it_typed_not_as_a_tree_of_values() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, small) = (tmp.path().join("a.json"), tmp.path().join("small.json"));
    write_show(&a, 20_000);
    write_show(&small, 10);
    let size = std::fs::metadata(&a).unwrap().len();
    let (a, small) = (a.to_str().unwrap(), small.to_str().unwrap());
    let Some(peak) = peak_kib(&["diff", a, a]) else {
        return eprintln!("skipped: no /usr/bin/time");
    };
    let base = peak_kib(&["diff", small, small]).unwrap();
    let grew = peak.saturating_sub(base) * 1024;
    eprintln!(
        "diff of a {size}-byte show document with itself: {peak} KiB, {base} KiB for a small one"
    );
    // Both sides, each its bytes and its regions typed: 66,280 KiB for
    // this 9.9 MB document (release build), where a tree of values took
    // 224,144 KiB (22 times the document).
    assert!(grew < 10 * size, "diff grew by {grew} bytes for a {size}-byte document");
}
