//! `memtally faults` on a C child whose three functions touch 48 MiB of
//! heap, 16 MiB of a second anonymous mapping and write 8 MiB of a
//! MAP_PRIVATE file: each function is found, called from `main`, with its
//! bytes in the right category, and the total agrees with the child's RSS
//! growth (and the written bytes with its Private_Dirty growth): built
//! with frame pointers (the kernel's chain, and DWARF), without them
//! (DWARF), and stripped with its DWARF in a separate debug file. Ctrl-C
//! ends the recording and keeps it.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::support::{memtally, repo_path, run, Killed};

const MIB: u64 = 1 << 20;

/// The C child (report_faults.rs starts it too).
pub(crate) const CHILD_C: &str = r#"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#define MIB (1024UL * 1024UL)
/* Transparent huge pages off: one fault is one base page. */
__attribute__((noinline)) void touch_heap(size_t n) {
    volatile char *p = malloc(n);
    madvise((void *)((unsigned long)p & ~4095UL), n, MADV_NOHUGEPAGE);
    for (size_t i = 0; i < n; i += 4096) p[i] = 1;
}
__attribute__((noinline)) void touch_anon(size_t n) {
    volatile char *p = mmap(0, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    madvise((void *)p, n, MADV_NOHUGEPAGE);
    for (size_t i = 0; i < n; i += 4096) p[i] = 2;
}
__attribute__((noinline)) void write_file(const char *path, size_t n) {
    int fd = open(path, O_RDWR);
    volatile char *p = mmap(0, n, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    for (size_t i = 0; i < n; i += 4096) p[i] = 3;
}
int main(int argc, char **argv) {
    char c;
    if (write(1, "ready\n", 6) != 6 || read(0, &c, 1) != 1) return 1;
    touch_heap(48 * MIB);
    touch_anon(16 * MIB);
    write_file(argv[1], 8 * MIB);
    if (write(1, "done\n", 5) != 5) return 1;
    for (;;) pause();
}
"#;

/// `Rss` and `Private_Dirty` of smaps_rollup, in bytes.
fn rollup(pid: u32) -> (u64, u64) {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap();
    let kb = |key: &str| {
        let line = text.lines().find(|l| l.starts_with(key)).unwrap();
        line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
    };
    (kb("Rss:"), kb("Private_Dirty:"))
}

/// Bytes of the category's stacks whose innermost frames are `chain`
/// (the faulting function first, then its callers), and the category's
/// bytes.
fn attributed(doc: &Value, category: &str, chain: &[&str]) -> (u64, u64) {
    let Some(c) = doc["categories"].as_array().unwrap().iter().find(|c| c["category"] == category)
    else {
        return (0, 0);
    };
    let mine = c["stacks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| chain.iter().enumerate().all(|(i, f)| s["frames"][i] == *f))
        .map(|s| s["bytes"].as_u64().unwrap())
        .sum();
    (mine, c["bytes"].as_u64().unwrap())
}

/// With DWARF stacks each sample carries 8 KiB of stack: one fault in 8,
/// and a buffer that holds the whole burst (2,304 samples, 19 MiB) even
/// where the recorder gets no CPU meanwhile (a loaded test machine).
const DWARF: &[&str] = &["--unwind", "dwarf", "--sample", "8", "--buffer-pages", "8192"];

/// Builds the child: `cc -O2 -g FLAG`; `split`: stripped of everything
/// (symbols too), its DWARF and symbols moved to a debug file in `.debug/`
/// beside it, found by its `.gnu_debuglink` (CRC checked).
fn build(dir: &std::path::Path, name: &str, flag: &str, split: bool) -> std::path::PathBuf {
    let exe = dir.join(name);
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let src = dir.join("grow.c");
    let built = Command::new(&cc).args(["-O2", "-g", flag, "-o"]).arg(&exe).arg(&src).status();
    assert!(built.is_ok_and(|s| s.success()), "{cc} builds the test child");
    if split {
        let debug = dir.join(format!("{name}.debug"));
        let run = |cmd: &mut Command| cmd.status().is_ok_and(|s| s.success());
        assert!(run(Command::new("objcopy").arg("--only-keep-debug").arg(&exe).arg(&debug)));
        assert!(run(Command::new("strip").arg("--strip-all").arg(&exe)));
        let link = format!("--add-gnu-debuglink={}", debug.display());
        assert!(run(Command::new("objcopy").arg(link).arg(&exe)));
        std::fs::create_dir_all(dir.join(".debug")).unwrap();
        std::fs::rename(&debug, dir.join(".debug").join(format!("{name}.debug"))).unwrap();
    }
    exe
}

fn within(a: u64, b: u64, share: f64) -> bool {
    (a as f64 - b as f64).abs() <= share * b as f64
}

#[test]
fn three_functions_found_in_their_categories_and_rss_agrees() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("grow.c");
    std::fs::write(&src, CHILD_C).unwrap();
    let file = dir.path().join("data");
    std::fs::write(&file, vec![0u8; 8 << 20]).unwrap();
    let has_binutils = Command::new("objcopy").arg("--version").output().is_ok();
    let fp = "-fno-omit-frame-pointer";
    let nofp = "-fomit-frame-pointer";
    let variants: [(&str, &str, bool, &[&str]); 4] = [
        ("fp", fp, false, &["--unwind", "fp"]),
        ("fp-dwarf", fp, false, DWARF),
        ("nofp", nofp, false, DWARF),
        ("split", nofp, true, DWARF),
    ];
    for (name, flag, split, args) in variants {
        if split && !has_binutils {
            eprintln!("{name} skipped: no objcopy");
            continue;
        }
        let exe = build(dir.path(), name, flag, split);
        let mut command = Command::new(&exe);
        command.arg(&file);
        let Some(doc) = trace(command, args) else { return };
        let (rss, dirty, doc) = doc;
        let pairs = [
            ("heap", "touch_heap", 48 * MIB),
            ("heap", "touch_anon", 16 * MIB),
            ("file_data", "write_file", 8 * MIB),
        ];
        for (category, function, bytes) in pairs {
            let (mine, _) = attributed(&doc, category, &[function, "main"]);
            assert!(
                mine as f64 >= 0.95 * bytes as f64 && mine <= bytes + MIB,
                "{name}: {function} from main: {mine} bytes in {category}, wanted {bytes}: {doc:#}"
            );
        }
        let heap = attributed(&doc, "heap", &["touch_heap", "main"]).0
            + attributed(&doc, "heap", &["touch_anon", "main"]).0;
        let (_, heap_all) = attributed(&doc, "heap", &[]);
        assert!(heap as f64 >= 0.95 * heap_all as f64, "{name}: heap {heap} of {heap_all}");
        let (file_mine, file_all) = attributed(&doc, "file_data", &["write_file", "main"]);
        assert!(file_mine as f64 >= 0.95 * file_all as f64, "{name}: {file_mine} of {file_all}");
        let total = doc["bytes"].as_u64().unwrap();
        assert!(within(total, rss, 0.02), "{name}: faulted {total}, RSS grew {rss}");
        let written = doc["write"].as_u64().unwrap();
        assert!(
            within(written, dirty, 0.02),
            "{name}: written {written}, Private_Dirty grew {dirty}"
        );
        assert_eq!(doc["lost"], 0, "{name}: no sample lost");
        let invalid = crate::schemas::errors("faults", &doc);
        assert!(invalid.is_empty(), "{name}: docs/schema/faults.json: {invalid:?}");
    }
}

/// Starts the child, records its faults while it grows, ends the
/// recording with SIGINT; `None` (printed why) where faults cannot be
/// sampled here. The RSS and Private_Dirty growth, and the document.
fn trace(mut command: Command, args: &[&str]) -> Option<(u64, u64, Value)> {
    let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let child = Killed(child);
    let pid = child.0.id();
    let mut ready = [0u8; 6];
    out.read_exact(&mut ready).unwrap();
    let before = rollup(pid);
    let pid_arg = pid.to_string();
    let common = [pid_arg.as_str(), "--for", "60s", "--top", "50", "--format", "json"];
    let (rec, _err) = recorder(&[&common[..], args].concat())?;
    stdin.write_all(b"x").unwrap();
    let mut done = [0u8; 5];
    out.read_exact(&mut done).unwrap();
    assert_eq!(&done, b"done\n");
    let after = rollup(pid);
    // Let the recorder drain what the child did, then end it as Ctrl-C would.
    std::thread::sleep(std::time::Duration::from_millis(300));
    // SAFETY: a plain kill(2) of the recorder this test started.
    assert_eq!(unsafe { libc::kill(rec.id() as i32, libc::SIGINT) }, 0);
    let output = rec.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130), "ended by SIGINT");
    let doc: Value = serde_json::from_slice(&output.stdout).expect("the recording is printed");
    drop(child);
    Some((after.0 - before.0, after.1 - before.1, doc))
}

/// A real program: python3 growing a list. Its heap grows by what the
/// list holds, written, and the stacks name the interpreter's allocating
/// functions (where its binary has symbols: else skipped, said why). The
/// `python3` on PATH may be a wrapper that execs the interpreter: the
/// recording follows the exec.
#[test]
fn python_growing_a_list_names_its_allocator() {
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("skipped: no python3");
        return;
    }
    let mut command = Command::new("python3");
    command.args(["-c", GROW_LIST]);
    let Some((rss, _, doc)) = trace(command, DWARF) else { return };
    let heap = doc["categories"].as_array().unwrap().iter().find(|c| c["category"] == "heap");
    let heap = heap.unwrap_or_else(|| panic!("a heap category: {doc:#}"));
    let written = heap["write"].as_u64().unwrap();
    assert!(written >= 16 * MIB, "the list's strings are written heap: {written}");
    assert!(
        within(doc["bytes"].as_u64().unwrap(), rss, 0.05),
        "faulted vs RSS growth {rss}: {doc:#}"
    );
    let names: Vec<&str> = heap["stacks"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["frames"].as_array().unwrap().iter().filter_map(|f| f.as_str()))
        .filter(|f| !f.contains("+0x") && !f.starts_with('['))
        .collect();
    if names.is_empty() {
        eprintln!("skipped: this python3 has no symbols for its allocator: {doc:#}");
        return;
    }
    assert!(
        names.iter().any(|n| n.contains("Malloc") || n.contains("alloc") || n.contains("PyList")),
        "an allocating function is named: {names:?}"
    );
}

/// python3 growing a list of strings, between a `ready` and a `done`.
const GROW_LIST: &str = "import sys\nsys.stdout.write('ready\\n'); sys.stdout.flush()\n\
    sys.stdin.read(1)\nx = ['item %d' % i * 4 for i in range(200000)]\n\
    sys.stdout.write('done\\n'); sys.stdout.flush()\nsys.stdin.read(1)\n";

/// A distribution's python3, built without frame pointers (Debian 12's
/// python3.11 sets up a frame pointer in 19 of its ~12,000 functions):
/// DWARF stacks carry its heap faults from the allocating code out through
/// the interpreter's loop to `Py_BytesMain`, which the kernel's
/// frame-pointer chain does not (checked too, where it holds).
#[test]
fn a_distribution_python_without_frame_pointers_unwinds_to_its_main() {
    let elf = |p: &&str| std::fs::read(p).is_ok_and(|b| b.starts_with(b"\x7fELF"));
    let Some(python) = ["/usr/bin/python3.11", "/usr/bin/python3"].into_iter().find(elf) else {
        eprintln!("skipped: no /usr/bin/python3 binary");
        return;
    };
    let fp_sampled = &["--unwind", "fp", "--sample", "8"];
    let mut shares = Vec::new();
    for args in [DWARF, fp_sampled] {
        let mut command = Command::new(python);
        command.args(["-c", GROW_LIST]);
        let Some((_, _, doc)) = trace(command, args) else { return };
        let heap = doc["categories"].as_array().unwrap().iter().find(|c| c["category"] == "heap");
        let heap = heap.unwrap_or_else(|| panic!("a heap category: {doc:#}"));
        let through = |s: &&Value| {
            let frames = s["frames"].as_array().unwrap();
            ["_PyEval_EvalFrameDefault", "Py_BytesMain"]
                .iter()
                .all(|f| frames.contains(&(*f).into()))
        };
        let stacks = heap["stacks"].as_array().unwrap();
        let mine: u64 = stacks.iter().filter(through).map(|s| s["bytes"].as_u64().unwrap()).sum();
        shares.push((mine as f64 / heap["bytes"].as_u64().unwrap() as f64, doc));
    }
    let (dwarf, doc) = &shares[0];
    assert!(*dwarf >= 0.9, "{python}: {dwarf:.3} of the heap unwound to Py_BytesMain: {doc:#}");
    if shares[1].0 >= 0.5 {
        eprintln!("{python} keeps frame pointers: the kernel's chain reaches its main too");
    }
}

/// A recorded tree has no live process to sample: one line says so, and
/// the exit code is 2 (the request).
#[test]
fn a_recorded_tree_is_refused_as_live_only() {
    let root = repo_path("testdata/fixtures/linux/python3-mmap/proc");
    let out = run(&["--proc-root", &root, "faults", "11364", "--for", "1s"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err,
        format!("memtally: faults records live processes only: {root} is a recorded tree\n")
    );
    assert!(out.stdout.is_empty());
}

/// Without the privilege, one line says what is needed, and the exit
/// code is 4 (a permission).
#[test]
fn without_the_privilege_one_line_says_what_is_needed() {
    let child = crate::support::lone::lone(MIB as usize);
    let pid = child.child.0.id().to_string();
    if unsafe { libc::geteuid() } != 0 || Command::new("setpriv").arg("--version").output().is_err()
    {
        eprintln!("skipped: needs root and setpriv to run as uid 65534");
        return;
    }
    let out = crate::privileges::memtally_with(&[], &["faults", &pid, "--for", "1s"]);
    let err = String::from_utf8_lossy(&out.stderr);
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").unwrap();
    if paranoid.trim().parse::<i32>().unwrap() < 0 {
        eprintln!("skipped: perf_event_paranoid is -1, nothing is refused");
        return;
    }
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.contains("CAP_PERFMON") && err.contains("perf_event_paranoid"), "{err}");
}

/// A user without CAP_IPC_LOCK may lock only `perf_event_mlock_kb` a CPU
/// (then RLIMIT_MEMLOCK): the default DWARF buffer (4,096 pages) is
/// halved until it maps, and the JSON and a note say so, never silently.
#[test]
fn a_buffer_the_lock_limit_refuses_is_halved_and_said() {
    if unsafe { libc::geteuid() } != 0 || Command::new("setpriv").arg("--version").output().is_err()
    {
        eprintln!("skipped: needs root and setpriv to run as uid 65534");
        return;
    }
    let child = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "sleep", "20"])
        .spawn()
        .unwrap();
    let child = Killed(child);
    let pid = child.0.id().to_string();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let args = ["faults", &pid, "--for", "300ms", "--format", "json"];
    let out = crate::privileges::memtally_with(&[], &args);
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(4) {
        eprintln!("skipped: perf_event_paranoid refuses a user its own process: {err}");
        return;
    }
    assert!(out.status.success(), "{err}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let cut = &doc["buffer_cut"];
    let (asked, pages) = (cut["asked_pages"].as_u64(), cut["pages"].as_u64());
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64;
    let limit = std::fs::read_to_string("/proc/sys/kernel/perf_event_mlock_kb").unwrap();
    let limit_pages = limit.trim().parse::<u64>().unwrap() * 1024 / page;
    if limit_pages * 2 >= 4096 {
        eprintln!("skipped: perf_event_mlock_kb ({limit} KiB) lets a user lock the default buffer");
        return;
    }
    assert!(asked.is_some_and(|a| a >= 512), "the default asked for: {doc}");
    assert!(pages.is_some_and(|p| p >= 1 && p < asked.unwrap()), "a smaller one mapped: {doc}");
    let table = crate::privileges::memtally_with(&[], &["faults", &pid, "--for", "300ms"]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(table.status.success(), "{}", String::from_utf8_lossy(&table.stderr));
    assert!(
        text.contains("note: the sample buffer is") && text.contains("RLIMIT_MEMLOCK"),
        "{text}"
    );
}

/// A full buffer loses samples: they are counted, in JSON and in a note
/// under the table, never passed off as no faults. The recorder is
/// stopped (SIGSTOP) while the child faults, so its one-page buffer fills.
#[test]
fn lost_samples_are_counted_and_said() {
    let mut faulter = Faulter::start();
    let pid = faulter.pid.clone();
    for format in ["json", "table"] {
        let args = ["--for", "60s", "--buffer-pages", "1", "--format", format];
        let Some((rec, _err)) = recorder(&[&[pid.as_str()][..], &args].concat()) else { return };
        // SAFETY: kill(2) of the recorder this test started.
        assert_eq!(unsafe { libc::kill(rec.id() as i32, libc::SIGSTOP) }, 0);
        faulter.fault();
        assert_eq!(unsafe { libc::kill(rec.id() as i32, libc::SIGCONT) }, 0);
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert_eq!(unsafe { libc::kill(rec.id() as i32, libc::SIGINT) }, 0);
        let output = rec.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&output.stdout);
        if format == "json" {
            let doc: Value = serde_json::from_str(&text).unwrap();
            let (lost, samples) = (doc["lost"].as_u64().unwrap(), doc["samples"].as_u64().unwrap());
            assert!(
                lost > 1000,
                "16 MiB is 4096 faults; a page holds few: lost {lost}, read {samples}"
            );
            assert!(
                samples + lost >= 4096,
                "every fault is read or counted lost: {samples} + {lost}"
            );
        } else {
            assert!(text.contains("samples were lost"), "{text}");
        }
    }
}

/// A running [`FAULTER_C`], ready: [`Faulter::fault`] has it touch 16 MiB.
struct Faulter {
    _dir: tempfile::TempDir,
    _child: Killed,
    out: std::process::ChildStdout,
    stdin: std::process::ChildStdin,
    pid: String,
}

impl Faulter {
    fn start() -> Faulter {
        let (dir, exe) = crate::support::lone::build("faulter", FAULTER_C);
        let mut child =
            Command::new(&exe).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
        let mut out = child.stdout.take().unwrap();
        let stdin = child.stdin.take().unwrap();
        let pid = child.id().to_string();
        // Killed first: a child that never says ready is still ended.
        let child = Killed(child);
        let mut ready = [0u8; 6];
        out.read_exact(&mut ready).unwrap();
        Faulter { _dir: dir, _child: child, out, stdin, pid }
    }

    /// Has the child touch 16 MiB of new memory, and waits until it has.
    fn fault(&mut self) {
        self.stdin.write_all(b"x").unwrap();
        let mut done = [0u8; 5];
        self.out.read_exact(&mut done).unwrap();
    }
}

/// Touches 16 MiB of new memory for each byte read on standard input.
const FAULTER_C: &str = r#"
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
int main(void) {
    char c;
    if (write(1, "ready\n", 6) != 6) return 1;
    while (read(0, &c, 1) == 1) {
        size_t n = 16 << 20;
        volatile char *p = mmap(0, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        madvise((void *)p, n, MADV_NOHUGEPAGE);
        for (size_t i = 0; i < n; i += 4096) p[i] = 1;
        if (write(1, "done\n", 5) != 5) return 1;
    }
    return 0;
}
"#;

/// `--sample N` takes one fault in N and scales the bytes by N: 16 MiB
/// touched reads as 16 MiB from about 4096 / N samples.
#[test]
fn one_in_n_is_sampled_and_scaled() {
    let mut faulter = Faulter::start();
    let pid = faulter.pid.clone();
    // The kernel's chains: small samples, so none is lost on a loaded
    // machine (the default DWARF buffer holds about 2,000 samples a CPU).
    let args = [&pid, "--for", "60s", "--sample", "8", "--unwind", "fp", "--format", "json"];
    let Some((rec, _err)) = recorder(&args) else { return };
    faulter.fault();
    std::thread::sleep(std::time::Duration::from_millis(300));
    // SAFETY: kill(2) of the recorder this test started.
    assert_eq!(unsafe { libc::kill(rec.id() as i32, libc::SIGINT) }, 0);
    let doc: Value = serde_json::from_slice(&rec.wait_with_output().unwrap().stdout).unwrap();
    assert_eq!(doc["sample_period"], 8);
    let samples = doc["samples"].as_u64().unwrap();
    assert!((500..=530).contains(&samples), "about 4096 / 8 samples: {samples}");
    let heap = attributed(&doc, "heap", &[]).1;
    assert!(within(heap, 16 * MIB, 0.03), "16 MiB, scaled: {heap}");
}

/// Starts `memtally faults ARGS`, its stderr's first line read: `None`
/// (the refusal printed, exit code 4 checked) where faults cannot be
/// sampled here. The reader keeps its stderr open.
fn recorder(args: &[&str]) -> Option<(std::process::Child, BufReader<std::process::ChildStderr>)> {
    let mut rec = memtally()
        .arg("faults")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(rec.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    if line.starts_with("recording") {
        return Some((rec, err));
    }
    let status = rec.wait().unwrap();
    assert_eq!(status.code(), Some(4), "only a refusal skips: {line}");
    eprintln!("skipped: page faults cannot be sampled here: {line}");
    None
}

/// A stack copy the kernel cannot take is a usage error, said in one line.
#[test]
fn a_stack_copy_the_kernel_cannot_take_is_refused() {
    for size in ["100", "64K", "0"] {
        let out = memtally().args(["faults", "1", "--stack-bytes", size]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{size}: {err}");
        assert!(err.contains("--stack-bytes must be a multiple of 8, from 8 to 60K"), "{err}");
    }
}
