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
