//! `report --input` of saved vmmap text (or its JSON) and of a snapshot (a snapshot
//! file, `show`'s JSON, a report page) in memory bounded by the page
//! (issue 35, item 2): past what the page embeds, only the regions it
//! draws are kept, the rest summed, so the peak does not grow with the
//! input; the page's footprint, by type and in all, is
//! still `memtally vmmap`'s for the same file (a purge state counted
//! region by region), a snapshot process's box its PSS.

use std::path::Path;

use crate::bounded_inputs::{write_regions, MemCgroup};

/// 5,000 and 40,000 regions (0.6 and 4.9 MB) on a page of 200K: the
/// second in the peak of the first.
#[test]
fn report_of_large_vmmap_text_keeps_what_the_page_draws() {
    report_of_vmmap_text(&[5_000, 40_000], "200K", false);
}

/// The same reports as `vmmap --format json` (1.2 and 9.6 MB), read as
/// each region comes: the second in the peak of the first (before, read
/// whole: 12.1 → 82.2 MiB).
#[test]
fn report_of_large_vmmap_json_keeps_what_the_page_draws() {
    report_of_vmmap_text(&[5_000, 40_000], "200K", true);
}

/// 40,000 and 320,000 regions (4.9 and 39 MB) on a page of the default
/// budget (4M).
#[test]
#[ignore = "stress: generated inputs of 39 MB; scripts/stress/run.sh runs it"]
fn stress_report_of_large_vmmap_text_stays_flat() {
    report_of_vmmap_text(&[40_000, 320_000], "4M", false);
}

/// The stress run's reports as JSON (9.6 and 77 MB).
#[test]
#[ignore = "stress: generated inputs of 77 MB; scripts/stress/run.sh runs it"]
fn stress_report_of_large_vmmap_json_stays_flat() {
    report_of_vmmap_text(&[40_000, 320_000], "4M", true);
}

/// `vmmap --format json` of `input`: its footprint in all and by type.
fn vmmap_footprint(input: &Path) -> (u64, Vec<(String, u64)>) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_memtally"))
        .args(["vmmap", input.to_str().unwrap(), "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let by_type = doc["footprint"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["region_type"].as_str().unwrap().to_string(), t["footprint"].as_u64().unwrap()))
        .collect();
    (doc["footprint_total"]["footprint"].as_u64().unwrap(), by_type)
}

/// The `data-v` of the treemap box of `class` labelled `label`.
fn box_value(page: &str, class: &str, label: &str) -> Option<u64> {
    let at = page.find(&format!(r#"class="{class}""#))?;
    let rest = &page[at..];
    let rect = &rest[..rest.find('>')?];
    if !rect.contains(&format!(r#"data-label="{label}""#)) {
        return box_value(&rest[1..], class, label);
    }
    let v = &rect[rect.find(r#"data-v=""#)? + 8..];
    v[..v.find('"')?].parse().ok()
}

/// `report --input` of `write_regions` reports of each size in `sizes`
/// (as `vmmap --format json` when `json`) on a page of `max_size`: the
/// page's figures `vmmap`'s; with two sizes, the second's peak within
/// 8 MiB of the first's.
fn report_of_vmmap_text(sizes: &[usize], max_size: &str, json: bool) {
    let Some(cg) = MemCgroup::new("report-input", 1 << 30) else { return };
    let tmp = tempfile::tempdir().unwrap();
    let mut peaks = Vec::new();
    for &regions in sizes {
        let text = tmp.path().join(format!("{regions}.txt"));
        write_regions(&text, regions);
        let input = if json { tmp.path().join(format!("{regions}.json")) } else { text.clone() };
        if json {
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_memtally"))
                .args(["vmmap", text.to_str().unwrap(), "--format", "json"])
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            std::fs::write(&input, out.stdout).unwrap();
        }
        let page = tmp.path().join(format!("{regions}.html"));
        let args = ["report", "--input", input.to_str().unwrap(), "--max-size", max_size, "-o"];
        let args = [&args[..], &[page.to_str().unwrap()]].concat();
        let (code, err, peak) = cg.run(&args, Path::new("/dev/null"));
        assert_eq!(code, 0, "{err}");
        let html = std::fs::read_to_string(&page).unwrap();
        let (total, by_type) = vmmap_footprint(&text);
        // A twelfth of the regions volatile: not in the footprint.
        assert_eq!(total, regions as u64 * 16 * 1024 - (regions as u64).div_ceil(8) * 16 * 1024);
        assert_eq!(box_value(&html, "k-machine", "all processes"), Some(total), "the page's total");
        for (ty, fp) in &by_type {
            assert_eq!(box_value(&html, "k-category", ty), Some(*fp), "{ty}'s box");
        }
        assert!(html.contains(&format!("largest 12 of {regions} mappings")), "the detail's count");
        assert!(html.contains("the embedded snapshot leaves out the mappings of 1 process"));
        let size = std::fs::metadata(&input).unwrap().len();
        eprintln!("report --input of {regions} regions ({size} bytes): peak {peak} KiB");
        peaks.push((size, peak));
    }
    let [(small, small_peak), (big, big_peak)] = peaks[..] else { return };
    let grew_kib = big_peak.saturating_sub(small_peak);
    assert!(
        grew_kib < 8 << 10,
        "from {small} to {big} bytes of input the peak grew by {grew_kib} KiB ({small_peak} to {big_peak} KiB)"
    );
}

/// Two processes of 2,000 and of 16,000 regions each (0.8 and 6.6 MB)
/// and one small but largest, on a page of 200K: the second in the peak
/// of the first (before, 10.2 → 64.3 MiB).
#[test]
fn report_of_a_large_snapshot_file_keeps_what_the_page_draws() {
    report_of_snapshot_file(&[2_000, 16_000], "200K", Doc::Lines);
}

/// 16,000 and 128,000 regions a process (6.6 and 53 MB) on a page of the
/// default budget (4M).
#[test]
#[ignore = "stress: generated inputs of 53 MB; scripts/stress/run.sh runs it"]
fn stress_report_of_a_large_snapshot_file_stays_flat() {
    report_of_snapshot_file(&[16_000, 128_000], "4M", Doc::Lines);
}

/// The same snapshot as `show`'s JSON of several processes (one object,
/// read as it comes; 0.8 and 6.2 MB): the second in the peak of the
/// first (before, 9.9 → 65.3 MiB).
#[test]
fn report_of_large_show_json_keeps_what_the_page_draws() {
    report_of_snapshot_file(&[2_000, 16_000], "200K", Doc::Show);
}

/// [`report_of_large_show_json_keeps_what_the_page_draws`] at 16,000 and
/// 128,000 regions a process on a page of the default budget (4M).
#[test]
#[ignore = "stress: generated inputs of 51 MB; scripts/stress/run.sh runs it"]
fn stress_report_of_large_show_json_stays_flat() {
    report_of_snapshot_file(&[16_000, 128_000], "4M", Doc::Show);
}

/// The same snapshot embedded in a report page (of format 1; 2.2 and
/// 17.3 MB): the second in the peak of the first (before, 10.0 → 64.3
/// MiB).
#[test]
fn report_of_a_large_report_page_keeps_what_the_page_draws() {
    report_of_snapshot_file(&[2_000, 16_000], "200K", Doc::Page);
}

/// [`report_of_a_large_report_page_keeps_what_the_page_draws`] at 16,000
/// and 128,000 regions a process on a page of the default budget (4M).
#[test]
#[ignore = "stress: generated inputs of 140 MB; scripts/stress/run.sh runs it"]
fn stress_report_of_a_large_report_page_stays_flat() {
    report_of_snapshot_file(&[16_000, 128_000], "4M", Doc::Page);
}

/// The document `report --input` is given: the snapshot file
/// [`write_snapshot`] writes, or the same snapshot as `show`'s JSON, or
/// embedded (whole) in a report page.
#[derive(Clone, Copy, Debug)]
enum Doc {
    Lines,
    Show,
    Page,
}

/// Writes at `path` the [`write_snapshot`] file at `lines` as `doc`.
fn write_doc(path: &Path, lines: &Path, doc: Doc) {
    match doc {
        Doc::Lines => std::fs::rename(lines, path).unwrap(),
        Doc::Show => write_show_of(path, lines),
        Doc::Page => {
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_memtally"))
                .args(["report", "--input", lines.to_str().unwrap(), "--max-size", "1G", "-o"])
                .arg(path)
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        }
    }
}

/// Writes the snapshot file at `lines` as `show --format json` of its
/// processes writes them: each with its regions, in one object.
fn write_show_of(path: &Path, lines: &Path) {
    use std::io::{BufRead, Write};
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    write!(f, r#"{{"by":"category","categories":[],"processes":["#).unwrap();
    let (mut first_process, mut first_region) = (true, true);
    for line in std::io::BufReader::new(std::fs::File::open(lines).unwrap()).lines() {
        let v: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
        if let Some(r) = v.get("region") {
            if first_region {
                let comma = if first_process { "" } else { "," };
                write!(f, r#"{comma}{{"regions":["#).unwrap();
                (first_process, first_region) = (false, false);
            } else {
                write!(f, ",").unwrap();
            }
            serde_json::to_writer(&mut f, r).unwrap();
        } else if let Some(p) = v.get("process") {
            write!(f, "]").unwrap();
            for key in ["pid", "comm", "command", "source", "totals"] {
                write!(f, r#","{key}":"#).unwrap();
                serde_json::to_writer(&mut f, &p[key]).unwrap();
            }
            write!(f, "}}").unwrap();
            first_region = true;
        }
    }
    write!(f, "]}}").unwrap();
    f.flush().unwrap();
}

/// A region's PSS: a page or more, so boxes tie and differ.
fn pss_of(process: u64, n: u64) -> u64 {
    4096 * (1 + (n * 7 + process) % 13)
}

/// Writes a snapshot file of three processes: pid 1 of 50 regions of
/// 1 GiB (the largest, its regions the page embeds), pids 2 and 3 of
/// `regions` each (half heap, half file code); their PSS totals returned.
fn write_snapshot(path: &Path, regions: u64) -> Vec<u64> {
    use std::io::Write;
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(
        f,
        r#"{{"memtally_snapshot":2,"kind":"linux","time":null,"unix_time":null,"host":null,"kernel":null,"proc_root":null,"machine":null}}"#
    )
    .unwrap();
    let mut totals = Vec::new();
    for pid in 1..=3u64 {
        let count = if pid == 1 { 50 } else { regions };
        let mut sums = [(0u64, 0u64); 2];
        for n in 0..count {
            let pss = if pid == 1 { 1 << 30 } else { pss_of(pid, n) };
            let (cat, path) = match n % 2 {
                0 => ("heap", "null".to_string()),
                _ => ("file_code", format!(r#""/usr/lib/lib{pid}-{}.so""#, n % 300)),
            };
            sums[(n % 2) as usize].0 += 1;
            sums[(n % 2) as usize].1 += pss;
            let start = 0x1000_0000 + n * (4 << 20);
            writeln!(
                f,
                r#"{{"region":{{"start":{start},"end":{},"perms":"rw-p","path":{path},"category":"{cat}","offset":0,"inode":{n},"size":{pss},"rss":{pss},"pss":{pss},"private_dirty":4096,"anonymous":4096}}}}"#,
                start + pss,
            )
            .unwrap();
        }
        let total: u64 = sums.iter().map(|s| s.1).sum();
        let group = |key: &str, (regions, pss): (u64, u64)| {
            format!(
                r#"{{"category":"{key}","regions":{regions},"size":{pss},"rss":{pss},"pss":{pss},"private_dirty":{}}}"#,
                regions * 4096
            )
        };
        writeln!(
            f,
            r#"{{"process":{{"pid":{pid},"ppid":null,"user":"u{pid}","comm":"p{pid}","command":"p{pid}","source":"smaps","totals":{{"size":{total},"rss":{total},"pss":{total},"private_dirty":{}}},"categories":[{},{}]}}}}"#,
            count * 4096,
            group("heap", sums[0]),
            group("file_code", sums[1])
        )
        .unwrap();
        totals.push(total);
    }
    let all: u64 = totals.iter().sum();
    writeln!(
        f,
        r#"{{"end":{{"processes":3,"totals":{{"rss":{all},"pss":{all}}},"categories":[],"notes":[],"shmem_swap":[null,null,null]}}}}"#
    )
    .unwrap();
    f.flush().unwrap();
    totals
}

/// `report --input` of `write_snapshot` files of each size in `sizes` on
/// a page of `max_size`: each process's box its PSS, each detail's count
/// every region, the regions of the largest process embedded; with two
/// sizes, the second's peak within 8 MiB of the first's. Given as `doc`.
fn report_of_snapshot_file(sizes: &[u64], max_size: &str, doc: Doc) {
    let name = format!("report-{doc:?}-{}", sizes[0]).to_lowercase();
    let Some(cg) = MemCgroup::new(&name, 1 << 30) else { return };
    let tmp = tempfile::tempdir().unwrap();
    let mut peaks = Vec::new();
    for &regions in sizes {
        let lines = tmp.path().join(format!("{regions}.jsonl"));
        let totals = write_snapshot(&lines, regions);
        let input = tmp.path().join(format!("{regions}.{doc:?}"));
        write_doc(&input, &lines, doc);
        let page = tmp.path().join(format!("{regions}.html"));
        let args = ["report", "--input", input.to_str().unwrap(), "--max-size", max_size, "-o"];
        let args = [&args[..], &[page.to_str().unwrap()]].concat();
        // Its own file for standard output: beside it, standard error's
        // (`/dev/null`'s is shared by the tests run at once).
        let (code, err, peak) = cg.run(&args, &tmp.path().join(format!("{regions}.out")));
        assert_eq!(code, 0, "{err}");
        let html = std::fs::read_to_string(&page).unwrap();
        let all: u64 = totals.iter().sum();
        assert_eq!(box_value(&html, "k-machine", "all processes"), Some(all), "the page's total");
        for (pid, total) in (1..).zip(&totals) {
            let label = format!("p{pid} ({pid})");
            assert_eq!(box_value(&html, "k-process", &label), Some(*total), "{label}'s box");
        }
        assert!(html.contains("largest 12 of 50 mappings"), "the largest process's detail");
        let count = format!("largest 12 of {regions} mappings");
        assert_eq!(html.matches(&count).count(), 2, "the other two's count of every region");
        let note = "the embedded snapshot leaves out the mappings of 2 processes";
        assert!(html.contains(note), "{}", &html[html.find("leaves out").unwrap_or(0)..][..200]);
        assert!(html.contains(r#""path":"/usr/lib/lib1-49.so""#), "the largest's regions embedded");
        assert!(!html.contains(r#""path":"/usr/lib/lib2-1.so""#), "the others' not");
        let size = std::fs::metadata(&input).unwrap().len();
        eprintln!("report --input of {doc:?} ({size} bytes): peak {peak} KiB");
        peaks.push((size, peak));
    }
    let [(small, small_peak), (big, big_peak)] = peaks[..] else { return };
    let grew_kib = big_peak.saturating_sub(small_peak);
    assert!(
        grew_kib < 8 << 10,
        "from {small} to {big} bytes of input the peak grew by {grew_kib} KiB ({small_peak} to {big_peak} KiB)"
    );
}
