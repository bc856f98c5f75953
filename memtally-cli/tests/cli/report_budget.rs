//! The page keeps its size budget however many boxes its input has: a
//! recorded process of 60,000 mappings and a vmmap text of 200,000
//! regions, all of one size (equal values once kept every one of them:
//! a 19.9 MB page of 60,053 boxes, and 66.7 MB of 201,802), are folded
//! into "N smaller" boxes at every level until the page fits.

use std::fmt::Write as _;
use std::path::Path;

use regex::Regex;

use crate::support::repo_path;

const BUDGET: u64 = 4 << 20;

/// The page's size and its treemap boxes, after checking the run.
fn page_of(args: &[&str], dir: &Path) -> (u64, String) {
    let page = crate::report::report(dir, "big.html", args);
    let html = std::fs::read_to_string(&page).unwrap();
    (html.len() as u64, html)
}

fn boxes(html: &str) -> usize {
    html.matches(r#"<rect id="n"#).count()
}

/// "N smaller" boxes' counts, added up.
fn folded(html: &str) -> usize {
    Regex::new(r#"class="k-smaller"[^>]*data-label="(\d+) smaller""#)
        .unwrap()
        .captures_iter(html)
        .map(|c| c[1].parse::<usize>().unwrap())
        .sum()
}

#[test]
fn a_process_of_60000_mappings_gives_a_page_within_its_budget() {
    let dir = tempfile::tempdir().unwrap();
    let proc = dir.path().join("proc");
    let pid = proc.join("4242");
    std::fs::create_dir_all(&pid).unwrap();
    let from = repo_path("testdata/fixtures/linux/chromium-browser/proc");
    std::fs::copy(Path::new(&from).join("meminfo"), proc.join("meminfo")).unwrap();
    for f in ["cmdline", "comm", "status", "stat", "statm"] {
        std::fs::copy(Path::new(&from).join("11672").join(f), pid.join(f)).unwrap();
    }
    let (mut maps, mut smaps) = (String::new(), String::new());
    for i in 0..60_000u64 {
        let a = 0x1_0000_0000 + i * 0x2000;
        let line = format!("{a:x}-{:x} rw-p 00000000 00:00 0 \n", a + 0x1000);
        maps.push_str(&line);
        smaps.push_str(&line);
        let _ = write!(
            smaps,
            "Size: 4 kB\nRss: 4 kB\nPss: 4 kB\nPss_Dirty: 4 kB\nShared_Clean: 0 kB\nShared_Dirty: 0 kB\nPrivate_Clean: 0 kB\nPrivate_Dirty: 4 kB\nAnonymous: 4 kB\nSwap: 0 kB\nSwapPss: 0 kB\n"
        );
    }
    std::fs::write(pid.join("maps"), maps).unwrap();
    std::fs::write(pid.join("smaps"), smaps).unwrap();
    let (size, html) = page_of(&["--proc-root", proc.to_str().unwrap()], dir.path());
    assert!(size <= BUDGET, "a page of {size} bytes, over the 4M budget");
    let n = boxes(&html);
    assert!((100..=20_000).contains(&n), "{n} boxes");
    // What was folded is counted: the boxes drawn plus the folded ones
    // are every mapping, category, process and the machine.
    assert!(folded(&html) > 40_000, "{} folded", folded(&html));
    assert!(html.contains(r#"data-pid="4242""#), "the process is drawn");
}

/// 30,000 regions of one size: a page of 30,000 boxes (about 10 MB)
/// unless they are folded.
#[test]
fn a_vmmap_of_30000_regions_gives_a_page_within_its_budget() {
    vmmap_page_within_budget(30_000);
}

#[test]
#[ignore = "stress: a generated 200,000-region vmmap; scripts/stress/run.sh runs it"]
fn stress_a_vmmap_of_200000_regions_gives_a_page_within_its_budget() {
    vmmap_page_within_budget(200_000);
}

/// The report of a vmmap text with `regions` more regions of 16K each:
/// within the budget, at most 20,000 boxes, the rest folded.
fn vmmap_page_within_budget(regions: u64) {
    let dir = tempfile::tempdir().unwrap();
    let fixture =
        std::fs::read_to_string(repo_path("testdata/fixtures/vmmap/04_modern_gpu_purge.txt"))
            .unwrap();
    let mut text = String::new();
    let mut writable = false;
    for line in fixture.lines() {
        text.push_str(line);
        text.push('\n');
        writable |= line.starts_with("==== Writable regions");
        if writable && line.starts_with("REGION TYPE") {
            writable = false;
            for i in 0..regions {
                let a = 0x2_0000_0000 + i * 0x4000;
                let _ = writeln!(
                    text,
                    "MALLOC_SMALL                {a:x}-{:x}    [   16K    16K    16K     0K] rw-/rwx SM=PRV          DefaultMallocZone_0x1000",
                    a + 0x4000
                );
            }
        }
    }
    let input = dir.path().join("big.vmmap.txt");
    std::fs::write(&input, text).unwrap();
    let (size, html) = page_of(&["--input", input.to_str().unwrap()], dir.path());
    assert!(size <= BUDGET, "a page of {size} bytes, over the 4M budget");
    let n = boxes(&html);
    assert!((100..=20_000).contains(&n), "{n} boxes");
    assert!(folded(&html) as u64 > regions * 3 / 4, "{} folded", folded(&html));
    assert!(html.contains("MALLOC_SMALL"), "the region type is drawn");
}
