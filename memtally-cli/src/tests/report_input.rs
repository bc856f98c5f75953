//! `report --input` of saved vmmap text keeps, past what the page
//! embeds, only the regions the page draws (issue 35, item 2): the page
//! is byte for byte the one drawn from every region, at budgets that
//! fold a little and a lot, with boxes of equal size across types and
//! regions of no footprint (volatile, or clean).

use memtally_core::analyze::report::{PageRoom, ReportBy};
use memtally_core::usecase::report::from_file;

use crate::render::html::{page_room, render, PageInfo};

/// A report of `regions` lines: eight types, each region's sizes one of
/// a few (so boxes tie), a purge state on some, a detail on some.
fn write_report(path: &std::path::Path, regions: usize) {
    use std::fmt::Write as _;
    const TYPES: [&str; 8] = [
        "MALLOC_SMALL",
        "IOSurface",
        "VM_ALLOCATE",
        "__DATA",
        "Stack",
        "IOAccelerator",
        "MALLOC_TINY",
        "mapped file",
    ];
    const KIB: [u64; 5] = [0, 4, 16, 64, 1024];
    let mut s = String::from("Process:         Tied [77]\nPath:            /Applications/Tied.app\n\n==== Writable regions for process 77\nREGION TYPE                      START - END             [ VSIZE  RSDNT  DIRTY   SWAP] PRT/MAX SHRMOD PURGE    REGION DETAIL\n");
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    for i in 0..regions as u64 {
        let a = 0x1_0000_0000 + i * 0x10_0000;
        // Types come in runs, so the first-seen order is not the table's.
        let ty = TYPES[((i / 37 + next(3)) % 8) as usize];
        let rss = KIB[next(5) as usize];
        let dirty = KIB[next(5) as usize].min(rss);
        let swap = if next(6) == 0 { KIB[next(4) as usize] } else { 0 };
        let purge = ["PURGE=V", "PURGE=N", "PURGE=E", "       ", "       "][next(5) as usize];
        let detail = ["", "/usr/lib/dyld", "thread 3"][next(3) as usize];
        let _ = writeln!(
            s,
            "{ty:<22} {a:016x}-{:016x} [ 1024K {rss:>5}K {dirty:>5}K {swap:>5}K] rw-/rwx SM=PRV {purge}  {detail}",
            a + 0x10_0000,
        );
    }
    std::fs::write(path, s).unwrap();
}

#[test]
fn a_page_of_the_regions_it_draws_is_the_page_of_them_all() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tied.txt");
    write_report(&path, 3_000);
    let all = PageRoom { boxes: usize::MAX, largest: usize::MAX, embedded: u64::MAX };
    let whole = from_file(&path, ReportBy::Program, all).unwrap();
    assert!(whole.regions_left.is_empty());
    assert_eq!(whole.snapshot.processes[0].regions.len(), 3_000);
    for max_size in [40 << 10, 120 << 10, 400 << 10, 4 << 20] {
        let info = PageInfo { input: "tied.txt".into(), redacted: false, max_size };
        let kept = from_file(&path, ReportBy::Program, page_room(max_size)).unwrap();
        let left = kept.regions_left.first();
        if max_size < 4 << 20 {
            // What the page embeds is past half the budget: the read kept
            // only what the page draws.
            let left = left.unwrap_or_else(|| panic!("{max_size}: all kept"));
            assert_eq!(left.regions, 3_000);
            let n = kept.snapshot.processes[0].regions.len();
            assert!(n <= page_room(max_size).boxes + 12, "{max_size}: {n} kept");
        } else {
            assert!(left.is_none(), "the page embeds them all: all kept");
        }
        assert_eq!(kept.snapshot.processes[0].categories, whole.snapshot.processes[0].categories);
        let (a, b) = (render(&kept, &info, None), render(&whole, &info, None));
        let at = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
        assert!(
            a == b,
            "the page of {max_size} bytes differs at byte {at}: {:?} against {:?}",
            &a[at.saturating_sub(80)..(at + 80).min(a.len())],
            &b[at.saturating_sub(80)..(at + 80).min(b.len())]
        );
    }
}
