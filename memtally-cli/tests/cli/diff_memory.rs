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
pub(crate) fn peak_kib(args: &[&str]) -> Option<u64> {
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

/// `diff` reads each document twice (its sums, then the regions it
/// lists): one that is another file the second time is refused with
/// "changed while being compared; run again" (exit 5, bad input), never compared
/// half old, half new. The file is swapped (renamed over) as soon as
/// diff's first read of it ends, which the test learns from inotify (diff
/// closes it), while diff reads the other, long, document: a vmmap report
/// and a snapshot file, each against one whose last region vanished.
#[test]
fn a_document_that_changes_between_the_two_reads_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let p = |name: &str| tmp.path().join(name);
    // vmmap text: the swapped-in report has one more region.
    crate::bounded_inputs::write_regions(&p("v.txt"), 20_000);
    crate::bounded_inputs::write_regions(&p("v-other.txt"), 20_001);
    let text = std::fs::read_to_string(p("v.txt")).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.pop();
    std::fs::write(p("v-after.txt"), lines.join("\n") + "\n").unwrap();
    // A snapshot file: the swapped-in one has other regions at each line.
    write_snapshot(&p("s.jsonl"), 0..20_000);
    write_snapshot(&p("s-other.jsonl"), 1..20_001);
    write_snapshot(&p("s-after.jsonl"), 0..19_999);
    for (before, other, after) in
        [("v.txt", "v-other.txt", "v-after.txt"), ("s.jsonl", "s-other.jsonl", "s-after.jsonl")]
    {
        // The same documents compare when left alone.
        let (b, a) = (p(before), p(after));
        let out = run_measured(&["diff", b.to_str().unwrap(), a.to_str().unwrap()]).0;
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        // Swapped between the reads: tried a few times, should the swap
        // come after diff's second read began (it has not been seen to).
        let keep = p("kept");
        std::fs::copy(&b, &keep).unwrap();
        let refused = (0..5).find_map(|_| {
            std::fs::copy(&keep, &b).unwrap();
            std::fs::copy(p(other), p("other")).unwrap();
            diff_while_swapped(&b, &a, &p("other"))
        });
        let (code, err) =
            refused.unwrap_or_else(|| panic!("{before}: the swap never came between the reads"));
        assert_eq!(code, 5, "bad input: {err}");
        assert!(err.contains("changed while being compared; run again"), "{before}: {err}");
        assert!(err.contains(before), "names the file: {err}");
    }
}

/// Runs `diff before after` and renames `other` over `before` when diff
/// first closes `before`: diff's exit code and standard error; `None`
/// when diff succeeded (the swap came too late).
fn diff_while_swapped(before: &Path, after: &Path, other: &Path) -> Option<(i32, String)> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(before.as_os_str().as_bytes()).unwrap();
    let fd = unsafe { libc::inotify_init1(libc::IN_CLOEXEC) };
    assert!(fd >= 0, "inotify_init1: {}", std::io::Error::last_os_error());
    let wd = unsafe { libc::inotify_add_watch(fd, c.as_ptr(), libc::IN_CLOSE_NOWRITE) };
    assert!(wd >= 0, "inotify_add_watch: {}", std::io::Error::last_os_error());
    let child = memtally()
        .args(["diff", before.to_str().unwrap(), after.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The first close of `before` (nothing else reads it): diff's first read ended.
    let mut pfd = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
    let ready = unsafe { libc::poll(&mut pfd, 1, 60_000) };
    assert_eq!(ready, 1, "diff never closed {}", before.display());
    std::fs::rename(other, before).unwrap();
    unsafe { libc::close(fd) };
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    match out.status.code() {
        Some(0) => None,
        code => Some((code.unwrap_or(-1), err)),
    }
}
