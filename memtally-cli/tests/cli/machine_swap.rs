//! Swap, zram and zswap in the machine picture: a zram device's RAM
//! (mm_stat's mem_used_total) and zswap's pool (meminfo `Zswap`) are lines
//! of their own, so they leave `unexplained`; swap total / used / cached
//! beside the waterfall; the same in `top`'s short picture and the
//! exporter. Live on a zram swap device the test makes (and removes) with
//! an exec'd child pushed into it by `MADV_PAGEOUT`, and on a recorded
//! tree with mm_stat files beside it.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::support::zram::{spawn_pager, ZramSwap};
use crate::support::{copied_fixture, run, run_json, Stopped, MIB};

/// A line's bytes in a machine JSON document.
fn line(doc: &Value, name: &str) -> Option<i64> {
    doc["lines"].as_array()?.iter().find(|l| l["name"] == name)?["bytes"].as_i64()
}

fn text(args: &[&str]) -> String {
    let out = run(args);
    assert!(out.status.success(), "memtally {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// `promtool check metrics` on `text`, where promtool is installed.
pub fn promtool_accepts(text: &str) {
    let promtool = Path::new("/usr/bin/promtool");
    if !promtool.exists() {
        assert!(std::env::var_os("CI").is_none(), "/usr/bin/promtool is missing");
        println!("skipped promtool: /usr/bin/promtool is not installed");
        return;
    }
    let mut check = Command::new(promtool)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    check.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let res = check.wait_with_output().unwrap();
    let said =
        format!("{}{}", String::from_utf8_lossy(&res.stdout), String::from_utf8_lossy(&res.stderr));
    assert!(res.status.success() && said.trim().is_empty(), "promtool: {said}");
}

/// The value of the sample `name{labels}` (labels as printed), if any.
fn sample(exposition: &str, name_labels: &str) -> Option<f64> {
    exposition.lines().find_map(|l| l.strip_prefix(name_labels)?.strip_prefix(' ')?.parse().ok())
}

/// Live: 384 MiB of pages that do not compress go out to a zram swap
/// device; the machine picture's `zram` line is Σ mm_stat mem_used_total,
/// and `unexplained` stays where it was (on main it grew by the pool).
#[test]
fn live_zram_pool_is_a_line_and_leaves_unexplained() {
    let zram = match ZramSwap::create(768 << 20) {
        Ok(z) => z,
        Err(why) => {
            println!("skipped: no zram swap device for the test: {why}");
            return;
        }
    };
    const LEN: usize = 384 * MIB;
    let mut pager = spawn_pager(LEN);
    let before = run_json(&["machine", "--format", "json"]);
    let frozen_before = frozen();
    assert!(pager.page_out(), "madvise(MADV_PAGEOUT) refused");
    let swapped = pager.vm_swap();
    if swapped < LEN as u64 * 3 / 4 {
        println!("skipped: only {swapped} of the child's {LEN} bytes went to swap");
        return;
    }
    let frozen_after = frozen();
    // Other zram users' devices move while memtally reads them: the line
    // is checked against the devices of the same read, and this test's
    // device (its only writer, the pager, stopped) against its mm_stat.
    let still = Stopped::new(&[pager.pid]);
    let ours_before = zram.mem_used_total();
    let after = run_json(&["machine", "--format", "json"]);
    let ours_after = zram.mem_used_total();
    drop(still);
    let listed = after["swap"]["zram"].as_array().unwrap();
    let want: u64 = listed.iter().map(|d| d["mem_used_total"].as_u64().unwrap()).sum();
    assert_eq!(line(&after, "zram"), Some(want as i64), "the zram line is Σ mem_used_total");
    let ours = listed.iter().find(|d| d["name"] == zram.name().as_str()).expect("our device");
    let ours = ours["mem_used_total"].as_u64().unwrap();
    assert!(
        (ours_before.min(ours_after)..=ours_before.max(ours_after)).contains(&ours),
        "our device's mem_used_total {ours}, mm_stat {ours_before} before, {ours_after} after"
    );
    assert!(zram.mem_used_total() > 0 || want >= LEN as u64 / 2, "the pages went to some zram");
    let grew = line(&after, "zram").unwrap() - line(&before, "zram").unwrap_or(0);
    assert!(grew >= (LEN / 2) as i64, "the pool grew by {grew} for {swapped} swapped bytes");

    // unexplained on the live machine moves by more than the pool while
    // other work runs (a line computed as a difference stops at 0 when a
    // process grew between the reads of meminfo and of its rollup, and
    // the remainder takes it). This machine's meminfo and mm_stat read
    // together, as a recording with no process, move only with the
    // machine: there unexplained stays put while the pool grows (on main
    // it grew by the pool), and is smaller by exactly the pool than
    // without the mm_stat files.
    let unexplained = |root: &Path| -> (i64, Option<i64>) {
        let doc = run_json(&["--proc-root", root.to_str().unwrap(), "machine", "--format", "json"]);
        (doc["unexplained"].as_i64().unwrap(), line(&doc, "zram"))
    };
    let (u0, z0) = unexplained(frozen_before.path());
    let (u1, z1) = unexplained(frozen_after.path());
    let pool = z1.unwrap() - z0.unwrap_or(0);
    assert!(pool >= (LEN / 2) as i64, "the recorded pool grew by {pool}");
    let moved = u1 - u0;
    assert!(
        moved.abs() < pool / 2,
        "unexplained moved by {moved} while the zram pool grew by {pool}: the pool is not in it"
    );
    std::fs::remove_dir_all(frozen_after.path().join("sys")).unwrap();
    let (u_without, _) = unexplained(frozen_after.path());
    assert_eq!(u_without - u1, z1.unwrap(), "without its mm_stat the pool is in unexplained");
    let sum: i64 =
        after["lines"].as_array().unwrap().iter().map(|l| l["bytes"].as_i64().unwrap()).sum();
    assert_eq!(sum, after["total"].as_i64().unwrap(), "the lines still add up to MemTotal");
    let swap = &after["swap"];
    assert!(swap["used"].as_u64().unwrap() >= swapped, "{swap}");
    let devices: Vec<&str> =
        swap["zram"].as_array().unwrap().iter().filter_map(|d| d["name"].as_str()).collect();
    assert!(devices.contains(&zram.name().as_str()), "{devices:?}");
    eprintln!(
        "zram line {want} (grew {grew}); recorded: unexplained {u0} -> {u1} (moved {moved}) while zram {z0:?} -> {z1:?}, {u_without} without the mm_stat; child swapped {swapped}"
    );

    // The table, top's short picture and the exporter say the same.
    let table = text(&["machine"]);
    assert!(table.contains("swap (from meminfo): total") && table.contains("\n  zram "), "{table}");
    assert!(
        table.contains(&format!("{})", zram.name())) || table.contains(&zram.name()),
        "{table}"
    );
    let top = text(&["top", "--top", "3"]);
    assert!(top.contains("swap (from meminfo)"), "{top}");
    assert!(top.lines().any(|l| l.starts_with("  swap ") && l.contains("zram ")), "{top}");
    let exposition = text(&["export", "--top", "3"]);
    let dev = format!("memtally_machine_zram_mem_used_bytes{{device=\"{}\"}}", zram.name());
    let got = sample(&exposition, &dev).expect("the device's sample");
    let now = zram.mem_used_total() as f64;
    assert!((got - now).abs() <= 1024.0 * 1024.0, "{dev} {got}, mm_stat now {now}");
    assert!(sample(&exposition, "memtally_machine_swap_used_bytes").unwrap() >= swapped as f64);
    promtool_accepts(&exposition);

    // A capture records the mm_stat files beside meminfo, and reads them back.
    let rec = tempfile::tempdir().unwrap();
    let out = rec.path().join("rec");
    let said = text(&["capture", "--pid", &pager.pid.to_string(), "-o", out.to_str().unwrap()]);
    assert!(said.contains("zram mm_stat files (sys/block)"), "{said}");
    let stat = std::fs::read_to_string(out.join("sys/block").join(zram.name()).join("mm_stat"))
        .expect("the device's mm_stat recorded");
    let recorded: i64 = stat.split_whitespace().nth(2).unwrap().parse().unwrap();
    let back = run_json(&["--proc-root", out.to_str().unwrap(), "machine", "--format", "json"]);
    let devices = back["swap"]["zram"].as_array().unwrap();
    let mine = devices.iter().find(|d| d["name"] == zram.name().as_str()).unwrap();
    assert_eq!(mine["mem_used_total"].as_i64(), Some(recorded));
    assert!(line(&back, "zram").unwrap() >= recorded);
    drop(pager);
    drop(zram);
}

/// This machine's meminfo and every zram device's mm_stat, read one
/// right after the other, as a recorded tree with no process.
fn frozen() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let meminfo = std::fs::read("/proc/meminfo").unwrap();
    for e in std::fs::read_dir("/sys/block").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let (Some(_), Ok(stat)) =
            (name.strip_prefix("zram"), std::fs::read(e.path().join("mm_stat")))
        {
            let d = tmp.path().join("sys/block").join(&name);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("mm_stat"), stat).unwrap();
        }
    }
    std::fs::write(tmp.path().join("meminfo"), meminfo).unwrap();
    tmp
}

const MM_STAT: &str =
    "314572800 104857600 115343360        0 115343360      512        0     1024        0\n";

/// A recorded tree with swap, zswap and two zram devices (one whose
/// mm_stat is not one), made from python3-mmap's: returns the tree and
/// the same tree without the zram files.
pub(crate) fn swap_tree() -> (tempfile::TempDir, String, tempfile::TempDir, String) {
    let mut trees = Vec::new();
    for with_zram in [true, false] {
        let (tmp, dir) = copied_fixture("python3-mmap");
        let meminfo = std::fs::read_to_string(dir.join("meminfo")).unwrap();
        let meminfo = meminfo
            .replace("SwapCached:            0 kB", "SwapCached:          300 kB")
            .replace("SwapTotal:             0 kB", "SwapTotal:       4194300 kB")
            .replace("SwapFree:              0 kB", "SwapFree:        3874300 kB")
            .replace("Zswap:                 0 kB", "Zswap:              2048 kB")
            .replace("Zswapped:              0 kB", "Zswapped:           8192 kB");
        std::fs::write(dir.join("meminfo"), meminfo).unwrap();
        if with_zram {
            for (dev, stat) in [("zram0", MM_STAT), ("zram1", "not a stat\n")] {
                let d = dir.join("sys/block").join(dev);
                std::fs::create_dir_all(&d).unwrap();
                std::fs::write(d.join("mm_stat"), stat).unwrap();
            }
            // Not a zram device: left alone.
            std::fs::create_dir_all(dir.join("sys/block/vda")).unwrap();
        }
        let s = dir.to_str().unwrap().to_string();
        trees.push((tmp, s));
    }
    let (b, bs) = trees.pop().unwrap();
    let (a, s) = trees.pop().unwrap();
    (a, s, b, bs)
}

/// Recorded: the zram line is mm_stat's mem_used_total to the byte and
/// unexplained is smaller by exactly that than on the same tree without
/// the device; zswap is a line; swap total / used / cached beside.
#[test]
fn recorded_zram_and_zswap_are_lines_and_swap_is_beside() {
    let (_a, with, _b, without) = swap_tree();
    let m = run_json(&["--proc-root", &with, "machine", "--format", "json"]);
    let plain = run_json(&["--proc-root", &without, "machine", "--format", "json"]);
    assert_eq!(line(&m, "zram"), Some(115343360));
    assert_eq!(line(&m, "zswap"), Some(2048 * 1024));
    assert_eq!(line(&plain, "zram"), None, "no device, no line");
    assert_eq!(
        m["unexplained"].as_i64().unwrap(),
        plain["unexplained"].as_i64().unwrap() - 115343360,
        "the pool left unexplained"
    );
    let s = &m["swap"];
    assert_eq!(s["total"].as_u64(), Some(4194300 * 1024));
    assert_eq!(s["used"].as_u64(), Some(320000 * 1024));
    assert_eq!(s["cached"].as_u64(), Some(300 * 1024));
    assert_eq!(s["zswapped"].as_u64(), Some(8192 * 1024));
    assert_eq!(s["zram"][0]["name"], "zram0");
    assert_eq!(s["zram"][0]["orig_data_size"].as_u64(), Some(314572800));
    assert_eq!(s["zram"][0]["huge_pages"].as_u64(), Some(1024));
    assert_eq!(s["zram_unreadable"], serde_json::json!(["zram1"]));
    let sum: i64 =
        m["lines"].as_array().unwrap().iter().map(|l| l["bytes"].as_i64().unwrap()).sum();
    assert_eq!(sum, m["total"].as_i64().unwrap());

    let table = text(&["--proc-root", &with, "machine"]);
    assert!(table.contains("swap (from meminfo): total 4.0G, used 312M, cached 300K"), "{table}");
    assert!(
        table.contains("zram 110M holding 300M (zram0, 3.0:1); zswap 2.0M holding 8.0M (4.0:1); zram1 unreadable"),
        "{table}"
    );
    let top = text(&["--proc-root", &with, "top"]);
    assert!(
        top.lines().any(|l| l.starts_with("  swap ") && l.contains("zswap 2.0M, zram 110M")),
        "{top}"
    );
    let csv = text(&["--proc-root", &with, "machine", "--format", "csv"]);
    assert!(csv.contains("\nzram,swap,115343360,false,"), "{csv}");

    let exposition = text(&["--proc-root", &with, "export"]);
    for (name, want) in [
        ("memtally_machine_zram_mem_used_bytes{device=\"zram0\"}", 115343360.0),
        ("memtally_machine_zram_orig_data_bytes{device=\"zram0\"}", 314572800.0),
        ("memtally_machine_zram_compr_data_bytes{device=\"zram0\"}", 104857600.0),
        ("memtally_machine_swap_total_bytes", (4194300u64 * 1024) as f64),
        ("memtally_machine_swap_used_bytes", (320000u64 * 1024) as f64),
        ("memtally_machine_swap_cached_bytes", (300u64 * 1024) as f64),
        ("memtally_machine_zswap_bytes", (2048u64 * 1024) as f64),
        ("memtally_machine_zswapped_bytes", (8192u64 * 1024) as f64),
        ("memtally_machine_waterfall_bytes{line=\"zram\",group=\"swap\"}", 115343360.0),
    ] {
        assert_eq!(sample(&exposition, name), Some(want), "{name}:\n{exposition}");
    }
    promtool_accepts(&exposition);
}
