//! `memtally files`: every mapped file's figures summed over the
//! processes that map it. Live: a 4 MiB file three exec'd C children map
//! (two shared, one private that writes half of it), each file's figures
//! against the children's own smaps; recorded: the two chromium
//! recordings side by side with `smem -m` on the same tree; at 80 columns.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::support::lone::build;
use crate::support::{memtally, repo_path, run_json, Killed};

/// Maps the file `argv[1]` (`argv[2]` bytes) shared or private
/// (`argv[3]`), reads every page, and with `private` writes the first
/// half (private copies); then says so and sleeps.
const MAPPER_C: &str = r#"
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
int main(int argc, char **argv) {
    size_t len = strtoull(argv[2], 0, 10);
    int private = strcmp(argv[3], "private") == 0;
    int fd = open(argv[1], private ? O_RDONLY : O_RDWR);
    if (fd < 0) return 1;
    char *p = mmap(0, len, PROT_READ | PROT_WRITE, private ? MAP_PRIVATE : MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) return 1;
    volatile char sum = 0;
    for (size_t off = 0; off < len; off += 4096) sum += p[off];
    if (private) memset(p, 0x5a, len / 2);
    if (write(1, "ready\n", 6) != 6) return 1;
    for (;;) pause();
}
"#;

const LEN: usize = 4 << 20;

/// Starts the mapper on `file` and waits until it has mapped it.
fn mapper(exe: &Path, file: &Path, mode: &str) -> Killed {
    let mut child = Command::new(exe)
        .arg(file)
        .arg(LEN.to_string())
        .arg(mode)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut ready = [0u8; 6];
    child.stdout.as_mut().unwrap().read_exact(&mut ready).unwrap();
    Killed(child)
}

/// One process's (pss, rss, uss, swap_pss) of the mappings of `path`, in
/// bytes, from its smaps with a plain loop (independent of memtally).
fn smaps_of(pid: u32, path: &str) -> [u64; 4] {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps")).unwrap();
    let mut sums = [0u64; 4];
    let mut inside = false;
    for line in text.lines() {
        let first = line.split_whitespace().next().unwrap_or("");
        if first.contains('-') && first.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
            let name: Vec<&str> = line.split_whitespace().skip(5).collect();
            inside = name.join(" ") == path;
            continue;
        }
        let Some((key, value)) = line.split_once(':') else { continue };
        let kb = || value.trim().trim_end_matches(" kB").trim().parse::<u64>().unwrap_or(0) * 1024;
        if inside {
            match key {
                "Pss" => sums[0] += kb(),
                "Rss" => sums[1] += kb(),
                "Private_Clean" | "Private_Dirty" => sums[2] += kb(),
                "SwapPss" => sums[3] += kb(),
                _ => {}
            }
        }
    }
    sums
}

fn row<'a>(doc: &'a Value, path: &str) -> &'a Value {
    let files = doc["files"].as_array().expect("files");
    files.iter().find(|f| f["path"] == path).unwrap_or_else(|| panic!("no row {path}: {doc}"))
}

#[test]
fn a_file_three_children_map_sums_their_smaps_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let deep = dir.path().join("a-rather-long-directory-name-so-the-path-must-be-cut");
    std::fs::create_dir(&deep).unwrap();
    let file = deep.join("mapped-by-three.bin");
    std::fs::write(&file, vec![7u8; LEN]).unwrap();
    let (_build, exe) = build("file_mapper", MAPPER_C);
    let kids = [
        mapper(&exe, &file, "shared"),
        mapper(&exe, &file, "shared"),
        mapper(&exe, &file, "private"),
    ];
    let pids: Vec<String> = kids.iter().map(|k| k.0.id().to_string()).collect();
    let path = file.to_str().unwrap();
    let doc = run_json(&["files", "--pid", &pids.join(","), "--all", "--format", "json"]);
    let expected: Vec<[u64; 4]> = kids.iter().map(|k| smaps_of(k.0.id(), path)).collect();
    let r = row(&doc, path);
    assert_eq!(r["processes"], 3);
    assert_eq!(r["backing"], "file");
    let sum = |i: usize| expected.iter().map(|e| e[i]).sum::<u64>();
    assert_eq!(r["pss"], sum(0), "PSS: the children's smaps, summed");
    assert_eq!(r["uss"], sum(2), "USS: their private pages of it");
    assert_eq!(r["swap_pss"], sum(3));
    assert_eq!(r["rss"], Value::Null, "RSS counts a page once per process: not summed");
    // The file's pages once (4 MiB) and the private child's copies of
    // half of it (2 MiB), each mapping's PSS rounded down to a kB.
    let pss = sum(0);
    assert!(pss <= 6 << 20 && pss + 3 * 1024 >= 6 << 20, "PSS {pss}: 6 MiB, less rounding");
    assert_eq!(sum(2), 2 << 20, "the private child's copies");
    for (kid, e) in kids.iter().zip(&expected) {
        let pid = kid.0.id();
        let m = r["mappers"].as_array().unwrap().iter().find(|m| m["pid"] == pid).expect("mapper");
        assert_eq!(
            [&m["pss"], &m["rss"], &m["uss"], &m["swap_pss"]],
            e.map(Value::from).each_ref()
        );
        assert_eq!(e[1], LEN as u64, "each child has all of it resident");
        assert!(m["command"].as_str().unwrap().contains("file_mapper"), "{m}");
    }
    // Fitted to 80 columns, the path is cut in its middle and keeps its
    // name; the processes under it are there with --pids.
    let out = memtally()
        .args(["files", "--pid", &pids.join(","), "--files-only", "--pids"])
        .env("COLUMNS", "80")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{text}");
    for line in text.lines() {
        assert!(line.chars().count() <= 80, "wider than 80: {line:?}");
    }
    let file_line = text.lines().find(|l| l.ends_with("/mapped-by-three.bin")).expect(&text);
    assert!(file_line.contains('…') && file_line.contains("  3  "), "{file_line}");
    for pid in &pids {
        assert!(text.lines().any(|l| l.contains(&format!("  {pid} "))), "pid {pid}: {text}");
    }
    assert!(!text.contains("[heap]") && !text.contains("[anonymous]"), "--files-only: {text}");
    assert!(text.lines().next().unwrap().contains(" files in 3 processes;"), "{text}");
}

/// The two chromium recordings (browser and renderer of one browser)
/// copied into one tree: the files both map have two processes.
fn chromium_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let proc = dir.path().join("proc");
    std::fs::create_dir(&proc).unwrap();
    for name in ["chromium-browser", "chromium-renderer"] {
        let from =
            Path::new(&repo_path(&format!("testdata/fixtures/linux/{name}/proc"))).to_path_buf();
        for e in std::fs::read_dir(&from).unwrap() {
            let e = e.unwrap();
            let to = proc.join(e.file_name());
            if e.path().is_dir() {
                std::fs::create_dir(&to).unwrap();
                for f in std::fs::read_dir(e.path()).unwrap() {
                    let f = f.unwrap();
                    std::fs::copy(f.path(), to.join(f.file_name())).unwrap();
                }
            } else {
                std::fs::copy(e.path(), to).unwrap();
            }
        }
    }
    dir
}

/// smem's name of a mapping as `smem -m` prints it: the first word of its
/// path (smem splits the smaps line at spaces, so `Login Data` and `Login
/// Data For Account` are one `Login` to it, and ` (deleted)` goes), in at
/// most 40 characters (its `%-40.40s`), and `<anonymous>` for memory
/// without a name.
fn smem_name(path: &str) -> String {
    let name = match path {
        "[anonymous]" => "<anonymous>",
        p => p.split(' ').next().unwrap_or(p),
    };
    name.chars().take(40).collect()
}

#[test]
fn recorded_chromium_files_match_smem_m_on_the_same_tree() {
    let tree = chromium_tree();
    let proc = tree.path().join("proc");
    let doc =
        run_json(&["--proc-root", proc.to_str().unwrap(), "files", "--all", "--format", "json"]);
    assert_eq!(doc["processes"], 2);
    let both = row(&doc, "/usr/lib/x86_64-linux-gnu/libc.so.6");
    assert_eq!(both["processes"], 2, "both map libc");
    // Not `-a`: piped, smem sizes its columns for 80 and cuts names anyway.
    let Ok(smem) = Command::new("smem")
        .args(["-m", "-n", "-H", "-c", "map pids pss uss", "-S"])
        .arg(tree.path())
        .stderr(Stdio::null())
        .output()
    else {
        eprintln!("skipped: smem is not installed (apt-get install smem)");
        return;
    };
    // Each line: the name in 40 columns, then PIDs, PSS and USS in kB.
    // Names that look alike in 40 characters are summed on both sides.
    type Sums = std::collections::HashMap<String, [u64; 3]>;
    let mut theirs = Sums::new();
    for line in String::from_utf8_lossy(&smem.stdout).lines().filter(|l| l.len() > 40) {
        let (name, nums) = line.split_at(40);
        let nums: Vec<u64> = nums.split_whitespace().map(|w| w.parse().unwrap()).collect();
        let e = theirs.entry(name.trim_end().to_string()).or_default();
        e[0] = e[0].max(nums[0]);
        e[1] += nums[1] * 1024;
        e[2] += nums[2] * 1024;
    }
    assert!(theirs.len() > 100, "smem -m lists the mappings: {theirs:?}");
    let mut ours = Sums::new();
    for f in doc["files"].as_array().unwrap() {
        let e = ours.entry(smem_name(f["path"].as_str().unwrap())).or_default();
        e[0] = e[0].max(f["processes"].as_u64().unwrap());
        e[1] += f["pss"].as_u64().unwrap();
        e[2] += f["uss"].as_u64().unwrap();
    }
    for (name, sums) in &ours {
        let t = theirs.get(name).unwrap_or_else(|| panic!("smem -m has no {name:?}"));
        assert_eq!(sums, t, "{name}: processes, PSS, USS");
    }
    assert_eq!(ours.len(), theirs.len(), "the same mappings");
}

#[test]
fn recorded_files_fit_80_columns_and_sort_min_top_and_csv_hold() {
    let tree = chromium_tree();
    let proc = tree.path().join("proc");
    let root = proc.to_str().unwrap();
    let out = memtally()
        .args(["--proc-root", root, "files", "--pids", "--top", "5"])
        .env("COLUMNS", "80")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    for line in text.lines() {
        assert!(line.chars().count() <= 80, "wider than 80: {line:?}");
    }
    assert!(text.contains("(170 more not shown"), "{text}");
    assert!(text.lines().any(|l| l.contains("11755 chromium --type=renderer")), "{text}");
    let by_uss = run_json(&[
        "--proc-root",
        root,
        "files",
        "--sort",
        "uss",
        "--min",
        "1M",
        "--all",
        "--format",
        "json",
    ]);
    let uss: Vec<u64> =
        by_uss["files"].as_array().unwrap().iter().map(|f| f["uss"].as_u64().unwrap()).collect();
    assert!(!uss.is_empty() && uss.windows(2).all(|w| w[0] >= w[1]), "{uss:?}");
    assert!(uss.iter().all(|&u| u >= 1 << 20), "{uss:?}");
    assert_eq!(
        by_uss["files_omitted"].as_u64().unwrap() as usize + uss.len(),
        by_uss["files_total"].as_u64().unwrap() as usize
    );
    let csv = memtally()
        .args(["--proc-root", root, "files", "--top", "3", "--format", "csv"])
        .output()
        .unwrap();
    let csv = String::from_utf8(csv.stdout).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("path,backing,processes,regions,pss,uss,swap_pss,pss_dirty,private_clean,private_dirty,rss,pids")
    );
    assert!(
        lines.next().unwrap().starts_with("/usr/lib/chromium/chromium,file,2,12,109052928,"),
        "{csv}"
    );
}

/// On a terminal, `files` fits the screen: the heading stays on it, as
/// many rows as its height leaves, the total and what was left out.
#[test]
fn files_fit_a_terminal_at_80x24_and_200x50() {
    use crate::support::tmux::Tmux;
    if !Tmux::available() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    let tree = chromium_tree();
    let proc = tree.path().join("proc");
    for (w, h) in [(80u16, 24u16), (200, 50)] {
        let t = Tmux::start(w, h, &crate::support::repo());
        let bin = env!("CARGO_BIN_EXE_memtally");
        t.line(&format!("clear; {bin} --proc-root {} files", proc.display()));
        t.wait_for("the prompt after files", |s| s.trim_end().ends_with("\n$"));
        let s = t.settled();
        let lines: Vec<&str> = s.trim_end().lines().collect();
        assert!(lines.len() <= h as usize, "{w}x{h}: {} lines:\n{s}", lines.len());
        let heading =
            lines.iter().position(|l| l.starts_with("175 files and kinds in 2 processes"));
        assert!(heading.is_some(), "{w}x{h}: the heading is on the screen:\n{s}");
        assert!(lines.iter().all(|l| l.chars().count() <= w as usize), "{w}x{h}:\n{s}");
        let rows = lines
            .iter()
            .filter(|l| l.ends_with(" /usr/lib/chromium/chromium") || l.contains("  /"))
            .count();
        assert!(rows >= (h as usize).saturating_sub(10), "{w}x{h}: {rows} rows:\n{s}");
        assert!(lines.iter().any(|l| l.contains("more not shown; totals include them")), "{s}");
        assert!(lines.iter().any(|l| l.ends_with("  total")), "{w}x{h}:\n{s}");
    }
}
