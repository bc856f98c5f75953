//! Live children for tests: forked processes that map and touch a known
//! number of bytes, tell the parent where, and wait until they are killed.
//!
//! The child runs only async-signal-safe calls (mmap, memset, write,
//! pause), so forking from the multi-threaded test harness is sound.

#![allow(dead_code)]
// On macOS only the vmmap tests are compiled: most of this goes unused.
#![cfg_attr(not(target_os = "linux"), allow(unused_imports))]

pub mod lone;
pub mod pages_child;
#[cfg(target_os = "linux")]
pub mod peer;
#[cfg(target_os = "linux")]
pub mod stall;
pub mod swap;
pub mod tmux;
pub mod zram;

use std::io::Read;
use std::path::Path;
use std::process::{Command, Output};

pub const MIB: usize = 1024 * 1024;

/// A forked child; killed and reaped on drop, with its own children.
pub struct Child {
    pub pid: u32,
    /// The address of the child's mapping.
    pub addr: u64,
    /// With `Mapping::Shared`: the child's children, which share the mapping.
    pub children: Vec<u32>,
}

/// What the forked child maps.
#[derive(Clone, Copy)]
pub enum Mapping {
    /// Private anonymous memory, every page written.
    Anonymous(usize),
    /// Shared anonymous memory (MAP_SHARED), every page written, kept
    /// mapped by this many forked children of the child.
    Shared(usize, usize),
}

// The forked children, the copied fixtures and the plain rollup reader
// are the library tests' own (one copy, as the fuzz targets share their
// bodies with the library tests).
#[path = "../../../../memtally-core/tests/library/support/child.rs"]
mod child;
pub use child::{
    exec_loop, fork_piped, fork_ready, many_mappings, map_and_touch, map_anonymous, pause_forever,
    Forked,
};
#[path = "../../../../memtally-core/tests/library/support/recorded.rs"]
mod recorded;
pub use recorded::copied_fixture;
#[path = "../../../../memtally-core/tests/library/support/rollup.rs"]
mod rollup;
pub use rollup::rollup;

/// Forks a child that maps `mapping`, touches every page, reports the
/// address through a pipe, then sleeps until killed.
pub fn spawn(mapping: Mapping) -> Child {
    let (len, sharing, kids) = match mapping {
        Mapping::Anonymous(len) => (len, libc::MAP_PRIVATE, 0),
        Mapping::Shared(len, kids) => (len, libc::MAP_SHARED, kids),
    };
    let (pid, mut pipe) = fork_piped(|report| unsafe {
        let p = map_anonymous(len, sharing);
        libc::memset(p, 0x5a, len);
        let addr = (p as u64).to_ne_bytes();
        libc::write(report, addr.as_ptr().cast(), addr.len());
        for _ in 0..kids {
            if libc::fork() == 0 {
                // A fork does not copy the page tables of shared
                // mappings: read every page so it is mapped here too,
                // then say so.
                let mut sum = 0u8;
                for off in (0..len).step_by(4096) {
                    sum = sum.wrapping_add(std::ptr::read_volatile((p as *const u8).add(off)));
                }
                std::hint::black_box(sum);
                let k = (libc::getpid() as u32).to_ne_bytes();
                libc::write(report, k.as_ptr().cast(), k.len());
                pause_forever();
            }
        }
        libc::close(report);
        pause_forever()
    });
    let mut buf = [0u8; 8];
    pipe.read_exact(&mut buf).expect("child reports its address");
    let mut children = Vec::new();
    for _ in 0..kids {
        let mut k = [0u8; 4];
        pipe.read_exact(&mut k).expect("child reports its children");
        children.push(u32::from_ne_bytes(k));
    }
    Child { pid: pid as u32, addr: u64::from_ne_bytes(buf), children }
}

impl Drop for Child {
    fn drop(&mut self) {
        unsafe {
            // The grandchildren are reaped by init (or a subreaper) once
            // their parent is gone.
            for kid in &self.children {
                libc::kill(*kid as i32, libc::SIGKILL);
            }
            libc::kill(self.pid as i32, libc::SIGKILL);
            libc::waitpid(self.pid as i32, std::ptr::null_mut(), 0);
        }
    }
}

/// The memtally binary under test.
/// `COLUMNS` is left out: piped output is then never cut (as `ps`), so
/// what the tests read does not depend on the shell they run from.
pub fn memtally() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_memtally"));
    c.env_remove("COLUMNS");
    c
}

/// Runs memtally with `args`, returning its output.
pub fn run(args: &[&str]) -> Output {
    memtally().args(args).output().expect("memtally runs")
}

/// Runs memtally and parses its stdout as JSON; panics with stderr on failure.
pub fn run_json(args: &[&str]) -> serde_json::Value {
    let out = run(args);
    assert!(
        out.status.success(),
        "memtally {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON")
}

/// A `memtally snapshot` file's bytes (JSON Lines, format 2) read back by
/// the library, as the one document a report page embeds (the snapshot's
/// keys, each process with its `regions`).
pub fn snapshot_value(bytes: &[u8]) -> serde_json::Value {
    assert!(bytes.starts_with(b"{\"memtally_snapshot\":2,"), "a snapshot file of format 2");
    let snap = memtally_core::source::parse::snapshot::parse(bytes).expect("a whole snapshot");
    serde_json::to_value(snap).unwrap()
}

/// Rewrites the snapshot file at `path` (JSON Lines), each line's value
/// handed to `edit` (a region line is `{"region": {...}}`).
pub fn edit_snapshot(path: &Path, to: &Path, mut edit: impl FnMut(&mut serde_json::Value)) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        if i == 0 {
            // The head keeps its key order: the version first.
            out.push_str(line);
        } else {
            let mut v: serde_json::Value = serde_json::from_str(line).unwrap();
            edit(&mut v);
            out.push_str(&v.to_string());
        }
        out.push('\n');
    }
    std::fs::write(to, out).unwrap();
}

/// [`snapshot_value`] of the snapshot file at `path`.
pub fn read_snapshot(path: &Path) -> serde_json::Value {
    snapshot_value(&std::fs::read(path).unwrap())
}

/// [`snapshot_value`] of what `memtally ARGS` (a `snapshot` to standard
/// output) printed, checked to succeed.
pub fn run_snapshot(args: &[&str]) -> serde_json::Value {
    let out = run(args);
    assert!(
        out.status.success(),
        "memtally {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    snapshot_value(&out.stdout)
}

/// The data an SVG of `memtally plot` carries in its `<desc>`, after
/// checking that the file is well-formed XML.
pub fn svg_data(path: &Path) -> (String, serde_json::Value) {
    let svg = std::fs::read_to_string(path).unwrap();
    let xml = roxmltree::Document::parse(&svg).expect("well-formed XML");
    let desc = xml.descendants().find(|n| n.has_tag_name("desc")).expect("a <desc>");
    let data = serde_json::from_str(desc.text().unwrap()).expect("JSON in <desc>");
    (svg.clone(), data)
}

/// Reads a running `memtally watch`'s standard output (piped, left in
/// place for `wait_with_output`) until it has printed `n` sample lines
/// (`[    0.1s] PSS ...`): the text read, byte by byte so nothing more.
pub fn watch_samples(w: &mut std::process::Child, n: usize) -> String {
    let out = w.stdout.as_mut().expect("watch's stdout piped");
    let (mut text, mut samples, mut b) = (Vec::new(), 0, [0u8; 1]);
    while samples < n {
        assert_eq!(out.read(&mut b).unwrap(), 1, "watch ended after {samples} samples");
        text.push(b[0]);
        if b[0] == b'\n' {
            let line = text[..text.len() - 1].rsplit(|&c| c == b'\n').next().unwrap();
            samples += usize::from(line.starts_with(b"["));
        }
    }
    String::from_utf8(text).unwrap()
}

/// Live processes held still with SIGSTOP while a test compares two
/// readings of their memory (a stopped process writes nothing, so its
/// figures move only with what other processes map); SIGCONT on drop.
pub struct Stopped(Vec<u32>);

impl Stopped {
    /// Stops every PID and waits (bounded) until each is in state `T`.
    pub fn new(pids: &[u32]) -> Stopped {
        for &p in pids {
            assert_eq!(unsafe { libc::kill(p as i32, libc::SIGSTOP) }, 0, "SIGSTOP {p}");
        }
        let stopped = Stopped(pids.to_vec());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        for &p in pids {
            // The state follows the command (in parentheses, maybe with spaces).
            let state = || {
                let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap();
                stat.rsplit_once(") ").and_then(|(_, rest)| rest.chars().next())
            };
            while state() != Some('T') {
                assert!(std::time::Instant::now() < deadline, "pid {p} never stopped");
                std::thread::yield_now();
            }
        }
        stopped
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        for &p in &self.0 {
            unsafe { libc::kill(p as i32, libc::SIGCONT) };
        }
    }
}

/// A child process killed and reaped on drop.
pub struct Killed(pub std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A `memtally serve` the test started (on the address it printed first);
/// killed on drop.
pub struct Server {
    child: Killed,
    pub addr: std::net::SocketAddr,
}

impl Server {
    pub fn start(args: &[&str]) -> Server {
        use std::io::BufRead;
        let mut child = memtally()
            .arg("serve")
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit())
            .spawn()
            .expect("memtally serve starts");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let addr = line
            .trim()
            .strip_prefix("memtally: serving http://")
            .and_then(|s| s.strip_suffix("/metrics"))
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .parse()
            .unwrap();
        Server { child: Killed(child), addr }
    }

    pub fn pid(&self) -> u32 {
        self.child.0.id()
    }
}

mod paths;
pub use paths::{repo, repo_path, shared};

pub use lone::spawn_grower;

/// The recorded python3 tree (`--proc-root`), as a path string.
pub fn python_root_path() -> String {
    repo_path("testdata/fixtures/linux/python3-mmap/proc")
}

/// A child that grows by `step` bytes every `period`, on a fixed schedule
/// (absolute deadlines, so late wake-ups catch up), `steps` times, then
/// sleeps. Its true rate is `step / period`. An exec'd C program
/// ([`lone::steady_grower_pid`]), so its figures are its own alone.
pub fn spawn_steady_grower(step: usize, period: std::time::Duration, steps: usize) -> Child {
    let pid = lone::steady_grower_pid(step, period, steps);
    Child { pid, addr: 0, children: Vec::new() }
}

/// Sums one smaps key (`Private_Dirty`) over every mapping of a recorded
/// or live smaps file, in bytes, with a plain loop (independent of memtally).
pub fn smaps_sum(smaps: &Path, key: &str) -> u64 {
    std::fs::read_to_string(smaps)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .map(|v| v.trim().trim_end_matches(" kB").trim().parse::<u64>().unwrap() * 1024)
        .sum()
}

/// Captures `pid` into `dir` until the recorded smaps and smaps_rollup
/// describe the same moment: every full-count field of the rollup (all but
/// the proportional `Pss*` and `SwapPss`) is the sum of the mappings' same field, and the
/// rollup's PSS is the mappings' sum plus at most their rounding, as
/// memtally itself checks. Between the two reads a test process that forked
/// the child can move pages between shared and private dirty or share them
/// with one process fewer, and reclaim's aging clears `Referenced` bits.
pub fn capture_consistent(pid: u32, dir: &Path) {
    for _ in 0..50 {
        let out = run(&["capture", &pid.to_string(), "-o", dir.to_str().unwrap()]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let p = dir.join(pid.to_string());
        let smaps = p.join("smaps");
        let rollup_text = std::fs::read_to_string(p.join("smaps_rollup")).unwrap();
        let same = rollup_text.lines().skip(1).filter_map(|l| l.split_once(':')).all(|(key, v)| {
            let kb = v.trim().trim_end_matches(" kB").trim().parse::<u64>().unwrap();
            key.contains("Pss") || kb * 1024 == smaps_sum(&smaps, key)
        });
        let r = rollup(&p.join("smaps_rollup"));
        let mappings = std::fs::read_to_string(p.join("maps")).unwrap().lines().count() as u64;
        let (pss, summed) = (r.get("pss").copied().unwrap_or(0), smaps_sum(&smaps, "Pss"));
        if same && pss >= summed && pss - summed <= mappings * 1024 {
            return;
        }
    }
    panic!("no consistent capture of {pid} in 50 tries");
}

/// The names in `dir`, sorted (what a command left behind there).
pub fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}
