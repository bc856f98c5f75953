//! Least privilege, proven on this kernel: memtally run as uid 65534 with
//! exactly one set of capabilities (setpriv: inheritable and ambient set
//! to it, everything else cleared; the test reads the set back from the
//! process's own CapEff) against a process of another user (an exec'd C
//! child of the root test harness), one test per set, each checking which
//! figures that set gives and which it leaves out, and that memtally says
//! so (the start line of `export`, the restricted note of `top`; neither
//! names page frames, which they never read: that row is checked on
//! pagemap itself).
//! docs/privileges.md has the table these tests prove. Needs root and
//! setpriv; elsewhere each test prints why it was skipped.

use std::process::{Command, Output};

use crate::support::lone::{lone, Lone};
use crate::support::MIB;

const CAP_DAC_READ_SEARCH: u32 = 2;
const CAP_SYS_PTRACE: u32 = 19;
const CAP_SYS_ADMIN: u32 = 21;
const CAP_PERFMON: u32 = 38;

fn cap_number(name: &str) -> u32 {
    match name {
        "dac_read_search" => CAP_DAC_READ_SEARCH,
        "sys_ptrace" => CAP_SYS_PTRACE,
        "sys_admin" => CAP_SYS_ADMIN,
        "perfmon" => CAP_PERFMON,
        _ => panic!("no such capability in these tests: {name}"),
    }
}

fn can_drop() -> bool {
    let is_root = unsafe { libc::geteuid() } == 0;
    if !is_root || Command::new("setpriv").arg("--version").output().is_err() {
        eprintln!("skipped: needs root and setpriv to run as uid 65534 with chosen capabilities");
        return false;
    }
    true
}

/// `program args` as uid 65534 with exactly `caps` (lower-case names
/// without `cap_`), effective through the ambient set.
pub(crate) fn with_caps(caps: &[&str], program: &str, args: &[&str]) -> Output {
    let mut inh = String::from("-all");
    for c in caps {
        inh.push_str(&format!(",+{c}"));
    }
    let mut cmd = Command::new("setpriv");
    cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups"]);
    cmd.arg(format!("--inh-caps={inh}"));
    if !caps.is_empty() {
        let amb: Vec<String> = caps.iter().map(|c| format!("+{c}")).collect();
        cmd.arg(format!("--ambient-caps={}", amb.join(",")));
    }
    cmd.arg(program).args(args).env_remove("COLUMNS").output().expect("setpriv runs")
}

pub(crate) fn memtally_with(caps: &[&str], args: &[&str]) -> Output {
    with_caps(caps, env!("CARGO_BIN_EXE_memtally"), args)
}

/// The effective capabilities a process started by [`with_caps`] holds.
fn effective(caps: &[&str]) -> u64 {
    let out = with_caps(caps, "cat", &["/proc/self/status"]);
    let status = String::from_utf8_lossy(&out.stdout).into_owned();
    let line = status.lines().find(|l| l.starts_with("CapEff:")).expect("CapEff in status");
    u64::from_str_radix(line["CapEff:".len()..].trim(), 16).unwrap()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// What one capability set gives memtally about root's child.
#[derive(Debug)]
struct Seen {
    /// `top --pid`'s PSS of the child (None: read from status only).
    pss: Option<u64>,
    /// `show PID` read the child's smaps (exit 0; 4 when denied).
    show: bool,
    /// The processes `memtally gpu` could not list the open files of.
    gpu_refused: u64,
    /// `export`'s start line (empty when nothing is left out).
    start_line: String,
}

fn seen(caps: &[&str], child: &Lone) -> Seen {
    let want: u64 = caps.iter().map(|c| 1u64 << cap_number(c)).sum();
    assert_eq!(effective(caps), want, "setpriv gives exactly {caps:?}");
    let pid = child.child.0.id().to_string();
    let top = memtally_with(caps, &["top", "--pid", &pid, "--format", "json"]);
    assert!(top.status.success(), "{}", err(&top));
    let doc: serde_json::Value = serde_json::from_slice(&top.stdout).unwrap();
    let row = &doc["processes"][0];
    assert_eq!(row["pid"].as_u64(), Some(child.child.0.id() as u64));
    assert!(row["rss"].as_u64().unwrap() >= 16 * MIB as u64, "RSS from status, always: {row}");
    let show = memtally_with(caps, &["show", &pid, "--format", "json"]);
    let show_ok = match show.status.code() {
        Some(0) => true,
        Some(4) => false,
        c => panic!("show exits {c:?}: {}", err(&show)),
    };
    let gpu = memtally_with(caps, &["gpu", "--format", "json"]);
    assert!(gpu.status.success(), "{}", err(&gpu));
    let gdoc: serde_json::Value = serde_json::from_slice(&gpu.stdout).unwrap();
    let re = regex::Regex::new(r"the open files of (\d+) process").unwrap();
    let gpu_refused = gdoc["notes"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|n| re.captures(n.as_str()?).map(|c| c[1].parse().unwrap()))
        .unwrap_or(0);
    let export = memtally_with(caps, &["export", "--pid", &pid]);
    assert!(export.status.success(), "{}", err(&export));
    Seen { pss: row["pss"].as_u64(), show: show_ok, gpu_refused, start_line: err(&export) }
}

const DETAIL: &str = "PSS, USS, swap, dirty and per-mapping figures";
const GPU: &str = "GPU memory";
const FRAMES: &str = "page frame numbers";

fn assert_says(s: &Seen, left_out: &[&str]) {
    assert!(!s.start_line.contains(FRAMES), "export never reads page frames: {}", s.start_line);
    for what in [DETAIL, GPU] {
        assert_eq!(
            s.start_line.contains(what),
            left_out.contains(&what),
            "the start line names {what} exactly when it is left out: {}",
            s.start_line
        );
    }
    assert!(s.start_line.lines().count() <= 1, "one line: {}", s.start_line);
}

fn detail_given(s: &Seen) {
    assert!(s.pss.is_some_and(|p| p >= 16 * MIB as u64), "PSS of the 16 MiB child: {s:?}");
    assert!(s.show, "show reads the child's smaps: {s:?}");
}

fn detail_refused(s: &Seen) {
    assert_eq!(s.pss, None, "no PSS, not a 0: {s:?}");
    assert!(!s.show, "show is refused: {s:?}");
}

#[test]
fn no_capability_gives_rss_only_and_says_what_is_left_out() {
    if !can_drop() {
        return;
    }
    let child = lone(16 * MIB);
    let s = seen(&[], &child);
    detail_refused(&s);
    assert!(s.gpu_refused >= 1, "{s:?}");
    assert_says(&s, &[DETAIL, GPU]);
    // top's note says the same.
    let table = memtally_with(&[], &["top", "--pid", &child.child.0.id().to_string()]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(text.contains("memtally's privileges leave out of other users' processes"), "{text}");
}

#[test]
fn cap_sys_ptrace_gives_the_smaps_figures_not_gpu() {
    if !can_drop() {
        return;
    }
    let child = lone(16 * MIB);
    let s = seen(&["sys_ptrace"], &child);
    detail_given(&s);
    // /proc/PID/fd is mode 0500: listing it needs CAP_DAC_READ_SEARCH too.
    assert!(s.gpu_refused >= 1, "{s:?}");
    assert_says(&s, &[GPU]);
}

#[test]
fn cap_perfmon_is_accepted_for_smaps_on_this_kernel() {
    if !can_drop() {
        return;
    }
    let child = lone(16 * MIB);
    let s = seen(&["perfmon"], &child);
    detail_given(&s);
    assert!(s.gpu_refused >= 1, "{s:?}");
    assert_says(&s, &[GPU]);
}

#[test]
fn cap_dac_read_search_alone_gives_nothing_more() {
    if !can_drop() {
        return;
    }
    let child = lone(16 * MIB);
    let s = seen(&["dac_read_search"], &child);
    detail_refused(&s);
    // It lists the fd directory, but fdinfo still asks the ptrace check.
    assert!(s.gpu_refused >= 1, "{s:?}");
    assert_says(&s, &[DETAIL, GPU]);
}

#[test]
fn cap_sys_ptrace_and_dac_read_search_give_every_figure_serve_publishes() {
    if !can_drop() {
        return;
    }
    let child = lone(16 * MIB);
    let alone = seen(&["sys_ptrace"], &child);
    let s = seen(&["sys_ptrace", "dac_read_search"], &child);
    detail_given(&s);
    assert!(
        s.gpu_refused < alone.gpu_refused,
        "with CAP_DAC_READ_SEARCH the open files of root's processes are listed: {s:?} vs {alone:?}"
    );
    assert_says(&s, &[]);
    assert!(s.start_line.is_empty(), "nothing serve publishes is left out: {}", s.start_line);
}

/// The page frame number in `pagemap` of the child's first resident page
/// of its anonymous mapping, read as uid 65534 with `caps`; None when the
/// file could not be read at all.
fn pfn_seen(caps: &[&str], pid: u32) -> Option<u64> {
    // A small reader in the shell's tools: the mapping's start from maps
    // (readable with the capability that reads smaps), then 8 bytes of
    // pagemap at start / 4096 * 8.
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
    let size = 16 * MIB as u64;
    let start = maps
        .lines()
        .find_map(|l| {
            let range = l.split_whitespace().next()?;
            let (a, b) = range.split_once('-')?;
            let (a, b) = (u64::from_str_radix(a, 16).ok()?, u64::from_str_radix(b, 16).ok()?);
            (b - a >= size && l.contains("rw-p") && l.split_whitespace().count() == 5).then_some(a)
        })
        .expect("the child's 16 MiB mapping");
    let skip = (start / 4096).to_string();
    let script =
        format!("dd if=/proc/{pid}/pagemap bs=8 skip={skip} count=1 status=none | od -An -tx8");
    let out = with_caps(caps, "sh", &["-c", &script]);
    let hex = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if hex.is_empty() {
        return None;
    }
    let entry = u64::from_str_radix(&hex, 16).unwrap();
    assert!(entry & (1 << 63) != 0, "the page is present: {entry:#x}");
    Some(entry & ((1 << 55) - 1))
}

#[test]
fn page_frame_numbers_need_cap_sys_admin() {
    if !can_drop() {
        return;
    }
    let child = lone(16 * MIB);
    let pid = child.child.0.id();
    assert_eq!(pfn_seen(&[], pid), None, "no capability: pagemap refused");
    assert_eq!(pfn_seen(&["sys_ptrace", "dac_read_search"], pid), Some(0), "PFN hidden as 0");
    let pfn = pfn_seen(&["sys_admin", "dac_read_search"], pid);
    assert!(pfn.is_some_and(|p| p > 0), "CAP_SYS_ADMIN shows the frame: {pfn:?}");
    let s = seen(&["sys_admin", "dac_read_search"], &child);
    detail_given(&s);
    assert_says(&s, &[GPU]);
}
