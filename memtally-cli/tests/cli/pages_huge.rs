//! One entry per huge page: `show --pages` on a child with 64 MiB of
//! transparent huge pages reads one pagemap entry and one kpageflags word
//! per huge page (its `read_cost`), and gives the figures a read of every
//! page's own flags gives.

use std::fs::File;
use std::os::unix::fs::FileExt;

use crate::pages::{frames_readable, num, rollup_of};
use crate::support::pages_child::page_child;
use crate::support::{run_json, MIB};

const PAGE: u64 = 4096;
const HUGE: u64 = 2 << 20;

/// A word of a page file (pagemap, kpageflags) at entry `i`.
fn word(f: &File, i: u64) -> u64 {
    let mut b = [0u8; 8];
    f.read_exact_at(&mut b, i * 8).unwrap();
    u64::from_le_bytes(b)
}

/// The page states of every resident page of `pid`, each page's own
/// kpageflags word read alone: present, huge, file, on an LRU list.
fn page_by_page(pid: u32) -> [u64; 4] {
    let pagemap = File::open(format!("/proc/{pid}/pagemap")).unwrap();
    let flags = File::open("/proc/kpageflags").unwrap();
    let mut got = [0u64; 4];
    for line in std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap().lines() {
        let range = line.split_whitespace().next().unwrap();
        let (s, e) = range.split_once('-').unwrap();
        let (s, e) = (u64::from_str_radix(s, 16).unwrap(), u64::from_str_radix(e, 16).unwrap());
        if e > 1 << 56 {
            continue; // [vsyscall]: not in pagemap
        }
        for page in s / PAGE..e / PAGE {
            let entry = word(&pagemap, page);
            if entry >> 63 == 0 {
                continue;
            }
            let f = word(&flags, entry & ((1 << 55) - 1));
            let bit = |b: u32| f & (1 << b) != 0;
            got[0] += PAGE;
            got[1] += if bit(22) || bit(17) { PAGE } else { 0 };
            got[2] += if bit(12) { 0 } else { PAGE };
            got[3] += if bit(5) { PAGE } else { 0 };
        }
    }
    got
}

#[test]
fn a_huge_page_costs_one_entry_and_gives_the_figures_of_every_page() {
    if !frames_readable() {
        return;
    }
    let mode = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled");
    if mode.as_deref().map_or(true, |m| m.contains("[never]")) {
        return eprintln!("skipped: transparent huge pages are off");
    }
    let Some(child) = page_child("thp", &[64 * MIB]) else { return };
    let pid = child.pids[0];
    let r = rollup_of(pid);
    let thp = r["anon_huge_pages"];
    if thp < 32 * MIB as u64 {
        return eprintln!(
            "skipped: the kernel backed {thp} bytes of 64 MiB with huge pages (fragmented memory)"
        );
    }
    let doc = run_json(&["show", &pid.to_string(), "--pages", "--format", "json"]);
    let t = &doc["totals"];
    let lru = |v: &serde_json::Value| num(v, "active") + num(v, "inactive");
    let read = [num(t, "present"), num(t, "huge"), num(t, "file"), lru(t)];
    assert_eq!(read, page_by_page(pid), "present, huge, file, lru: {doc}");
    assert_eq!(num(t, "huge"), thp, "every THP page, as AnonHugePages");
    // The cost: one pagemap entry and one flags word per huge page, one
    // per small page (read through gaps of at most 8 frames).
    let cost = &doc["read_cost"];
    let small = (r["rss"] - thp) / PAGE;
    let huge_pages = thp / HUGE;
    let pagemap = num(cost, "pagemap_entries");
    assert!(pagemap <= small + huge_pages + 16, "pagemap entries {pagemap}: {cost}");
    let flags = num(cost, "kpageflags_entries");
    assert!(flags <= 9 * small + huge_pages, "kpageflags entries {flags}: {cost}");
    assert!(flags < thp / PAGE / 4, "far below one word per 4 KiB page: {flags}");
    assert_eq!(num(cost, "kpagecount_entries"), 0, "page states read no map counts");
}
