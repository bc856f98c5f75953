//! On every recorded tree, `show --format json` agrees with the kernel's
//! own sums in the recorded `smaps_rollup`, field by field. The recording
//! script keeps a tree only when its smaps and smaps_rollup were taken at
//! one instant, so any difference is memtally's parser or sums going wrong.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::support::{rollup, run_json};

/// Figures the kernel rounds down to kB per mapping in smaps but sums
/// before rounding in smaps_rollup.
const PROPORTIONAL: &[&str] =
    &["pss", "pss_dirty", "pss_anon", "pss_file", "pss_shmem", "swap_pss"];

/// (tree dir, pid) of every recording with a smaps_rollup.
fn trees() -> Vec<(PathBuf, String)> {
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
            if name.bytes().all(|b| b.is_ascii_digit())
                && d.join("proc").join(&name).join("smaps_rollup").is_file()
            {
                out.push((d.clone(), name));
            }
        }
    }
    out
}

#[test]
fn json_totals_equal_the_recorded_smaps_rollup() {
    let trees = trees();
    assert!(trees.len() >= 4, "the repository's recordings are found: {trees:?}");
    for (dir, pid) in &trees {
        let what = dir.display();
        let root = dir.join("proc");
        let doc =
            run_json(&["--proc-root", root.to_str().unwrap(), "show", pid, "--format", "json"]);
        let want = rollup(&root.join(pid).join("smaps_rollup"));
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
        let totals = doc["totals"].as_object().expect("totals");
        let regions = doc["regions"].as_array().expect("regions");

        // The regions are the mappings of the recorded maps, in order, and
        // each one's size is its address range.
        let maps = std::fs::read_to_string(root.join(pid).join("maps")).unwrap();
        assert_eq!(regions.len(), maps.lines().count(), "{what}: one region per mapping");
        for (r, line) in regions.iter().zip(maps.lines()) {
            let (range, _) = line.split_once(' ').unwrap();
            let (s, e) = range.split_once('-').unwrap();
            let (s, e) = (u64::from_str_radix(s, 16).unwrap(), u64::from_str_radix(e, 16).unwrap());
            assert_eq!(
                (r["start"].as_u64(), r["end"].as_u64()),
                (Some(s), Some(e)),
                "{what}: {line}"
            );
            assert_eq!(r["size"].as_u64(), Some(e - s), "{what}: {line}");
        }

        // Sum every figure over the regions, as a reader of the JSON would.
        let mut sums: BTreeMap<String, u64> = BTreeMap::new();
        for r in regions {
            for k in want.keys() {
                if let Some(v) = r.get(k).and_then(|v| v.as_u64()) {
                    *sums.entry(k.clone()).or_default() += v;
                }
            }
        }
        for (k, &v) in &want {
            let total = totals.get(k).and_then(|t| t.as_u64());
            let sum = sums.get(k).copied();
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
/// of a capture): `show` falls back to the regions' sums, and a diff of
/// two snapshots of such a tree agrees with `show` and has nothing to
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

    let r = root.to_str().unwrap();
    let shown = run_json(&["--proc-root", r, "show", "11364", "--format", "json"]);
    let regions_pss: u64 =
        shown["regions"].as_array().unwrap().iter().filter_map(|g| g["pss"].as_u64()).sum();
    assert_eq!(shown["totals"]["pss"].as_u64(), Some(regions_pss));

    let snap = dir.path().join("s.json");
    let s =
        crate::support::run(&["--proc-root", r, "snapshot", "11364", "-o", snap.to_str().unwrap()]);
    assert!(s.status.success(), "{}", String::from_utf8_lossy(&s.stderr));
    let d = run_json(&["diff", snap.to_str().unwrap(), snap.to_str().unwrap(), "--format", "json"]);
    assert_eq!(d["totals"]["before"]["pss"].as_u64(), Some(regions_pss));
    let notes = d["notes"].as_array().map(Vec::len).unwrap_or(0);
    assert_eq!(notes, 0, "{d}");
}
