//! memtally against an attacker who plants links where it writes, and
//! against recorded trees made to hurt: devices, FIFOs, sparse giants and
//! endless lines where small files should be. Every write must replace,
//! never follow; every read must end, in bounded memory, with a short error.

use std::os::unix::fs::{symlink, FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::{memtally, names, repo, run, spawn, Mapping, MIB};

fn victim(dir: &Path) -> PathBuf {
    let v = dir.join("victim");
    std::fs::write(&v, b"keep me\n").unwrap();
    v
}

fn ok(out: &Output) {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn capture_replaces_a_planted_symlink_inside_the_pid_dir() {
    let child = spawn(Mapping::Anonymous(MIB));
    let tmp = tempfile::tempdir().unwrap();
    let v = victim(tmp.path());
    let out = tmp.path().join("cap");
    let pid_dir = out.join(child.pid.to_string());
    std::fs::create_dir_all(&pid_dir).unwrap();
    for f in ["smaps", "status", "smaps_rollup"] {
        symlink(&v, pid_dir.join(f)).unwrap();
    }
    ok(&run(&["capture", &child.pid.to_string(), "-o", out.to_str().unwrap()]));
    assert_eq!(std::fs::read(&v).unwrap(), b"keep me\n");
    for f in ["smaps", "status", "smaps_rollup"] {
        let m = std::fs::symlink_metadata(pid_dir.join(f)).unwrap();
        assert!(m.file_type().is_file(), "{f} is a regular file now");
    }
    // No temporary directory is left beside the capture.
    assert!(names(&out).iter().all(|n| !n.starts_with(".memtally")), "{:?}", names(&out));
}

#[test]
fn capture_never_writes_through_a_symlinked_pid_dir() {
    let child = spawn(Mapping::Anonymous(MIB));
    let tmp = tempfile::tempdir().unwrap();
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let out = tmp.path().join("cap");
    std::fs::create_dir(&out).unwrap();
    let pid_dir = out.join(child.pid.to_string());
    symlink(&elsewhere, &pid_dir).unwrap();
    ok(&run(&["capture", &child.pid.to_string(), "-o", out.to_str().unwrap()]));
    assert!(names(&elsewhere).is_empty(), "written through the link: {:?}", names(&elsewhere));
    let m = std::fs::symlink_metadata(&pid_dir).unwrap();
    assert!(m.is_dir() && !m.file_type().is_symlink());
    assert!(pid_dir.join("smaps").is_file());
    // Captured again into the same place: replaced whole, still readable.
    ok(&run(&["capture", &child.pid.to_string(), "-o", out.to_str().unwrap()]));
    let shown = run(&["--proc-root", out.to_str().unwrap(), "show", &child.pid.to_string()]);
    ok(&shown);
    assert!(names(&out).iter().all(|n| !n.starts_with(".memtally")), "{:?}", names(&out));
}

#[test]
fn snapshot_and_export_replace_a_planted_symlink() {
    let tmp = tempfile::tempdir().unwrap();
    let v = victim(tmp.path());
    let snap = tmp.path().join("s.json");
    symlink(&v, &snap).unwrap();
    let me = std::process::id().to_string();
    ok(&run(&["snapshot", "--pid", &me, "-o", snap.to_str().unwrap()]));
    assert_eq!(std::fs::read(&v).unwrap(), b"keep me\n");
    assert!(std::fs::symlink_metadata(&snap).unwrap().file_type().is_file());

    let dir = tmp.path().join("textfile");
    std::fs::create_dir(&dir).unwrap();
    symlink(&v, dir.join("memtally.prom")).unwrap();
    ok(&run(&["export", "--textfile", dir.to_str().unwrap(), "--pid", &me]));
    assert_eq!(std::fs::read(&v).unwrap(), b"keep me\n");
    assert!(std::fs::symlink_metadata(dir.join("memtally.prom")).unwrap().file_type().is_file());
    assert_eq!(names(&dir), ["memtally.prom"]);
}

#[test]
fn snapshot_to_dev_null_leaves_the_device() {
    let me = std::process::id().to_string();
    ok(&run(&["snapshot", "--pid", &me, "-o", "/dev/null"]));
    let m = std::fs::symlink_metadata("/dev/null").unwrap();
    assert!(m.file_type().is_char_device(), "/dev/null is still a device");
}

/// A symlink to a device planted by another user is replaced, not
/// written through (as root: the link is given to `nobody`).
#[test]
fn a_foreign_symlink_to_a_device_is_not_followed() {
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: needs root to plant a link owned by another user");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let link = tmp.path().join("out.json");
    symlink("/dev/null", &link).unwrap();
    let c = std::ffi::CString::new(link.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::lchown(c.as_ptr(), 65534, 65534) }, 0);
    let me = std::process::id().to_string();
    ok(&run(&["snapshot", "--pid", &me, "-o", link.to_str().unwrap()]));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_file());
}

/// A full disk: a 32 KiB tmpfs (as root). The write fails with the
/// target's name, and no temporary file or directory is left.
#[test]
fn a_full_disk_leaves_no_temporary_file() {
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: needs root to mount a small tmpfs");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mnt = tmp.path().join("small");
    std::fs::create_dir(&mnt).unwrap();
    let st = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=32k", "tmpfs", mnt.to_str().unwrap()])
        .status();
    if !st.is_ok_and(|s| s.success()) {
        eprintln!("skipped: cannot mount a tmpfs here");
        return;
    }
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _u = Unmount(mnt.clone());
    let child = spawn(Mapping::Anonymous(MIB));
    let pid = child.pid.to_string();
    let target = mnt.join("s.json");
    // Fill the disk to the last byte.
    {
        use std::io::Write;
        let mut f = std::fs::File::create(mnt.join("filler")).unwrap();
        while f.write_all(&[b'x'; 4096]).is_ok() {}
        let _ = f.sync_all();
    }
    let me = std::process::id().to_string();
    let out = run(&["snapshot", "--pid", &me, "-o", target.to_str().unwrap()]);
    assert!(!out.status.success(), "a snapshot larger than the disk cannot succeed");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(target.to_str().unwrap()) && !err.contains(".memtally"), "{err}");
    assert_eq!(names(&mnt), ["filler"], "left behind");

    // A capture that does not fit: no half tree, no temporary directory.
    let cap = mnt.join("cap");
    let out = run(&["capture", &pid, "-o", cap.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains(".memtally"), "{err}");
    if cap.exists() {
        assert!(names(&cap).is_empty(), "left behind: {:?}", names(&cap));
    }
}

// --- hostile recorded trees ---------------------------------------------

/// A copy of a recorded tree to spoil.
pub(crate) fn tree() -> (tempfile::TempDir, PathBuf, String) {
    let tmp = tempfile::tempdir().unwrap();
    let from = repo().join("testdata/fixtures/linux/python3-mmap/proc");
    let root = tmp.path().join("proc");
    copy_dir(&from, &root);
    let pid = names(&root).into_iter().find(|n| n.parse::<u32>().is_ok()).unwrap();
    (tmp, root, pid)
}

pub(crate) fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// Runs memtally with 1 GiB of address space at most and a 20 s deadline:
/// a read that is unbounded fails (or is killed) instead of eating the machine.
pub(crate) fn run_bounded(args: &[&str]) -> (Output, Duration) {
    let limit = Duration::from_secs(20);
    run_bounded_for(args, limit).unwrap_or_else(|| panic!("memtally {args:?} hung for {limit:?}"))
}

/// [`run_bounded`] with another deadline: `None` when memtally was
/// killed there. The run is waited for, not polled: it returns as soon as
/// memtally ends.
pub(crate) fn run_bounded_for(args: &[&str], limit: Duration) -> Option<(Output, Duration)> {
    use std::os::unix::process::CommandExt;
    use std::sync::{Arc, Condvar, Mutex};
    let mut cmd = memtally();
    cmd.args(args);
    // 1 GiB of address space, as `ulimit -v 1048576`: set in the child
    // between fork and exec (only async-signal-safe calls there).
    unsafe {
        cmd.pre_exec(|| {
            let gib = libc::rlimit { rlim_cur: 1 << 30, rlim_max: 1 << 30 };
            match libc::setrlimit(libc::RLIMIT_AS, &gib) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    // Into files, not pipes: a pipe nobody drains would block the child.
    let (mut so, mut se) = (tempfile::tempfile().unwrap(), tempfile::tempfile().unwrap());
    cmd.stdin(Stdio::null()).stdout(so.try_clone().unwrap()).stderr(se.try_clone().unwrap());
    let start = Instant::now();
    // Reaped below with wait4 (std's wait would not give the rusage).
    #[allow(clippy::zombie_processes)]
    let child = cmd.spawn().unwrap();
    let pid = child.id() as libc::pid_t;
    // (ended, killed): a watchdog kills memtally at the deadline. The child
    // stays unreaped until `ended` is set, so the PID it kills is never
    // another process's.
    let state = Arc::new((Mutex::new((false, false)), Condvar::new()));
    let dog = {
        let state = Arc::clone(&state);
        std::thread::spawn(move || {
            let (lock, cv) = &*state;
            let mut s = cv.wait_timeout_while(lock.lock().unwrap(), limit, |s| !s.0).unwrap().0;
            if !s.0 {
                unsafe { libc::kill(pid, libc::SIGKILL) };
                s.1 = true;
            }
        })
    };
    // Waits for the end without reaping (WNOWAIT), then reaps with wait4
    // for the child's own peak resident memory.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    while unsafe {
        libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOWAIT)
    } != 0
    {
        assert_eq!(std::io::Error::last_os_error().raw_os_error(), Some(libc::EINTR));
    }
    let took = start.elapsed();
    let killed = {
        let (lock, cv) = &*state;
        let mut s = lock.lock().unwrap();
        s.0 = true;
        cv.notify_one();
        s.1
    };
    dog.join().unwrap();
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let mut raw = 0;
    assert_eq!(unsafe { libc::wait4(pid, &mut raw, 0, &mut ru) }, pid);
    if killed {
        return None;
    }
    use std::io::{Read, Seek};
    use std::os::unix::process::ExitStatusExt;
    let status = std::process::ExitStatus::from_raw(raw);
    PEAK_KIB.with(|p| p.set(ru.ru_maxrss as u64));
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    so.rewind().unwrap();
    so.read_to_end(&mut stdout).unwrap();
    se.rewind().unwrap();
    se.read_to_end(&mut stderr).unwrap();
    Some((Output { status, stdout, stderr }, took))
}

thread_local! {
    /// The peak resident memory (KiB) of the last [`run_bounded_for`] on this thread.
    pub(crate) static PEAK_KIB: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

fn refused(out: &Output, what: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.code().is_some(), "{what}: killed by a signal: {err}");
    assert!(err.len() < 1000, "{what}: an error of {} bytes", err.len());
}

#[test]
fn devices_fifos_and_giants_in_a_recorded_tree_are_refused_in_bounded_memory() {
    let cases: &[(&str, &str)] = &[
        ("smaps", "/dev/zero"),
        ("smaps_rollup", "/dev/zero"),
        ("status", "/dev/urandom"),
        ("cmdline", "/dev/zero"),
        ("comm", "/dev/zero"),
        ("smaps", "fifo"),
        ("smaps_rollup", "fifo"),
        ("status", "fifo"),
        ("smaps", "sparse"),
        ("smaps", "long line"),
    ];
    for &(file, kind) in cases {
        let (_tmp, root, pid) = tree();
        let target = root.join(&pid).join(file);
        std::fs::remove_file(&target).ok();
        match kind {
            "fifo" => {
                let c = std::ffi::CString::new(target.to_str().unwrap()).unwrap();
                assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
            }
            "sparse" => {
                let f = std::fs::File::create(&target).unwrap();
                f.set_len(2 << 30).unwrap();
            }
            "long line" => {
                let mut line = b"00400000-00401000 r-xp 00000000 08:01 1 /".to_vec();
                line.resize(3 << 20, b'a');
                std::fs::write(&target, line).unwrap();
            }
            dev => symlink(dev, &target).unwrap(),
        }
        let r = root.to_str().unwrap();
        let cap = root.parent().unwrap().join("cap");
        for args in [
            vec!["--proc-root", r, "show", &pid],
            vec!["--proc-root", r, "top", "--format", "json"],
            vec!["--proc-root", r, "snapshot", "--pid", &pid],
            vec!["--proc-root", r, "export", "--pid", &pid],
            vec!["--proc-root", r, "capture", &pid, "-o", cap.to_str().unwrap()],
        ] {
            let (out, took) = run_bounded(&args);
            let what = format!("{file} as {kind}: {args:?}");
            refused(&out, &what);
            assert!(took < Duration::from_secs(15), "{what}: took {took:?}");
            if args[2] == "show" && file == "smaps" {
                // The map itself is unreadable: an error, never a table.
                assert_eq!(
                    out.status.code(),
                    Some(5),
                    "{what}: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
        // A capture of a spoiled tree copies no device, FIFO or giant.
        if cap.join(&pid).join(file).exists() {
            let m = std::fs::symlink_metadata(cap.join(&pid).join(file)).unwrap();
            assert!(m.is_file() && m.size() <= 256 << 20, "{file} as {kind}: captured {m:?}");
        }
    }
}

#[test]
fn meminfo_as_a_device_or_fifo_does_not_hang_or_grow() {
    for kind in ["/dev/zero", "fifo"] {
        let (_tmp, root, pid) = tree();
        let target = root.join("meminfo");
        std::fs::remove_file(&target).unwrap();
        if kind == "fifo" {
            let c = std::ffi::CString::new(target.to_str().unwrap()).unwrap();
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        } else {
            symlink(kind, &target).unwrap();
        }
        let r = root.to_str().unwrap();
        for args in
            [vec!["--proc-root", r, "top"], vec!["--proc-root", r, "snapshot", "--pid", &pid]]
        {
            let (out, _) = run_bounded(&args);
            assert!(
                out.status.success(),
                "meminfo as {kind}: {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

#[test]
fn an_error_quotes_at_most_a_few_hundred_bytes_of_a_bad_line() {
    let (_tmp, root, pid) = tree();
    let mut text = std::fs::read(root.join(&pid).join("smaps")).unwrap();
    let mut bad = b"Rss: ".to_vec();
    bad.resize(500_000, b'9');
    bad.extend_from_slice(b"x kB\n");
    let at = text.iter().position(|&b| b == b'\n').unwrap() + 1;
    text.splice(at..at, bad);
    std::fs::write(root.join(&pid).join("smaps"), text).unwrap();
    let (out, _) = run_bounded(&["--proc-root", root.to_str().unwrap(), "show", &pid]);
    assert_eq!(out.status.code(), Some(5), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.len() < 1000, "an error of {} bytes", out.stderr.len());
}

#[test]
fn two_8_eib_mappings_never_sum_to_a_small_total() {
    let (_tmp, root, pid) = tree();
    let smaps = root.join(&pid).join("smaps");
    let text = String::from_utf8(std::fs::read(&smaps).unwrap()).unwrap();
    // Every mapping's Rss and Pss set to 8 EiB (2^53 kB).
    let crafted: String = text
        .lines()
        .map(|l| {
            if l.starts_with("Rss:") || l.starts_with("Pss:") {
                format!("{} 9007199254740992 kB\n", &l[..4])
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    std::fs::write(&smaps, crafted).unwrap();
    std::fs::remove_file(root.join(&pid).join("smaps_rollup")).ok();
    let (out, _) =
        run_bounded(&["--proc-root", root.to_str().unwrap(), "show", &pid, "--format", "json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["totals"]["rss"].as_u64(), Some(u64::MAX), "saturated, not wrapped");
    assert_eq!(doc["totals"]["pss"].as_u64(), Some(u64::MAX));
}

#[test]
fn top_on_status_figures_for_a_broken_smaps_is_partial() {
    let (_tmp, root, pid) = tree();
    std::fs::remove_file(root.join(&pid).join("smaps_rollup")).ok();
    std::fs::remove_file(root.join(&pid).join("smaps")).unwrap();
    symlink("/dev/zero", root.join(&pid).join("smaps")).unwrap();
    let (out, _) = run_bounded(&["--proc-root", root.to_str().unwrap(), "top", "--format", "json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["partial"], true, "{doc}");
    let failed = doc["failed"].to_string();
    assert!(failed.contains("not a regular file") && failed.contains("status"), "{failed}");
}

#[test]
fn control_and_bidi_characters_of_a_command_line_are_escaped_in_csv_and_prometheus() {
    use std::os::unix::process::CommandExt;
    let mut child =
        Command::new("sleep").arg0("evil\u{1b}[31m\u{202e}gpj.exe").arg("30").spawn().unwrap();
    // spawn returns once exec succeeded: the command line is the new one.
    let pid = child.id().to_string();
    let csv = run(&["top", "--pid", &pid, "--format", "csv"]);
    let prom = run(&["export", "--pid", &pid]);
    let _ = child.kill();
    let _ = child.wait();
    for (what, out) in [("top csv", csv), ("export", prom)] {
        ok(&out);
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("evil?[31m?gpj.exe"), "{what}: {text}");
        assert!(!text.contains('\u{1b}') && !text.contains('\u{202e}'), "{what}: raw controls");
    }
}

#[test]
fn plot_refuses_non_finite_times_and_draws_many_series_quickly() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = tmp.path().join("s.csv");
    let svg = tmp.path().join("s.svg");
    std::fs::write(
        &csv,
        "elapsed_s,scope,key,label,pss\n0,total,total,total,10\ninf,total,total,total,20\n",
    )
    .unwrap();
    let (out, _) = run_bounded(&["plot", csv.to_str().unwrap(), "-o", svg.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(5), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("finite"));

    // 30,000 series of 3 points, and one series of 200,000 points.
    let mut text = String::from("elapsed_s,scope,key,label,pss\n");
    for t in 0..3 {
        for k in 0..30_000 {
            text.push_str(&format!("{t},process,{k},p{k},{}\n", 4096 * (k + t)));
        }
    }
    for t in 0..200_000 {
        text.push_str(&format!("{t},total,total,total,{}\n", 4096 + t));
    }
    std::fs::write(&csv, text).unwrap();
    let (out, took) = run_bounded(&["plot", csv.to_str().unwrap(), "-o", svg.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(took < Duration::from_secs(10), "took {took:?}");
    let svg_text = std::fs::read_to_string(&svg).unwrap();
    assert!(svg_text.len() < 20 << 20, "an SVG of {} bytes", svg_text.len());
}

// --- numbers that wrap or are trusted (issue 27 item 9) ----------------

/// 8 EiB in kB, as smaps and meminfo write it.
const EIB_8_KB: &str = "9007199254740992";

/// `text` with every `Key:` line of `keys` set to `value kB`.
fn with_kb(text: &str, keys: &[&str], value: &str) -> String {
    text.lines()
        .map(|l| match l.split_once(':') {
            Some((k, _)) if keys.contains(&k) => format!("{k}: {value} kB\n"),
            _ => format!("{l}\n"),
        })
        .collect()
}

/// The recorded tree with its process twice (PIDs P and P+1), each of
/// 8 EiB RSS and PSS, and a meminfo of 16 EiB total and free.
fn tree_of_huge_figures() -> (tempfile::TempDir, PathBuf, String) {
    let (tmp, root, pid) = tree();
    for file in ["smaps", "smaps_rollup"] {
        let path = root.join(&pid).join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, with_kb(&text, &["Rss", "Pss", "Pss_Anon"], EIB_8_KB)).unwrap();
    }
    let twin = (pid.parse::<u32>().unwrap() + 1).to_string();
    copy_dir(&root.join(&pid), &root.join(&twin));
    let meminfo = std::fs::read_to_string(root.join("meminfo")).unwrap();
    let huge = with_kb(&meminfo, &["MemTotal", "MemFree", "Buffers"], "18014398509481983");
    std::fs::write(root.join("meminfo"), huge).unwrap();
    (tmp, root, pid)
}

#[test]
fn sixteen_eib_in_meminfo_and_processes_never_wrap_in_the_machine_picture_or_its_metrics() {
    let (_tmp, root, _pid) = tree_of_huge_figures();
    let r = root.to_str().unwrap();
    for args in [vec!["--proc-root", r, "machine"], vec!["--proc-root", r, "top"]] {
        let (out, _) = run_bounded(&args);
        ok(&out);
        let text = String::from_utf8(out.stdout).unwrap();
        let free = text.lines().find(|l| l.trim_start().starts_with("free ")).unwrap();
        assert!(free.contains("8388608T") && !free.contains('-'), "{args:?}: {free}");
    }
    let (out, _) = run_bounded(&["--proc-root", r, "export"]);
    ok(&out);
    let text = String::from_utf8(out.stdout).unwrap();
    let value = |metric: &str| {
        let line =
            text.lines().find(|l| l.starts_with(metric)).unwrap_or_else(|| panic!("{metric}"));
        line.rsplit(' ').next().unwrap().to_string()
    };
    // Σ PSS of two 8 EiB processes: saturated, not 0 (or 4096).
    assert_eq!(value("memtally_machine_processes_pss_bytes "), u64::MAX.to_string());
    let free = value("memtally_machine_waterfall_bytes{line=\"free\"");
    assert_eq!(free, i64::MAX.to_string(), "the waterfall gauge saturates, never turns negative");
}

#[test]
fn show_classic_of_two_whole_address_space_mappings_saturates() {
    let (_tmp, root, pid) = tree();
    let dir = root.join(&pid);
    std::fs::write(
        dir.join("maps"),
        "0-ffffffffffffffff rw-p 00000000 00:00 0\n0-ffffffffffffffff rw-p 00000000 00:00 0\n",
    )
    .unwrap();
    std::fs::remove_file(dir.join("smaps")).unwrap();
    std::fs::remove_file(dir.join("smaps_rollup")).ok();
    let r = root.to_str().unwrap();
    let (out, _) = run_bounded(&["--proc-root", r, "show", &pid, "--classic", "--format", "json"]);
    ok(&out);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["anon_data"].as_u64(), Some(u64::MAX), "{doc}");
}

#[test]
fn vmmap_purgeable_sums_of_two_8_eib_regions_saturate() {
    let fixture = repo().join("testdata/fixtures/vmmap/04_modern_gpu_purge.txt");
    let text = std::fs::read_to_string(fixture).unwrap();
    let at = text.find("IOAccelerator (graphics)    103168000").unwrap();
    let giants = "IOAccelerator (graphics)    0-8000000000000000    [8388608T    64K     0K    64K] rw-/rw- SM=SHM PURGE=N\n\
                  IOAccelerator (graphics)    8000000000000000-fffffffffffff000    [8388608T    64K     0K    64K] rw-/rw- SM=SHM PURGE=N\n";
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("giants.txt");
    std::fs::write(&file, format!("{}{giants}{}", &text[..at], &text[at..])).unwrap();
    let (out, _) = run_bounded(&["vmmap", file.to_str().unwrap(), "--format", "json"]);
    ok(&out);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["footprint_total"]["nonvol_vsize"].as_u64(), Some(u64::MAX));
}

#[test]
fn diff_of_a_snapshot_whose_regions_were_edited_uses_the_regions_and_says_so() {
    let (_tmp, root, pid) = tree();
    let dir = root.parent().unwrap().to_path_buf();
    let (a, b) = (dir.join("a.json"), dir.join("b.json"));
    let r = root.to_str().unwrap();
    ok(&run(&["--proc-root", r, "snapshot", "--pid", &pid, "-o", a.to_str().unwrap()]));
    // The second snapshot: one region grown by 4 KiB, the totals left alone.
    let mut first = true;
    crate::support::edit_snapshot(&a, &b, |v| {
        if let Some(region) = v.get_mut("region").filter(|_| first) {
            region["rss"] = (region["rss"].as_u64().unwrap() + 4096).into();
            first = false;
        }
    });
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let out = run(&["diff", a, b, "--format", "json"]);
    ok(&out);
    let d: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(d["totals"]["delta"]["rss"], 4096, "{}", d["totals"]);
    assert_eq!(d["processes"][0]["delta"]["rss"], 4096, "{}", d["processes"]);
    let notes = d["notes"].to_string();
    assert!(notes.contains("disagree with its regions") && notes.contains(&pid), "{notes}");
    let out = run(&["diff", a, b]);
    ok(&out);
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(!table.contains("processes: no change"), "{table}");
    assert!(table.contains("note: the second snapshot: pid"), "{table}");
}

/// The explorer's figure columns had a fixed width and cut the leading
/// digits of a large figure (`8388608T` shown as `88608T`); the machine
/// level's bar for a line past MemTotal asked for 2^38 cells.
#[test]
fn the_explorer_never_cuts_the_digits_of_a_large_figure() {
    use crate::support::tmux::Tmux;
    if !Tmux::available() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    let (tmp, root, pid) = tree_of_huge_figures();
    let t = Tmux::start(120, 30, tmp.path());
    let bin = env!("CARGO_BIN_EXE_memtally");
    t.line(&format!("{bin} --proc-root {} ui --interval 1h", root.display()));
    t.wait_for("the machine screen", |s| {
        s.contains("machine (from meminfo)") && s.contains("unexplained")
    });
    t.keys(&["Enter"]);
    let screen = t.wait_text("PID USER");
    let row = screen.lines().find(|l| l.trim_start().starts_with(&pid)).unwrap();
    assert!(row.contains(" 8388608T"), "a PSS of 8 EiB whole: {row}\n{screen}");
    t.keys(&["Enter"]);
    let screen = t.wait_text("heap / anon rw");
    let total = screen.lines().find(|l| l.trim_start().starts_with("total")).unwrap();
    assert!(total.contains(" 16777216T"), "a saturated total whole: {total}\n{screen}");
    t.keys(&["q"]);
}

// --- terminal and CSV injection (issue 27 item 4) ----------------------

/// Text from the input in a CSV cell: controls escaped, and a cell a
/// spreadsheet would run as a formula (`=`, `+`, `-`, `@`) quoted with `'`.
/// Before: the GPU and vmmap CSV carried the ESC raw, and every CSV the `=`.
#[test]
fn csv_cells_from_the_input_are_never_formulas_or_terminal_controls() {
    let evil = "=HYPERLINK(\"http://x\")\u{1b}[2J\u{202e}";
    let want = "'=HYPERLINK(\"\"http://x\"\")?[2J?";
    let check = |what: &str, out: Output| {
        ok(&out);
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains(want), "{what}: {text}");
        assert!(!text.contains('\u{1b}') && !text.contains('\u{202e}'), "{what}: raw controls");
    };

    use std::os::unix::process::CommandExt;
    let mut child = Command::new("sleep").arg0(evil).arg("30").spawn().unwrap();
    // spawn returns once exec succeeded: the command line is the new one.
    let pid = child.id().to_string();
    let top = run(&["top", "--pid", &pid, "--format", "csv"]);
    let _ = child.kill();
    let _ = child.wait();
    check("top csv", top);

    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("gpu");
    copy_dir(&repo().join("testdata/fixtures/gpu/machine"), &root);
    std::fs::write(root.join("300/cmdline"), format!("{evil}\0")).unwrap();
    check("gpu csv", run(&["--proc-root", root.to_str().unwrap(), "gpu", "--format", "csv"]));

    let fixture = repo().join("testdata/fixtures/vmmap/04_modern_gpu_purge.txt");
    let text = std::fs::read_to_string(fixture)
        .unwrap()
        .replace("/Applications/GpuDemo.app/Contents/MacOS/GpuDemo", evil);
    let file = tmp.path().join("vmmap.txt");
    std::fs::write(&file, text).unwrap();
    check("vmmap csv", run(&["vmmap", file.to_str().unwrap(), "--format", "csv"]));
}

/// Every text view of a recording whose command line, name, a mapping's
/// path and a cgroup path carry a terminal escape (clear the screen, set
/// the title) and a right-to-left override: none reaches the terminal
/// raw, on stdout or stderr. (The cgroup view's breakdown line printed
/// the cgroup path raw.)
#[test]
fn no_text_view_prints_a_terminal_control_from_the_input() {
    let (_tmp, root, pid) = tree();
    let evil = "ev\u{1b}]0;pwned\u{7}\u{1b}[2Jil\u{202e}";
    std::fs::write(root.join(&pid).join("cmdline"), format!("{evil}\0--flag\0")).unwrap();
    std::fs::write(root.join(&pid).join("comm"), format!("{evil}\n")).unwrap();
    let smaps = std::fs::read_to_string(root.join(&pid).join("smaps")).unwrap();
    let mut renamed = false;
    let smaps: String = smaps
        .lines()
        .map(|l| match l.split_whitespace().nth(5) {
            Some(path) if !renamed && path.starts_with('/') => {
                renamed = true;
                format!("{}\n", l.replace(path, &format!("/tmp/{evil}")))
            }
            _ => format!("{l}\n"),
        })
        .collect();
    assert!(renamed, "a file-backed mapping to rename");
    std::fs::write(root.join(&pid).join("smaps"), smaps).unwrap();
    let cg = root.join("sys/fs/cgroup");
    let leaf = cg.join(evil.trim_start_matches('/'));
    std::fs::create_dir_all(&leaf).unwrap();
    std::fs::write(cg.join("cgroup.controllers"), "cpu memory\n").unwrap();
    for f in ["memory.current", "memory.max", "memory.stat"] {
        std::fs::write(leaf.join(f), "4096\n").unwrap();
    }
    std::fs::write(root.join(&pid).join("cgroup"), format!("0::/{evil}\n")).unwrap();
    let r = root.to_str().unwrap();
    let views: &[&[&str]] = &[
        &["top"],
        &["top", "--by", "program"],
        &["top", "--by", "cgroup"],
        &["cgroup"],
        &["show", &pid],
        &["show", &pid, "--by", "path"],
        &["show", &pid, "--regions"],
        &["show", &pid, "--classic"],
        &["export"],
        &["export", "--by", "cgroup"],
        &["machine"],
    ];
    for args in views {
        let mut all = vec!["--proc-root", r];
        all.extend_from_slice(args);
        let out = run(&all);
        assert!(
            out.status.success() && !out.stdout.is_empty(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
            let text = String::from_utf8_lossy(bytes);
            assert!(
                !text.contains('\u{1b}') && !text.contains('\u{7}') && !text.contains('\u{202e}'),
                "{args:?} {stream} carries a raw control from the input:\n{text}"
            );
        }
    }
}
