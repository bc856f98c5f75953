//! Memory bounded by the work, not by the input's size (issue 35, item
//! 2): a vmmap report with a region type on every line, and a summary
//! table of as many rows, is read by `vmmap` in the same peak memory at
//! 2 MB as at 16 MB; the types past the first 1000 are summed in one
//! "other types" row that a note names, and every figure is kept.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Writes a vmmap report of `types` region lines, each of a type of its
/// own (16K virtual, 8K dirty), and a summary table of as many rows.
fn write_types(path: &Path, types: usize) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(f, "Process:         Many [4242]\nPath:            /Applications/Many.app\n").unwrap();
    writeln!(f, "==== Writable regions for process 4242").unwrap();
    writeln!(f, "REGION TYPE                    START - END         [ VSIZE  RSDNT  DIRTY   SWAP] PRT/MAX SHRMOD PURGE    REGION DETAIL").unwrap();
    for i in 0..types {
        let a = 0x1_0000_0000u64 + i as u64 * 0x4000;
        writeln!(
            f,
            "TYPE_{i:08} {a:016x}-{:016x} [   16K    16K     8K     0K] rw-/rwx SM=PRV",
            a + 0x4000
        )
        .unwrap();
    }
    writeln!(f, "\n==== Summary for process 4242").unwrap();
    writeln!(f, "                                VIRTUAL RESIDENT    DIRTY  SWAPPED VOLATILE   NONVOL    EMPTY   REGION ").unwrap();
    writeln!(f, "REGION TYPE                        SIZE     SIZE     SIZE     SIZE     SIZE     SIZE     SIZE    COUNT (non-coalesced) ").unwrap();
    writeln!(f, "===========                     ======= ========    =====  ======= ========   ======    =====  ======= ").unwrap();
    for i in 0..types {
        writeln!(f, "TYPE_{i:08}                          16K      16K       8K       0K       0K       0K       0K        1 ").unwrap();
    }
    writeln!(f, "===========                     ======= ========    =====  ======= ========   ======    =====  ======= ").unwrap();
    writeln!(f, "TOTAL                              {}K      {}K       {}K       0K       0K       0K       0K   {types} ", 16 * types, 16 * types, 8 * types).unwrap();
    f.flush().unwrap();
}

/// A memory cgroup (v1) of this test's own, removed after: what a child
/// in it used at most is its peak, whatever the test process holds (a
/// child's `ru_maxrss` starts from the parent's peak when spawned with
/// vfork, so it cannot tell).
pub(crate) struct MemCgroup {
    dir: PathBuf,
}

impl MemCgroup {
    /// A new cgroup that may use at most `limit` bytes; `None` (with the
    /// reason printed) where the v1 memory controller is not there.
    pub(crate) fn new(name: &str, limit: u64) -> Option<MemCgroup> {
        let base = Path::new("/sys/fs/cgroup/memory");
        if !base.join("memory.max_usage_in_bytes").exists() {
            eprintln!("skipped: no cgroup v1 memory controller at {}", base.display());
            return None;
        }
        // One directory an instance: a test and its stress twin may run at once.
        static MADE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = base.join(format!("memtally-test-{name}-{}-{n}", std::process::id()));
        if let Err(e) = std::fs::create_dir(&dir) {
            eprintln!("skipped: cannot make a memory cgroup ({e}): run as root");
            return None;
        }
        let cg = MemCgroup { dir };
        std::fs::write(cg.dir.join("memory.limit_in_bytes"), limit.to_string()).unwrap();
        Some(cg)
    }

    /// Runs memtally with `args` in the cgroup, its standard output into
    /// `out`: its exit code, standard error and peak memory (KiB).
    pub(crate) fn run(&self, args: &[&str], out: &Path) -> (i32, String, u64) {
        self.run_fed(args, out, Stdio::null())
    }

    /// [`MemCgroup::run`] with `stdin` as memtally's standard input.
    fn run_fed(&self, args: &[&str], out: &Path, stdin: Stdio) -> (i32, String, u64) {
        let err_path = match out == Path::new("/dev/null") {
            // The cgroup's own name: one file a cgroup, not a test process.
            true => std::env::temp_dir().join(self.dir.file_name().unwrap()).with_extension("err"),
            false => out.with_extension("err"),
        };
        use std::os::fd::AsRawFd;
        use std::os::unix::process::{CommandExt, ExitStatusExt};
        std::fs::write(self.dir.join("memory.max_usage_in_bytes"), "0").unwrap();
        let procs =
            std::fs::OpenOptions::new().write(true).open(self.dir.join("cgroup.procs")).unwrap();
        let fd = procs.as_raw_fd();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_memtally"));
        cmd.args(args)
            .env_remove("COLUMNS")
            .stdin(stdin)
            .stdout(std::fs::File::create(out).unwrap())
            .stderr(std::fs::File::create(&err_path).unwrap());
        // In the child before exec: into the cgroup ("0": the writer).
        unsafe {
            cmd.pre_exec(move || match libc::write(fd, b"0".as_ptr().cast(), 1) {
                1 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            })
        };
        let status = cmd.status().unwrap();
        drop(procs);
        let err = std::fs::read_to_string(&err_path).unwrap();
        if out == Path::new("/dev/null") {
            let _ = std::fs::remove_file(&err_path);
        }
        let code = status.code().unwrap_or_else(|| {
            panic!("memtally {args:?} died (signal {:?}): {err}", status.signal())
        });
        let peak = std::fs::read_to_string(self.dir.join("memory.max_usage_in_bytes")).unwrap();
        (code, err, peak.trim().parse::<u64>().unwrap() >> 10)
    }
}

impl Drop for MemCgroup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// The types past the first 1000 in one row, every figure kept, in the
/// text and the JSON, on a report of 2,000 types.
#[test]
fn vmmap_of_a_type_on_every_line_sums_the_rest_in_one_row() {
    types_in_one_row_and_bounded_memory(&[2_000]);
}

/// The same at 2 MB and 16 MB of input (20,000 and 160,000 types), in
/// the same peak memory: a minute on a 2-core machine, so in the stress
/// run (`scripts/stress/run.sh`).
#[test]
#[ignore = "stress: generated inputs of 16 MB; scripts/stress/run.sh runs it"]
fn stress_vmmap_of_a_type_on_every_line_stays_flat_and_sums_the_rest_in_one_row() {
    types_in_one_row_and_bounded_memory(&[20_000, 160_000]);
}

/// `vmmap` of a report of each number of types in `sizes`: the rest
/// summed in one row (the JSON checked at the first size); with two
/// sizes, the peak memory of the second within 8 MiB of the first's.
fn types_in_one_row_and_bounded_memory(sizes: &[usize]) {
    let Some(cg) = MemCgroup::new("vmmap-types", 1 << 30) else { return };
    let tmp = tempfile::tempdir().unwrap();
    let mut peaks = Vec::new();
    for &types in sizes {
        let input = tmp.path().join(format!("{types}.txt"));
        write_types(&input, types);
        let out = tmp.path().join(format!("{types}.out"));
        let (code, err, peak) = cg.run(&["vmmap", input.to_str().unwrap()], &out);
        assert_eq!(code, 0, "{err}");
        let text = std::fs::read_to_string(&out).unwrap();
        let folded = types - 1000;
        let note = format!(
            "more than 1000 region types: the {folded} region(s) of the types after the first 1000 are summed in one row, \"other types\""
        );
        assert!(text.contains(&note), "{text}");
        // Every region is in the total, the folded ones in their row.
        let row = |name: &str| {
            text.lines()
                .find(|l| l.starts_with(name))
                .map(|l| l.split_whitespace().collect::<Vec<_>>())
        };
        let other = row("other types").unwrap_or_else(|| panic!("an other-types row: {text}"));
        assert_eq!(other[2], folded.to_string(), "{other:?}");
        let total = row("total").unwrap_or_else(|| panic!("a total row: {text}"));
        assert_eq!(total[1], types.to_string(), "{total:?}");
        // The JSON (every region listed, so its peak is taken with the
        // output thrown away: a file's pages would count).
        let args = ["vmmap", input.to_str().unwrap(), "--format", "json"];
        let (code, err, json_peak) = cg.run(&args, Path::new("/dev/null"));
        assert_eq!(code, 0, "{err}");
        if types == sizes[0] {
            let json_out = tmp.path().join(format!("{types}.json"));
            assert_eq!(cg.run(&args, &json_out).0, 0);
            let doc: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&json_out).unwrap()).unwrap();
            assert_eq!(doc["regions_read"], types as u64);
            let types_listed = doc["types"].as_array().map(Vec::len);
            let summary = doc["summary"].as_array().unwrap();
            assert_eq!(summary.len(), 1001, "1000 rows and the one they are summed in");
            assert_eq!(summary[1000]["region_type"], "other types");
            assert_eq!(summary[1000]["count"], folded as u64, "{types_listed:?}");
        }
        let size = std::fs::metadata(&input).unwrap().len();
        eprintln!(
            "vmmap of {types} types ({size} bytes): peak {peak} KiB, --format json {json_peak} KiB"
        );
        peaks.push((size, peak.max(json_peak)));
    }
    let [(small, small_peak), (big, big_peak)] = peaks[..] else { return };
    let grew_kib = big_peak.saturating_sub(small_peak);
    assert!(
        grew_kib < 8 << 10,
        "from {small} to {big} bytes of input the peak grew by {grew_kib} KiB ({small_peak} to {big_peak} KiB)"
    );
}

/// Writes a vmmap report of `regions` region lines as a large process
/// has them: a dozen types, a few details, a quarter of them purgeable
/// (`PURGE=` states). Every region's dirty size is 16K, its virtual 64K.
pub(crate) fn write_regions(path: &Path, regions: usize) {
    const TYPES: [&str; 6] =
        ["MALLOC_SMALL", "IOSurface", "VM_ALLOCATE", "__DATA", "Stack", "IOAccelerator"];
    const DETAILS: [&str; 4] = ["", "/usr/lib/dyld", "thread 3", "DefaultMallocZone_0x104c9c000"];
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(f, "Process:         Big [4242]\nPath:            /Applications/Big.app\n").unwrap();
    writeln!(f, "==== Writable regions for process 4242").unwrap();
    writeln!(f, "REGION TYPE                      START - END             [ VSIZE  RSDNT  DIRTY   SWAP] PRT/MAX SHRMOD PURGE    REGION DETAIL").unwrap();
    for i in 0..regions {
        let a = 0x1_0000_0000u64 + i as u64 * 0x10000;
        let purge = match i % 8 {
            0 => "PURGE=V",
            1 => "PURGE=N",
            _ => "       ",
        };
        writeln!(
            f,
            "{:<22} {a:016x}-{:016x} [   64K    32K    16K     0K] rw-/rwx SM=PRV {purge}  {}",
            TYPES[i % TYPES.len()],
            a + 0x10000,
            DETAILS[i % DETAILS.len()],
        )
        .unwrap();
    }
    f.flush().unwrap();
}

/// `diff` of saved vmmap text keeps no region, only what it prints: its
/// peak grows by a region's identity (8 bytes a side, a purge state 16
/// more where there is one), not by the hundreds of bytes a region held.
/// Each report against itself and against a copy whose last region
/// vanished and one purgeable region turned volatile: here 2,000 regions;
/// 2 MB and 16 MB of text in the same peak memory in the stress run.
#[test]
fn diff_of_vmmap_text_lists_the_changes_and_sums_every_region() {
    vmmap_text_diffed(&[2_000], Written::Text);
}

/// [`diff_of_vmmap_text_lists_the_changes_and_sums_every_region`] of the
/// same reports written by `memtally vmmap --format json`: read twice as
/// they come, never whole.
#[test]
fn diff_of_vmmap_json_lists_the_changes_and_sums_every_region() {
    vmmap_text_diffed(&[2_000], Written::Json);
}

/// [`diff_of_vmmap_json_lists_the_changes_and_sums_every_region`] at 20,000
/// and 160,000 regions (5 and 42 MB of JSON), the peak within 8 MiB: in
/// `scripts/stress/run.sh`.
#[test]
#[ignore = "stress: generated inputs of 42 MB; scripts/stress/run.sh runs it"]
fn stress_diff_of_large_vmmap_json_stays_flat() {
    vmmap_text_diffed(&[20_000, 160_000], Written::Json);
}

/// `diff` of a report given through a pipe (`/dev/stdin`), which cannot
/// be read twice: copied to a temporary file of its own first, then read
/// as a named file is. 60,000 regions (6 MB of text) in a cgroup of 48 MiB,
/// whose limit reclaims the copy's page cache: holding every region took
/// about 110 MiB. The figures are the named file's, and an error names
/// the pipe, not the copy.
#[test]
fn diff_of_a_piped_report_reads_it_in_bounded_memory() {
    let Some(cg) = MemCgroup::new("diff-pipe", 48 << 20) else { return };
    let tmp = tempfile::tempdir().unwrap();
    let regions = 60_000;
    let (before, after) = (tmp.path().join("before.txt"), tmp.path().join("after.txt"));
    write_regions(&before, regions);
    let text = std::fs::read_to_string(&before).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.pop();
    std::fs::write(&after, lines.join("\n") + "\n").unwrap();
    let fed = |path: &Path| {
        let (reader, mut writer) = std::io::pipe().unwrap();
        let mut file = std::fs::File::open(path).unwrap();
        let feeder = std::thread::spawn(move || std::io::copy(&mut file, &mut writer));
        (Stdio::from(reader), feeder)
    };
    let out = tmp.path().join("piped.out");
    let (stdin, feeder) = fed(&before);
    let args = ["diff", "/dev/stdin", after.to_str().unwrap(), "--format", "json"];
    let (code, err, peak) = cg.run_fed(&args, &out, stdin);
    feeder.join().unwrap().unwrap();
    assert_eq!(code, 0, "{err}");
    let piped = std::fs::read(&out).unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&piped).unwrap();
    assert_eq!(doc["totals"]["before"]["dirty"], regions as u64 * 16384, "{}", doc["totals"]);
    assert_eq!(doc["totals"]["delta"]["dirty"], -16384, "{}", doc["totals"]);
    let listed = doc["regions"].as_array().unwrap();
    assert_eq!(listed.len(), 1, "the one region that vanished: {listed:?}");
    // The same document as the named file gives.
    let (code, err, _) =
        cg.run(&["diff", before.to_str().unwrap(), args[2], "--format", "json"], &out);
    assert_eq!(code, 0, "{err}");
    assert_eq!(piped, std::fs::read(&out).unwrap(), "the pipe's diff is the file's");
    eprintln!("diff of {regions} regions through a pipe: peak {peak} KiB");
    // A piped document of another kind is refused under the pipe's name.
    let linux = tmp.path().join("linux.json");
    crate::diff_memory::write_show(&linux, 10);
    let (stdin, feeder) = fed(&linux);
    let (code, err, _) = cg.run_fed(&["diff", "/dev/stdin", args[2]], &out, stdin);
    feeder.join().unwrap().unwrap();
    assert_eq!(code, 5, "{err}");
    assert!(err.contains("(/dev/stdin)") && err.contains(args[2]), "{err}");
    assert_eq!(err.matches(&*std::env::temp_dir().to_string_lossy()).count(), 1, "{err}");
}

/// How a report `diff` reads is written.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Written {
    /// As `vmmap` prints it.
    Text,
    /// As `memtally vmmap --format json` prints it.
    Json,
}

/// The report at `text` as `written` says: `text` itself, or its JSON
/// beside it.
fn written(text: &Path, written: Written) -> PathBuf {
    if written == Written::Text {
        return text.to_path_buf();
    }
    let json = text.with_extension("json");
    let out = Command::new(env!("CARGO_BIN_EXE_memtally"))
        .args(["vmmap", "--format", "json", text.to_str().unwrap()])
        .stdout(std::fs::File::create(&json).unwrap())
        .status()
        .unwrap();
    assert!(out.success(), "memtally vmmap --format json {}", text.display());
    json
}

/// [`diff_of_vmmap_text_lists_the_changes_and_sums_every_region`] at 2 MB
/// and 16 MB of text (20,000 and 160,000 regions), the peak within 8 MiB:
/// half a minute on a 2-core machine, so in `scripts/stress/run.sh`.
#[test]
#[ignore = "stress: generated inputs of 16 MB; scripts/stress/run.sh runs it"]
fn stress_diff_of_large_vmmap_text_stays_flat() {
    vmmap_text_diffed(&[20_000, 160_000], Written::Text);
}

/// `diff` of a report of each number of regions in `sizes`, written as
/// `form` says; with two sizes, the peak memory of the second within
/// 8 MiB of the first's.
fn vmmap_text_diffed(sizes: &[usize], form: Written) {
    let name = match form {
        Written::Text => "diff-vmmap",
        Written::Json => "diff-vmmap-json",
    };
    let Some(cg) = MemCgroup::new(name, 1 << 30) else { return };
    let tmp = tempfile::tempdir().unwrap();
    let mut peaks = Vec::new();
    for &regions in sizes {
        let before = tmp.path().join(format!("{regions}.txt"));
        write_regions(&before, regions);
        // The after report: the last region gone, the second (PURGE=N) volatile.
        let text = std::fs::read_to_string(&before).unwrap();
        let mut lines: Vec<&str> = text.lines().collect();
        lines.pop();
        let second = lines.iter().position(|l| l.contains("PURGE=N")).unwrap();
        let flipped = lines[second].replace("PURGE=N", "PURGE=V");
        lines[second] = &flipped;
        let after = tmp.path().join(format!("{regions}-after.txt"));
        std::fs::write(&after, lines.join("\n") + "\n").unwrap();
        let (before, after) = (written(&before, form), written(&after, form));
        let out = tmp.path().join(format!("{regions}.out"));
        let (b, a) = (before.to_str().unwrap(), after.to_str().unwrap());
        let (code, err, same_peak) = cg.run(&["diff", b, b], &out);
        assert_eq!(code, 0, "{err}");
        let text = std::fs::read_to_string(&out).unwrap();
        assert!(text.contains("regions: 0 appeared (0 virtual), 0 vanished (0 virtual)"), "{text}");
        let (code, err, peak) = cg.run(&["diff", b, a, "--format", "json"], &out);
        assert_eq!(code, 0, "{err}");
        let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
        let listed = doc["regions"].as_array().unwrap();
        assert_eq!(listed.len(), 1, "the one region that vanished: {listed:?}");
        assert_eq!(listed[0]["status"], "vanished", "{listed:?}");
        let flips = doc["purge_changes"].as_array().unwrap();
        assert_eq!(flips.len(), 1, "{flips:?}");
        // Every region is summed: 16K dirty each, the vanished one's gone.
        assert_eq!(doc["totals"]["before"]["dirty"], regions as u64 * 16384, "{}", doc["totals"]);
        assert_eq!(doc["totals"]["delta"]["dirty"], -16384, "{}", doc["totals"]);
        let size = std::fs::metadata(&before).unwrap().len();
        eprintln!(
            "diff of {regions} regions ({size} bytes): peak {same_peak} KiB, of two {peak} KiB"
        );
        peaks.push((size, same_peak.max(peak)));
    }
    let [(small, small_peak), (big, big_peak)] = peaks[..] else { return };
    let grew_kib = big_peak.saturating_sub(small_peak);
    assert!(
        grew_kib < 8 << 10,
        "from {small} to {big} bytes of input the peak grew by {grew_kib} KiB ({small_peak} to {big_peak} KiB)"
    );
}

/// `diff` of the report of a type on every line: past the first 1000,
/// its path rows (a region without a detail is grouped by its type) are
/// the one the types are summed in, as its categories are, so neither
/// grows with the input; every region is still in the totals. Here 2,000
/// types; 2 MB and 16 MB of input in the same peak memory in the stress run.
#[test]
fn diff_of_a_type_on_every_line_sums_every_region() {
    types_diffed(&[2_000]);
}

/// [`diff_of_a_type_on_every_line_sums_every_region`] at 20,000 and
/// 160,000 types, the peak within 8 MiB: in `scripts/stress/run.sh`.
#[test]
#[ignore = "stress: generated inputs of 16 MB; scripts/stress/run.sh runs it"]
fn stress_diff_of_a_type_on_every_line_stays_flat() {
    types_diffed(&[20_000, 160_000]);
}

/// `diff` of a report of each number of types in `sizes` with itself;
/// with two sizes, the peak memory of the second within 8 MiB of the first's.
fn types_diffed(sizes: &[usize]) {
    let Some(cg) = MemCgroup::new("diff-types", 1 << 30) else { return };
    let tmp = tempfile::tempdir().unwrap();
    let mut peaks = Vec::new();
    for &types in sizes {
        let input = tmp.path().join(format!("{types}.txt"));
        write_types(&input, types);
        let path = input.to_str().unwrap();
        let out = tmp.path().join(format!("{types}.json"));
        let args = ["diff", path, path, "--format", "json", "--min-delta", "0"];
        let (code, err, peak) = cg.run(&args, &out);
        assert_eq!(code, 0, "{err}");
        let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
        assert_eq!(doc["totals"]["before"]["dirty"], types as u64 * 8192, "{}", doc["totals"]);
        assert_eq!(doc["totals"]["delta"]["dirty"], 0, "{}", doc["totals"]);
        assert!(doc["paths"].as_array().unwrap().is_empty(), "no change: {}", doc["paths"]);
        let size = std::fs::metadata(&input).unwrap().len();
        eprintln!("diff of {types} types ({size} bytes): peak {peak} KiB");
        peaks.push((size, peak));
    }
    let [(small, small_peak), (big, big_peak)] = peaks[..] else { return };
    let grew_kib = big_peak.saturating_sub(small_peak);
    assert!(
        grew_kib < 8 << 10,
        "from {small} to {big} bytes of input the peak grew by {grew_kib} KiB ({small_peak} to {big_peak} KiB)"
    );
}

/// `diff` of the JSON of `show` and of a report page embedding it (a
/// snapshot of format 1) keeps no region, only what it prints: each
/// region is added into its process's sums as serde reads it, and the
/// few listed are read again. 4,000 and 16,000 regions (2 and 8 MB of
/// `show` JSON), each against itself and against one whose last region
/// vanished; the peak grows by under 8 MiB (the reader that held the
/// whole document grew by 70 MiB from 2 to 16 MB: docs/robustness.md).
#[test]
fn diff_of_large_show_json_and_pages_stays_flat() {
    let Some(cg) = MemCgroup::new("diff-json", 1 << 30) else { return };
    let tmp = tempfile::tempdir().unwrap();
    let mut peaks = [Vec::new(), Vec::new()];
    for regions in [4_000u64, 16_000] {
        let before = tmp.path().join(format!("{regions}.json"));
        let after = tmp.path().join(format!("{regions}-after.json"));
        crate::diff_memory::write_show(&before, regions);
        crate::diff_memory::write_show(&after, regions - 1);
        let page = |json: &Path, name: &str| {
            let args = ["--input", json.to_str().unwrap(), "--max-size", "1G"];
            crate::report::report(tmp.path(), &format!("{regions}-{name}.html"), &args)
        };
        let pages = (page(&before, "before"), page(&after, "after"));
        for (kind, (b, a)) in [(0, (before.clone(), after.clone())), (1, pages)] {
            let (b, a) = (b.to_str().unwrap(), a.to_str().unwrap());
            let out = tmp.path().join(format!("{regions}-{kind}.out"));
            let (code, err, same_peak) = cg.run(&["diff", b, b], &out);
            assert_eq!(code, 0, "{err}");
            let text = std::fs::read_to_string(&out).unwrap();
            assert!(text.contains("0 appeared (0 virtual), 0 vanished (0 virtual)"), "{text}");
            let (code, err, peak) = cg.run(&["diff", b, a, "--format", "json"], &out);
            assert_eq!(code, 0, "{err}");
            let doc: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
            let listed = doc["regions"].as_array().unwrap();
            assert_eq!(listed.len(), 1, "the one region that vanished: {listed:?}");
            assert_eq!(listed[0]["status"], "vanished", "{listed:?}");
            let end = 0x1000_0000 + (regions - 1) * 8192 + 4096;
            assert_eq!(listed[0]["end"], end, "{listed:?}");
            // Every region is summed: 4096 of rss each.
            assert_eq!(doc["totals"]["delta"]["rss"], -4096, "{}", doc["totals"]);
            let size = std::fs::metadata(b).unwrap().len();
            eprintln!("diff of {b} ({size} bytes): peak {same_peak} KiB, of two {peak} KiB");
            peaks[kind].push((size, same_peak.max(peak)));
        }
    }
    for p in peaks {
        let ((small, small_peak), (big, big_peak)) = (p[0], p[1]);
        let grew_kib = big_peak.saturating_sub(small_peak);
        assert!(
            grew_kib < 8 << 10,
            "from {small} to {big} bytes of input the peak grew by {grew_kib} KiB ({small_peak} to {big_peak} KiB)"
        );
    }
}

/// Writes a vmmap report of `regions` region lines from address `base`,
/// region `i` of `16K * (1 + (i * 7 + seed) % 64)` virtual and 16K dirty:
/// the virtual and dirty sizes written, summed.
fn write_sized(path: &Path, regions: u64, base: u64, seed: u64) -> (u64, u64) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(f, "Process:         Big [4242]\nPath:            /Applications/Big.app\n").unwrap();
    writeln!(f, "==== Writable regions for process 4242").unwrap();
    writeln!(f, "REGION TYPE                      START - END             [ VSIZE  RSDNT  DIRTY   SWAP] PRT/MAX SHRMOD PURGE    REGION DETAIL").unwrap();
    let (mut a, mut size) = (base, 0);
    for i in 0..regions {
        let k = 16 * (1 + (i * 7 + seed) % 64);
        writeln!(
            f,
            "MALLOC_SMALL           {a:016x}-{:016x} [{k:>5}K    16K    16K     0K] rw-/rwx SM=PRV           DefaultMallocZone_0x104c9c000",
            a + k * 1024
        )
        .unwrap();
        a += k * 1024;
        size += k * 1024;
    }
    f.flush().unwrap();
    (size, regions * 16384)
}

/// `diff` of two reports that share no region lists the 1000 largest
/// changes (`--regions`' default) and one row of the rest, how many and
/// their sizes summed, in the table, the JSON and the CSV: the listed ones
/// are the first 1000 of the whole list (`--regions` past their number),
/// and the row is the sum of the others. 2,000 regions a side here; 20,000
/// and 160,000 in the same peak memory in the stress run.
#[test]
fn diff_of_two_different_reports_lists_the_largest_and_sums_the_rest() {
    different_reports_diffed(&[2_000]);
}

/// [`diff_of_two_different_reports_lists_the_largest_and_sums_the_rest`]
/// at 20,000 and 160,000 regions a side (2 and 16 MB), the peak within
/// 8 MiB: in `scripts/stress/run.sh`.
#[test]
#[ignore = "stress: generated inputs of 16 MB; scripts/stress/run.sh runs it"]
fn stress_diff_of_two_different_reports_stays_flat() {
    different_reports_diffed(&[20_000, 160_000]);
}

/// `diff` of two reports of `regions` each (for each of `sizes`) that share
/// no region; with two sizes, the peak of the second within 8 MiB of the first's.
fn different_reports_diffed(sizes: &[u64]) {
    let Some(cg) = MemCgroup::new("diff-different", 1 << 30) else { return };
    let tmp = tempfile::tempdir().unwrap();
    let mut peaks = Vec::new();
    for &regions in sizes {
        let (b, a) = (
            tmp.path().join(format!("{regions}-b.txt")),
            tmp.path().join(format!("{regions}-a.txt")),
        );
        let (b_size, b_dirty) = write_sized(&b, regions, 0x1_0000_0000, 0);
        let (a_size, a_dirty) = write_sized(&a, regions, 0x100_0000_0000, 5);
        let (b, a) = (b.to_str().unwrap(), a.to_str().unwrap());
        let out = tmp.path().join(format!("{regions}.json"));
        let (code, err, peak) = cg.run(&["diff", b, a, "--format", "json"], &out);
        assert_eq!(code, 0, "{err}");
        let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
        let listed = doc["regions"].as_array().unwrap();
        assert_eq!(listed.len(), 1000);
        let left = &doc["regions_left"];
        assert_eq!(
            (left["appeared"].as_u64(), left["vanished"].as_u64()),
            (
                Some(
                    regions - 1000
                        + listed.iter().filter(|r| r["status"] == "vanished").count() as u64
                ),
                Some(regions - listed.iter().filter(|r| r["status"] == "vanished").count() as u64)
            ),
            "{left}"
        );
        // Every region is in the list or the row: their deltas add up to the total's.
        let listed_delta = |f: &str| -> i64 {
            listed
                .iter()
                .map(|r| {
                    let v = r[f].as_i64().unwrap();
                    if r["status"] == "appeared" {
                        v
                    } else {
                        -v
                    }
                })
                .sum()
        };
        let total = a_size as i64 - b_size as i64;
        assert_eq!(left["delta"]["size"].as_i64(), Some(total - listed_delta("size")), "{left}");
        let dirty = a_dirty as i64 - b_dirty as i64;
        assert_eq!(left["delta"]["dirty"].as_i64(), Some(dirty - listed_delta("dirty")), "{left}");
        assert_eq!(doc["totals"]["delta"]["size"].as_i64(), Some(total), "{}", doc["totals"]);
        // The largest first.
        let first = listed.iter().map(|r| r["size"].as_u64().unwrap());
        assert!(first.clone().zip(first.skip(1)).all(|(x, y)| x >= y));
        if regions == sizes[0] {
            // The list is the first 1000 of the whole one.
            let whole = tmp.path().join("whole.json");
            let args = ["diff", b, a, "--format", "json", "--regions", "1000000"];
            assert_eq!(cg.run(&args, &whole).0, 0);
            let whole: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&whole).unwrap()).unwrap();
            assert_eq!(whole["regions"].as_array().unwrap().len() as u64, 2 * regions);
            assert_eq!(whole["regions"].as_array().unwrap()[..1000], listed[..]);
            assert!(whole.get("regions_left").is_none(), "every region listed");
            // The table's row and the CSV's.
            let text = tmp.path().join("table.txt");
            assert_eq!(cg.run(&["diff", b, a], &text).0, 0);
            let text = std::fs::read_to_string(&text).unwrap();
            let n = 2 * regions - 1000;
            let row = format!(
                "  ({n} more not listed: {} appeared, {} vanished, virtual ",
                left["appeared"], left["vanished"]
            );
            assert!(text.contains(&row), "{text}");
            assert!(text.contains(&format!("regions: {regions} appeared (")), "{text}");
            let csv = tmp.path().join("out.csv");
            assert_eq!(cg.run(&["diff", b, a, "--format", "csv"], &csv).0, 0);
            let mut csv = csv::Reader::from_path(&csv).unwrap();
            let at = csv.headers().unwrap().iter().position(|h| h == "size_delta").unwrap();
            let rows: Vec<csv::StringRecord> = csv.records().map(Result::unwrap).collect();
            let row = rows.iter().find(|r| &r[0] == "regions_left").expect("a regions_left row");
            let label = format!("{} appeared, {} vanished", left["appeared"], left["vanished"]);
            assert_eq!(
                (&row[2], &row[at]),
                (label.as_str(), left["delta"]["size"].to_string().as_str())
            );
        }
        let size = std::fs::metadata(b).unwrap().len();
        eprintln!(
            "diff of two different reports of {regions} regions ({size} bytes): peak {peak} KiB"
        );
        peaks.push((size, peak));
    }
    let [(small, small_peak), (big, big_peak)] = peaks[..] else { return };
    // What grows is each region's identity (8 bytes a side, and 8 more
    // where the other side lacks it, in vectors grown by doubling), not
    // the region: under 64 bytes a region (a region kept is hundreds).
    let grew_kib = big_peak.saturating_sub(small_peak);
    let extra = 2 * (sizes[1] - sizes[0]);
    assert!(
        grew_kib << 10 < 64 * extra,
        "from {small} to {big} bytes of input the peak grew by {grew_kib} KiB ({small_peak} to {big_peak} KiB)"
    );
}

/// `capture` copies a process's smaps a chunk at a time (issue 35 item
/// 2): the recorded chromium process with its smaps repeated to about 4
/// and 40 MB is recorded byte for byte in the same peak memory (before,
/// it was held whole: 270,924 KiB for a 2 GiB sparse smaps, refused at
/// 256 MiB). Measured as the process's own peak: a memory cgroup would
/// count the page cache of the file written too. A recorded smaps past
/// the bound is refused before anything is made, exit 5.
#[test]
fn capture_copies_a_large_smaps_in_flat_memory() {
    let (tmp, tree) = crate::support::copied_fixture("chromium-browser");
    let smaps = tree.join("11672/smaps");
    let one = std::fs::read(&smaps).unwrap();
    let mut peaks = Vec::new();
    for copies in [6, 60] {
        std::fs::write(&smaps, one.repeat(copies)).unwrap();
        let out = tmp.path().join(format!("out-{copies}"));
        let (tree, out_s) = (tree.to_str().unwrap(), out.to_str().unwrap());
        let Some(peak) =
            crate::diff_memory::peak_kib(&["capture", "--proc-root", tree, "11672", "-o", out_s])
        else {
            return eprintln!("skipped: no /usr/bin/time");
        };
        let copied = std::fs::read(out.join("11672/smaps")).unwrap();
        assert!(copied == one.repeat(copies), "the smaps of {copies} copies recorded whole");
        eprintln!("capture of {} bytes of smaps: peak {peak} KiB", copied.len());
        peaks.push(peak);
    }
    let grew_kib = peaks[1].saturating_sub(peaks[0]);
    assert!(grew_kib < 8 << 10, "the peak grew by {grew_kib} KiB ({peaks:?} KiB)");
    std::fs::File::create(&smaps).unwrap().set_len(2 << 30).unwrap();
    let out = tmp.path().join("out-sparse");
    let run = crate::support::memtally()
        .args(["capture", "--proc-root", tree.to_str().unwrap(), "11672", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(5), "{err}");
    assert!(err.contains("smaps: larger than 256 MiB"), "{err}");
    assert!(!out.exists(), "a capture that recorded nothing leaves no directory");
}
