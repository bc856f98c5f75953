//! The parse of a regular file in parts on several threads
//! (`vmmap::split`) against the sequential one: same document, same
//! tally, same count check, wherever the cuts land (header, region list,
//! a section break, the summary and MALLOC ZONE tables, every line a part
//! of its own), on every fixture and on a generated multi-MB report.

use std::path::{Path, PathBuf};

use memtally_core::analyze::vmmap::{Tally, TypeFilter};
use memtally_core::model::vmmap::Document;
use memtally_core::source::parse::vmmap::{parse, ParseOptions};
use memtally_core::source::vmmap::split::{
    parse_file_parts, part_cuts, SplitInfo, MIN_SPLIT_BYTES, PART_BYTES,
};

const GPU: [&str; 2] = ["IOAccelerator", "IOSurface"];

fn filter(types: &[&str]) -> TypeFilter {
    TypeFilter::new(types.iter().map(|s| s.to_string()).collect())
}

fn sequential(path: &Path, types: &[&str], opts: &ParseOptions) -> (Document, Tally) {
    let mut tally = Tally::new(filter(types));
    let f = std::fs::File::open(path).unwrap();
    let doc = parse(f, opts.clone(), &mut tally).unwrap();
    tally.finish();
    (doc, tally)
}

fn split(
    path: &Path,
    types: &[&str],
    opts: &ParseOptions,
    cuts: &[u64],
    threads: usize,
) -> (Document, Tally, SplitInfo) {
    let mut tally = Tally::new(filter(types));
    let fresh = || Tally::new(filter(types));
    let (doc, info) =
        parse_file_parts(path, opts.clone(), cuts, threads, &mut tally, fresh).unwrap();
    tally.finish();
    (doc, tally, info)
}

/// Every public figure of a finished tally (what JSON and the table show).
fn figures(t: &Tally) -> String {
    format!(
        "{} {} {:?} {:?} {:?} {:?} {:?} {:?} {} {:?} {:?}",
        t.regions_read,
        t.selected,
        t.breakdown,
        t.by_type,
        t.exact,
        t.pow2,
        t.footprint,
        t.lines_per_type,
        t.overcommits,
        t.overcommit_samples,
        t.total,
    )
}

/// Asserts the parse cut at each of `cuts` alone (two parts), and at all
/// of them at once on `threads` threads, equals the sequential parse;
/// returns how each went, the all-at-once parse last.
fn check(path: &Path, types: &[&str], opts: &ParseOptions, cuts: &[u64]) -> Vec<SplitInfo> {
    check_threads(path, types, opts, cuts, 1)
}

fn check_threads(
    path: &Path,
    types: &[&str],
    opts: &ParseOptions,
    cuts: &[u64],
    threads: usize,
) -> Vec<SplitInfo> {
    let mut singles: Vec<&[u64]> = cuts.iter().map(std::slice::from_ref).collect();
    singles.push(cuts);
    check_sets(path, types, opts, &singles, threads)
}

/// Asserts the parse cut at each set of `cuts` equals the sequential parse.
fn check_sets(
    path: &Path,
    types: &[&str],
    opts: &ParseOptions,
    sets: &[&[u64]],
    threads: usize,
) -> Vec<SplitInfo> {
    let (doc, tally) = sequential(path, types, opts);
    let want_figures = figures(&tally);
    let mut infos = Vec::new();
    for &these in sets {
        let (d, t, info) = split(path, types, opts, these, threads);
        let at = match these {
            [one] => format!("near byte {one}"),
            many => format!("at {} points", many.len()),
        };
        let what = format!("{} cut {at} ({info:?}), types {types:?}", path.display());
        assert_eq!(d, doc, "document differs: {what}");
        assert_eq!(figures(&t), want_figures, "tally differs: {what}");
        assert_eq!(t.count_check(&d), tally.count_check(&doc), "count check differs: {what}");
        infos.push(info);
    }
    infos
}

fn fixtures(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no fixtures in {}", dir.display());
    v
}

/// Every line start, the byte before and after it, and past the end.
fn cuts_everywhere(path: &Path) -> Vec<u64> {
    let bytes = std::fs::read(path).unwrap();
    let mut cuts = vec![0, 1, bytes.len() as u64, bytes.len() as u64 + 10];
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' {
            let start = i as u64 + 1;
            cuts.extend([start - 1, start, start + 1]);
        }
    }
    cuts.sort_unstable();
    cuts.dedup();
    cuts
}

fn check_fixture_dir(dir: &Path) -> usize {
    let mut kept = 0;
    for path in fixtures(dir) {
        let cuts = cuts_everywhere(&path);
        for (opts, types) in
            [(ParseOptions::default(), &[][..]), (ParseOptions { page_size: Some(1) }, &GPU[..])]
        {
            kept += check(&path, types, &opts, &cuts).iter().map(|i| i.kept).sum::<usize>();
            // Every line a part of its own, on three threads.
            check_sets(&path, types, &opts, &[&cuts], 3);
        }
    }
    kept
}

#[test]
fn split_equals_sequential_on_every_repo_fixture() {
    let dir = crate::support::repo().join("testdata/fixtures/vmmap");
    assert!(check_fixture_dir(&dir) > 0, "no cut ever kept the second thread's work");
}

#[test]
fn split_equals_sequential_on_every_shared_fixture() {
    let dir = crate::support::repo().join("../shared/fixtures/vmmap");
    if !dir.is_dir() {
        eprintln!("skipped: {} is absent", dir.display());
        return;
    }
    assert!(check_fixture_dir(&dir) > 0, "no cut ever kept the second thread's work");
}

const TYPES: [(&str, &str); 8] = [
    ("IOSurface", "SHM"),
    ("IOAccelerator", "SHM"),
    ("IOAccelerator (graphics)", "SHM"),
    ("MALLOC_SMALL", "PRV"),
    ("__TEXT", "COW"),
    ("mapped file", "COW"),
    ("VM_ALLOCATE", "PRV"),
    ("Stack", "PRV"),
];

/// Byte offsets of interest in a generated report.
struct Generated {
    path: PathBuf,
    region_list: u64,
    section_break: u64,
    summary: u64,
    malloc: u64,
}

/// A report of `lines` region lines in two region sections (with damaged
/// lines, bad sizes, unreadable lines and overcommitted regions on both
/// sides of the middle), then the summary and MALLOC ZONE tables.
fn generate(name: &str, lines: usize, eol: &str) -> Generated {
    let path =
        std::env::temp_dir().join(format!("memtally-split-{}-{name}.txt", std::process::id()));
    let mut s = String::new();
    let push = |s: &mut String, line: &str| {
        s.push_str(line);
        s.push_str(eol);
    };
    for l in [
        "Process:         BenchApp [4242]",
        "OS Version:      macOS 26.5.2 (25F84)",
        "Physical footprint:         5.2G",
        "----",
        "",
        "Virtual Memory Map of process 4242 (BenchApp)",
        "Output report format:  2.4  -- 64-bit process",
        "VM page size:  16384 bytes",
        "",
        "==== Writable regions for process 4242",
    ] {
        push(&mut s, l);
    }
    let header = "REGION TYPE                      START - END             [ VSIZE  RSDNT  DIRTY   SWAP] PRT/MAX SHRMOD PURGE    REGION DETAIL";
    push(&mut s, header);
    let region_list = s.len() as u64;
    let mut section_break = 0;
    let mut addr: u64 = 0x1_0000_0000;
    let mut rng: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    for i in 0..lines {
        if i == lines * 2 / 3 {
            push(&mut s, "");
            push(&mut s, "==== Non-writable regions for process 4242");
            push(&mut s, header);
            section_break = s.len() as u64;
        }
        let r = next();
        let (ty, sm) = TYPES[(r % TYPES.len() as u64) as usize];
        let k = 16u64 << ((r >> 8) % 10);
        let rs = k / (1 + (r >> 16) % 4);
        let dirty = rs / (1 + (r >> 20) % 3);
        let mut swap = (k - rs) / (1 + (r >> 24) % 5);
        if i % 997 == 5 {
            swap = k * 2; // dirty + swap above the virtual size
        }
        let purge = ["", "PURGE=N", "PURGE=V", "PURGE=E"][((r >> 28) % 4) as usize];
        let detail = ["", "/usr/lib/dyld", "thread 3", "DefaultMallocZone_0x104c9c000"]
            [((r >> 32) % 4) as usize];
        let size = |v: u64| {
            if v >= 10240 {
                format!("{:.1}M", v as f64 / 1024.0)
            } else {
                format!("{v}K")
            }
        };
        let end = addr + k * 1024;
        let line = match i % 4099 {
            17 => format!("{ty:<24} {addr:016x}-{end:016x} [ {:>5} 12Q {:>6} {:>6}] rw-/rwx SM={sm} {purge}", size(k), size(dirty), size(swap)),
            300 => format!("{ty:<24} {addr:016x}-{end:016x} [ {:>5} {:>6} {:>6} {:>6}] rwz/rwx SM={sm} {purge}", size(k), size(rs), size(dirty), size(swap)),
            1000 => format!("{ty:<24} {addr:016x}-zzzz [ {:>5} {:>6} {:>6} {:>6}] rw-/rwx SM={sm}", size(k), size(rs), size(dirty), size(swap)),
            _ => format!(
                "{ty:<24} {addr:016x}-{end:016x} [ {:>5} {:>6} {:>6} {:>6}] rw-/rwx SM={sm} {purge:<8} {detail}",
                size(k),
                size(rs),
                size(dirty),
                size(swap)
            ),
        };
        push(&mut s, line.trim_end());
        addr = end + 0x4000;
    }
    push(&mut s, "");
    push(&mut s, "==== Summary for process 4242");
    push(&mut s, "");
    let summary = s.len() as u64;
    for l in [
        "                                VIRTUAL RESIDENT    DIRTY  SWAPPED VOLATILE   NONVOL    EMPTY   REGION ",
        "REGION TYPE                        SIZE     SIZE     SIZE     SIZE     SIZE     SIZE     SIZE    COUNT (non-coalesced) ",
        "===========                     ======= ========    =====  ======= ========   ======    =====  ======= ",
        "IOAccelerator                    867.0G   432.3G   216.3G   217.0G       0K       0K       0K   332976 ",
        "IOSurface                        872.6G   435.8G   217.4G   218.9G       0K       0K       0K   334122 ",
        "MALLOC_SMALL                     8192K     512K     512K     128K       0K       0K       0K        1         see MALLOC ZONE table below",
        "===========                     ======= ========    =====  ======= ========   ======    =====  ======= ",
        "TOTAL                           2606.5G  1300.4G   649.5G   653.1G       0K       0K       0K  1000000 ",
        "",
        "                                 VIRTUAL   RESIDENT      DIRTY    SWAPPED ALLOCATION      BYTES DIRTY+SWAP          REGION",
    ] {
        push(&mut s, l);
    }
    let malloc = s.len() as u64;
    for l in [
        "MALLOC ZONE                         SIZE       SIZE       SIZE       SIZE      COUNT  ALLOCATED  FRAG SIZE  % FRAG   COUNT",
        "===========                      =======  =========  =========  =========  =========  =========  =========  ======  ======",
        "DefaultMallocZone_0x103570000     8192K       512K       512K       128K       1234       300K       340K     53%       1",
        "===========                      =======  =========  =========  =========  =========  =========  =========  ======  ======",
        "TOTAL                             8192K       512K       512K       128K       1234       300K       340K     53%       1",
    ] {
        push(&mut s, l);
    }
    std::fs::write(&path, s).unwrap();
    Generated { path, region_list, section_break, summary, malloc }
}

#[test]
fn split_equals_sequential_on_a_generated_report_wherever_the_cut_lands() {
    for (name, eol) in [("lf", "\n"), ("crlf", "\r\n")] {
        let g = generate(name, 80_000, eol);
        let len = std::fs::metadata(&g.path).unwrap().len();
        assert!(len >= MIN_SPLIT_BYTES, "generated only {len} bytes");
        let in_list = [
            g.region_list + 1,
            g.region_list + 300,
            len / 4,
            len / 2,
            len / 2 + 1,
            g.section_break - 1000,
            g.section_break + 1,
            (g.section_break + g.summary) / 2,
        ];
        // No region before the cut (so whether sizes are pages is not
        // known yet), or the cut in a table: the second thread's work is
        // dropped or it reads nothing.
        let in_tables = [20, g.region_list, g.summary, g.summary + 150, g.malloc + 30, len - 5];
        for types in [&[][..], &GPU[..], &["MALLOC"][..]] {
            let infos = check(&g.path, types, &ParseOptions::default(), &in_list);
            for (at, info) in in_list.iter().zip(&infos) {
                assert!(
                    info.kept > 0 && info.lines_kept > 0,
                    "cut at {at} in the region list: {info:?}"
                );
            }
            for (at, info) in
                in_tables.iter().zip(check(&g.path, types, &ParseOptions::default(), &in_tables))
            {
                assert_eq!(info.kept, 0, "cut at {at}: {info:?}");
            }
        }
        // Page counts given: byte sizes stay bytes, same path.
        check(&g.path, &[], &ParseOptions { page_size: Some(1) }, &[len / 2]);
        std::fs::remove_file(&g.path).unwrap();
    }
}

#[test]
fn parts_read_through_lines_the_region_path_cannot_read() {
    // Unreadable region lines in every part (`-zzzz` addresses, a bad
    // size, a bad protection): each part's reader goes on past them, so
    // nearly every part is kept, on any number of threads.
    let g = generate("parts", 80_000, "\n");
    let len = std::fs::metadata(&g.path).unwrap().len();
    let cuts: Vec<u64> = (1..).map(|k| k * (64 << 10)).take_while(|&c| c < len).collect();
    for threads in [1, 2, 4] {
        let infos = check_sets(&g.path, &GPU, &ParseOptions::default(), &[&cuts], threads);
        let all = &infos[0];
        // Not kept: the header's part, and the one after the section
        // break only if the break is its first line.
        assert!(all.parts > 100 && all.kept + 2 >= all.parts, "{threads} threads: {all:?}");
    }
    // The usual cuts of a file this size.
    let usual = part_cuts(len);
    assert_eq!(usual.len() as u64, (len - 1) / PART_BYTES);
    check_sets(&g.path, &[], &ParseOptions::default(), &[&usual], 2);
    std::fs::remove_file(&g.path).unwrap();
}
