//! `memtally show PID --classic` prints what the seed Perl script
//! (`../shared/seeds/mem_usage.pl`) prints, byte for byte: on every recorded
//! tree (whose `mem_usage_pl_output.txt` is the seed's output taken at the
//! moment of recording, see testdata/fixtures/linux/README.md) and on live
//! processes this test starts, beside the seed itself.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::support::{fork_ready, pause_forever, run};

/// A recorded tree: `DIR/proc/PID/...` and `DIR/mem_usage_pl_output.txt`.
struct Tree {
    dir: PathBuf,
    pid: String,
}

/// The recorded trees under `dir` that carry the seed's output.
fn trees_in(dir: &Path) -> Vec<Tree> {
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for d in entries {
        if !d.join("mem_usage_pl_output.txt").is_file() {
            continue; // not a seed-parity recording (e.g. maps-only)
        }
        let pids: Vec<String> = std::fs::read_dir(d.join("proc"))
            .unwrap_or_else(|e| panic!("{}/proc: {e}", d.display()))
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
            .collect();
        assert_eq!(pids.len(), 1, "{} holds one process", d.display());
        out.push(Tree { dir: d, pid: pids[0].clone() });
    }
    out
}

fn repo_trees() -> Vec<Tree> {
    trees_in(&crate::support::repo().join("testdata/fixtures/linux"))
}

fn shared_gst_tree() -> Option<Tree> {
    let dir = crate::support::repo().join("../shared/fixtures/linux");
    if !dir.join("gst-launch").is_dir() {
        eprintln!("skipping ../shared/fixtures/linux/gst-launch: not present in this checkout");
        return None;
    }
    let trees = trees_in(&dir);
    let t = trees.into_iter().find(|t| t.dir.ends_with("gst-launch"));
    assert!(t.is_some(), "../shared/fixtures/linux/gst-launch has no mem_usage_pl_output.txt");
    t
}

fn classic_of_tree(t: &Tree) -> Vec<u8> {
    let root = t.dir.join("proc");
    let out = run(&["--proc-root", root.to_str().unwrap(), "show", &t.pid, "--classic"]);
    assert!(out.status.success(), "{}: {}", t.dir.display(), String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "no warnings: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

fn assert_same(what: &str, got: &[u8], want: &[u8]) {
    assert!(
        got == want,
        "{what}: memtally --classic differs from the seed\n--- seed\n{}--- memtally\n{}",
        String::from_utf8_lossy(want),
        String::from_utf8_lossy(got)
    );
}

#[test]
fn recorded_trees_in_the_repo_match_the_seed_output() {
    let trees = repo_trees();
    // The repository ships these recordings; losing one is a bug, not a skip.
    let names: Vec<String> =
        trees.iter().map(|t| t.dir.file_name().unwrap().to_string_lossy().into_owned()).collect();
    for want in ["chromium-browser", "chromium-renderer", "gst-launch-audiotestsrc", "python3-mmap"]
    {
        assert!(names.iter().any(|n| n == want), "recording {want} missing: {names:?}");
    }
    for t in &trees {
        let want = std::fs::read(t.dir.join("mem_usage_pl_output.txt")).unwrap();
        assert_same(&t.dir.display().to_string(), &classic_of_tree(t), &want);
    }
}

#[test]
fn shared_gst_launch_tree_matches_the_seed_output() {
    let Some(t) = shared_gst_tree() else { return };
    let want = std::fs::read(t.dir.join("mem_usage_pl_output.txt")).unwrap();
    assert_same("../shared gst-launch", &classic_of_tree(&t), &want);
}

/// The seed script, when `../shared` and perl are both here.
fn seed() -> Option<PathBuf> {
    let Some(shared) = crate::support::shared() else {
        eprintln!("skipping live seed parity: ../shared (with the seed script) is absent");
        return None;
    };
    let script = shared.join("seeds/mem_usage.pl");
    if !script.is_file() {
        eprintln!("skipping live seed parity: {} is absent", script.display());
        return None;
    }
    if Command::new("perl").arg("-e1").status().map(|s| !s.success()).unwrap_or(true) {
        eprintln!("skipping live seed parity: perl is not installed");
        return None;
    }
    Some(script)
}

fn maps(pid: u32) -> Vec<u8> {
    std::fs::read(format!("/proc/{pid}/maps")).unwrap()
}

/// Runs the seed and memtally on a live process whose mappings hold still,
/// and compares. Retries if the maps changed while they ran.
fn live_parity(what: &str, script: &Path, pid: u32) {
    let pid_s = pid.to_string();
    for _ in 0..20 {
        let before = maps(pid);
        let seed = Command::new("perl").arg(script).arg(&pid_s).output().expect("perl runs");
        assert!(seed.status.success(), "seed failed on {what}");
        let ours = run(&["show", &pid_s, "--classic"]);
        assert!(ours.status.success(), "{what}: {}", String::from_utf8_lossy(&ours.stderr));
        assert!(ours.stderr.is_empty(), "{what}: {}", String::from_utf8_lossy(&ours.stderr));
        if maps(pid) != before {
            continue;
        }
        assert_same(what, &ours.stdout, &seed.stdout);
        // Not a vacuous match: the seed read this process's maps (an
        // unreadable or vanished process prints all zeros).
        let text = String::from_utf8_lossy(&seed.stdout);
        let executable = text
            .lines()
            .find_map(|l| l.strip_prefix("  Executable"))
            .and_then(|v| v.trim().parse::<u64>().ok());
        assert!(executable.is_some_and(|kb| kb > 0), "{what}: {text}");
        return;
    }
    panic!("{what}: maps never held still across a seed and memtally run");
}

struct Killed(Child);
impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn live_sleep_matches_the_seed() {
    let Some(script) = seed() else { return };
    let child = Killed(Command::new("sleep").arg("30").spawn().expect("sleep starts"));
    // Wait until sleep has exec'd, mapped its libraries and gone to sleep
    // (state S in /proc/PID/stat).
    let pid = child.0.id();
    for _ in 0..200 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat.rsplit_once(") ").map(|(_, rest)| &rest[..1]);
        if stat.contains("(sleep)") && state == Some("S") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    live_parity("sleep 30", &script, pid);
}

/// A forked child with a mapping in every one of the seed's nine rows
/// (anonymous rwx, rw-, r--, ---, --x; file r-x, r--, rw-, -w-) and a file
/// name with a space, reporting readiness through a pipe.
#[test]
fn live_child_with_every_seed_row_matches_the_seed() {
    let Some(script) = seed() else { return };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mapped data file.bin");
    std::fs::write(&path, vec![7u8; 64 * 1024]).unwrap();
    let cpath = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    let fd = unsafe { libc::open(cpath.as_ptr(), libc::O_RDWR) };
    assert!(fd >= 0);
    // Only async-signal-safe calls in the child.
    let (child, ready) = fork_ready(|ready| unsafe {
        let page = 4096usize;
        let anon = |len: usize, prot: i32| {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                prot,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        let file = |len: usize, prot: i32, flags: i32| {
            libc::mmap(std::ptr::null_mut(), len, prot, flags, fd, 0)
        };
        let rw = libc::PROT_READ | libc::PROT_WRITE;
        let maps = [
            anon(3 * page, rw | libc::PROT_EXEC),
            anon(5 * page, rw),
            anon(7 * page, libc::PROT_READ),
            anon(11 * page, libc::PROT_NONE),
            anon(13 * page, libc::PROT_EXEC),
            file(2 * page, libc::PROT_READ, libc::MAP_PRIVATE),
            file(4 * page, rw, libc::MAP_SHARED),
            file(6 * page, libc::PROT_WRITE, libc::MAP_PRIVATE),
        ];
        // r-x from a file: fails where the temp dir is mounted noexec,
        // then this row is covered by the libraries alone.
        let _ = file(8 * page, libc::PROT_READ | libc::PROT_EXEC, libc::MAP_PRIVATE);
        if maps.contains(&libc::MAP_FAILED) {
            libc::_exit(1);
        }
        ready.signal();
        pause_forever()
    });
    unsafe { libc::close(fd) };
    assert!(ready, "child mapped everything");
    let pid = child.pid;
    let m = String::from_utf8_lossy(&maps(pid as u32)).into_owned();
    assert!(m.contains("/mapped data file.bin"), "{m}");
    live_parity("forked child", &script, pid as u32);
}

#[test]
fn live_python_with_mmaps_matches_the_seed() {
    let Some(script) = seed() else { return };
    if Command::new("python3").arg("-c").arg("").status().map(|s| !s.success()).unwrap_or(true) {
        eprintln!("skipping live python3 parity: python3 is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("py data.bin");
    std::fs::write(&data, vec![1u8; 256 * 1024]).unwrap();
    let code = "import mmap, os, sys, time\n\
                a = mmap.mmap(-1, 8 << 20)\n\
                a.write(b'x' * (2 << 20))\n\
                f = mmap.mmap(os.open(sys.argv[1], os.O_RDWR), 0)\n\
                r = mmap.mmap(-1, 1 << 20, prot=mmap.PROT_READ)\n\
                print('ready', flush=True)\n\
                time.sleep(60)\n";
    let child = Killed(
        Command::new("python3")
            .arg("-c")
            .arg(code)
            .arg(&data)
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 starts"),
    );
    let mut line = String::new();
    let mut child = child;
    BufReader::new(child.0.stdout.take().unwrap()).read_line(&mut line).unwrap();
    assert_eq!(line, "ready\n");
    live_parity("python3 with mmaps", &script, child.0.id());
}
