//! On every recorded tree, what `show` of one process reads agrees with the
//! kernel's own sums in the recorded `smaps_rollup`, figure by figure: the
//! regions it hands out add up to the rollup, and the report's totals are
//! the rollup's. The recording script keeps a tree only when its smaps and
//! smaps_rollup were taken at one instant, so any difference is the
//! parser or the sums going wrong.

use std::path::PathBuf;

use crate::support::rollup::rollup;
use crate::support::shown::{show_one, show_one_with};
use memtally_core::analyze::diff::diff;
use memtally_core::model::Named;
use memtally_core::usecase::snapshot;
use memtally_core::{
    DiffOptions, Figure, Flow, ProcRoot, Region, RegionSink, SelectOptions, ShowOptions, Silent,
    Sizes,
};

/// Figures the kernel rounds down to kB per mapping in smaps but sums
/// before rounding in smaps_rollup.
const PROPORTIONAL: &[&str] =
    &["pss", "pss_dirty", "pss_anon", "pss_file", "pss_shmem", "swap_pss"];

/// (tree dir, pid) of every recording with a smaps_rollup.
fn trees() -> Vec<(PathBuf, u32)> {
    let mut dirs = vec![];
    let repo = crate::support::repo().join("testdata/fixtures/linux");
    for e in std::fs::read_dir(&repo).unwrap() {
        dirs.push(e.unwrap().path());
    }
    let shared = crate::support::repo().join("../shared/fixtures/linux/gst-launch");
    if shared.is_dir() {
        dirs.push(shared);
    } else {
        eprintln!("skipping ../shared/fixtures/linux/gst-launch: not present in this checkout");
    }
    dirs.sort();
    let mut out = vec![];
    for d in dirs {
        let Ok(entries) = std::fs::read_dir(d.join("proc")) else { continue };
        for e in entries {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            if let Ok(pid) = name.parse() {
                if d.join("proc").join(&name).join("smaps_rollup").is_file() {
                    out.push((d.clone(), pid));
                }
            }
        }
    }
    out
}

/// A figure of `sizes` by its snake_case name, known or not to this build.
fn named(sizes: &Sizes, name: &str) -> Option<u64> {
    match Figure::from_name(name) {
        Some(f) => sizes.figure(f),
        None => sizes.extra_named(name),
    }
}

/// The regions a read hands out, kept.
#[derive(Default)]
struct Kept(Vec<Region>);

impl RegionSink for Kept {
    fn region(&mut self, _line: usize, region: &Region) -> Flow {
        self.0.push(region.clone());
        Flow::Continue
    }
}

#[test]
fn totals_equal_the_recorded_smaps_rollup() {
    let trees = trees();
    assert!(trees.len() >= 4, "the repository's recordings are found: {trees:?}");
    for (dir, pid) in &trees {
        let what = dir.display();
        let root = dir.join("proc");
        let mut kept = Kept::default();
        let report =
            show_one_with(&ProcRoot::new(&root), *pid, &ShowOptions::default(), &mut kept).unwrap();
        let regions = kept.0;
        let want = rollup(&root.join(pid.to_string()).join("smaps_rollup"));
        for k in [
            "rss",
            "pss",
            "private_dirty",
            "shared_dirty",
            "private_clean",
            "shared_clean",
            "swap",
            "swap_pss",
            "anonymous",
            "locked",
            "referenced",
            "lazy_free",
            "anon_huge_pages",
        ] {
            assert!(want.contains_key(k), "{what}: rollup has {k}");
        }

        // The regions are the mappings of the recorded maps, in order, and
        // each one's size is its address range.
        let maps = std::fs::read_to_string(root.join(pid.to_string()).join("maps")).unwrap();
        assert_eq!(regions.len(), maps.lines().count(), "{what}: one region per mapping");
        assert_eq!(report.region_count, regions.len(), "{what}");
        for (r, line) in regions.iter().zip(maps.lines()) {
            let (range, _) = line.split_once(' ').unwrap();
            let (s, e) = range.split_once('-').unwrap();
            let (s, e) = (u64::from_str_radix(s, 16).unwrap(), u64::from_str_radix(e, 16).unwrap());
            assert_eq!((r.start, r.end), (Some(s), Some(e)), "{what}: {line}");
            assert_eq!(r.sizes.size, Some(e - s), "{what}: {line}");
        }

        for (k, &v) in &want {
            let total = named(&report.totals, k);
            let found: Vec<u64> = regions.iter().filter_map(|r| named(&r.sizes, k)).collect();
            let sum = (!found.is_empty()).then(|| found.iter().sum::<u64>());
            if PROPORTIONAL.contains(&k.as_str()) {
                // smaps prints each mapping's PSS rounded down to kB
                // (pss_anon and friends only in the rollup, so no sum).
                if let Some(sum) = sum {
                    let slack = 1024 * regions.len() as u64;
                    assert!(
                        sum <= v && v < sum + slack,
                        "{what}: {k}: regions sum {sum}, rollup {v}"
                    );
                }
                assert_eq!(total, Some(v), "{what}: total {k} is the rollup's exact figure");
            } else {
                assert_eq!(sum, Some(v), "{what}: regions' {k} adds up to the rollup");
                assert_eq!(total, Some(v), "{what}: total {k}");
            }
        }
    }
}

/// A rollup whose PSS is more than the rounding above its smaps' sum was
/// taken at another instant (a sharer wrote or exited between the reads
/// of a capture): `show` of one process falls back to the regions' sums, and a
/// diff of two snapshots of such a tree agrees with it and has nothing to
/// correct. The variant is made here: the recorded python3-mmap tree,
/// copied, with 2 MiB added to its rollup's Pss line.
#[test]
fn a_rollup_of_another_instant_is_not_taken_for_the_exact_pss() {
    let from = crate::support::repo().join("testdata/fixtures/linux/python3-mmap/proc");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("proc");
    std::fs::create_dir_all(root.join("11364")).unwrap();
    std::fs::copy(from.join("meminfo"), root.join("meminfo")).unwrap();
    for e in std::fs::read_dir(from.join("11364")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), root.join("11364").join(e.file_name())).unwrap();
    }
    let rollup_path = root.join("11364/smaps_rollup");
    let text = std::fs::read_to_string(&rollup_path).unwrap();
    let moved: String = text
        .lines()
        .map(|l| match l.strip_prefix("Pss:") {
            Some(v) => {
                let kb: u64 = v.trim().trim_end_matches("kB").trim().parse().unwrap();
                format!("Pss:{:>19} kB\n", kb + 2048)
            }
            None => format!("{l}\n"),
        })
        .collect();
    assert_ne!(moved, text);
    std::fs::write(&rollup_path, moved).unwrap();

    let proc_root = ProcRoot::new(&root);
    let mut kept = Kept::default();
    let shown = show_one_with(&proc_root, 11364, &ShowOptions::default(), &mut kept).unwrap();
    let regions_pss: u64 = kept.0.iter().filter_map(|r| r.sizes.pss).sum();
    assert_eq!(shown.totals.pss, Some(regions_pss));
    let rolled = rollup(&rollup_path)["pss"];
    assert!(rolled > regions_pss + 1024 * 1024, "the moved rollup is not what is shown");
    assert_eq!(show_one(&proc_root, 11364, &ShowOptions::default()).unwrap().totals, shown.totals);

    let sel = SelectOptions::default().with_pids(vec![11364]).resolve().unwrap();
    let snap = snapshot::take(&proc_root, &sel, &Silent).unwrap().snapshot;
    let d = diff(&snap, &snap, &DiffOptions::default());
    assert_eq!(d.totals.before.as_ref().and_then(|s| s.pss), Some(regions_pss));
    assert!(d.notes.is_empty(), "{:?}", d.notes);
}
