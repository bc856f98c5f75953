//! The `memtally vmmap` report as a person reads it: footprint and GPU
//! memory by purge state first, histograms on request, vmmap's TOTAL row,
//! `-summary` input, `--types` before or after FILE. On the published
//! files in ../shared (skipped with a printed reason when absent) and the
//! repo's own fixtures.

use std::path::PathBuf;

use super::{run, run_json};

fn shared_file(prefix: &str) -> Option<String> {
    let Some(dir) = super::shared().map(|s| s.join("fixtures/vmmap")) else {
        println!("skipping: ../shared/fixtures/vmmap is absent");
        return None;
    };
    let found = std::fs::read_dir(&dir)
        .ok()?
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_str().unwrap().starts_with(prefix));
    if found.is_none() {
        println!("skipping: no {prefix}* in {}", dir.display());
    }
    found.map(|p| p.to_str().unwrap().to_string())
}

fn own(name: &str) -> String {
    super::repo_path(&format!("testdata/fixtures/vmmap/{name}.txt"))
}

fn table(args: &[&str]) -> String {
    let out = run(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The Finder sample (120 lines, 91 regions of 26 types) printed 195
/// lines, a histogram for every type; now the footprint and GPU memory by
/// purge state, with histograms when asked.
#[test]
fn default_report_leads_with_footprint_and_gpu_histograms_on_request() {
    let Some(f) = shared_file("12_") else { return };
    let out = table(&["vmmap", &f]);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.len() <= 45, "{} lines:\n{out}", lines.len());
    assert!(!out.contains("Histogram of"), "{out}");
    assert!(lines[3].starts_with("Footprint: "), "{out}");
    let gpu = lines.iter().position(|l| {
        l.starts_with("GPU memory (IOAccelerator, IOSurface, owned unmapped (graphics))")
    });
    let gpu = gpu.expect("a GPU section");
    assert!(lines[gpu + 2].starts_with("IOAccelerator "), "{out}");
    assert!(out.contains("IOAccelerator (graphics)  N (Non-Volatile)"), "{out}");
    // Every histogram, or those of the types named.
    let all = table(&["vmmap", &f, "--histograms"]);
    assert_eq!(all.matches("Histogram of").count(), 26, "{all}");
    let some = table(&["vmmap", &f, "--histograms=IOAccelerator,Stack"]);
    let names: Vec<&str> = some
        .lines()
        .filter_map(|l| l.strip_prefix("Histogram of "))
        .map(|l| l.split(" regions by").next().unwrap())
        .collect();
    assert_eq!(names, vec!["IOAccelerator", "IOAccelerator (graphics)"], "{some}");
    // --histograms takes its types with `=`: a FILE after it is the file.
    assert_eq!(table(&["vmmap", "--histograms", &f]), all);
}

/// Apple's phys_footprint: dirty + swapped (compressed), without volatile
/// purgeable memory, which is reclaimable instead; empty purgeable memory
/// holds nothing.
#[test]
fn footprint_leaves_volatile_purgeable_out_and_calls_it_reclaimable() {
    let v = run_json(&["vmmap", &own("04_modern_gpu_purge"), "--format", "json"]);
    let fp = v["footprint"].as_array().unwrap();
    let s = fp.iter().find(|x| x["region_type"] == "IOSurface").unwrap();
    // N: 4096K + 16K dirty + 16K swap; unmarked: 2048K dirty; the V ones'
    // 4096K + 1.5T + 1.5M and the E one are left out.
    assert_eq!(s["footprint"].as_u64(), Some((4096 + 16 + 16 + 2048) * 1024));
    assert_eq!(s["reclaimable"].as_u64(), Some((4096 + 1536) * 1024 + (3u64 << 39)));
    let t = &v["footprint_total"];
    assert_eq!(t["from"], "regions");
    let sum: u64 = fp.iter().filter_map(|x| x["footprint"].as_u64()).sum();
    assert_eq!(t["footprint"].as_u64(), Some(sum));
    let out = table(&["vmmap", &own("04_modern_gpu_purge")]);
    assert!(out.contains("IOSurface                 V (Volatile/Purgeable)        3   2.0T      1.5T   1.5T      0          0         1.5T"), "{out}");

    // A real -summary report: its footprint from the table is within 2%
    // of the physical footprint vmmap's header states (11.5G).
    let Some(f) = shared_file("11_") else { return };
    let v = run_json(&["vmmap", &f, "--format", "json"]);
    let t = &v["footprint_total"];
    assert_eq!(t["from"], "summary");
    let ours = t["footprint"].as_u64().unwrap() as f64;
    let stated = v["header"]["physical_footprint"].as_u64().unwrap() as f64;
    assert!((ours - stated).abs() / stated < 0.02, "{ours} vs {stated}");
}

/// vmmap's TOTAL row is printed and checked against the rows above it.
#[test]
fn the_summary_total_row_is_kept_and_checked() {
    let out = table(&["vmmap", &own("04_modern_gpu_purge")]);
    let total = out.lines().find(|l| l.starts_with("TOTAL ")).expect("TOTAL row");
    assert!(total.split_whitespace().eq([
        "TOTAL", "27", "2.0T", "1.5T", "1.5T", "1.3M", "1.5T", "4.2M", "4.2M"
    ]
    .iter()
    .copied()));
    assert!(out.contains("(vmmap's TOTAL agrees with the sum of its 14 rows)"), "{out}");
    // A TOTAL that does not add up is said to differ.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(own("04_modern_gpu_purge")).unwrap();
    let bad = text.replacen("4352K       27 \n", "4352K       29 \n", 1);
    assert_ne!(bad, text);
    let p = dir.path().join("bad.txt");
    std::fs::write(&p, bad).unwrap();
    let out = table(&["vmmap", p.to_str().unwrap()]);
    assert!(out.contains("differs from the sum of its 14 rows: count: TOTAL 29, rows 27"), "{out}");
    let Some(f) = shared_file("14_") else { return };
    let out = table(&["vmmap", &f]);
    let total = out.lines().find(|l| l.starts_with("TOTAL ")).expect("TOTAL row");
    assert!(total.split_whitespace().take(3).eq(["TOTAL", "5288", "8.4G"].iter().copied()));
    assert!(out.contains("(vmmap's TOTAL agrees with the sum of its 27 rows)"), "{out}");
    let v = run_json(&["vmmap", &f, "--format", "json"]);
    assert_eq!(v["summary_total_check"]["sum"]["count"], 5288);
    assert_eq!(v["summary_total_check"]["differences"].as_array().map(Vec::len), Some(0));
}

/// The region list says `unused __DATA`, the summary `unused but dirty
/// shlib __DATA`: one type, so no count mismatch.
#[test]
fn unused_data_is_one_type_in_regions_and_summary() {
    let text = "\
==== Writable regions for process 5150
REGION TYPE                    START - END         [ VSIZE  RSDNT  DIRTY   SWAP] PRT/MAX SHRMOD PURGE    REGION DETAIL
unused __DATA               1f0000000-1f0004000    [   16K    16K    16K     0K] rw-/rw- SM=COW          /usr/lib/libz.1.dylib
unused __DATA               1f0004000-1f0008000    [   16K     0K     0K    16K] rw-/rw- SM=COW          /usr/lib/libc++.1.dylib
MALLOC_SMALL                1f0008000-1f0808000    [ 8192K   512K   512K     0K] rw-/rwx SM=PRV          DefaultMallocZone_0x100a08000

                                VIRTUAL RESIDENT    DIRTY  SWAPPED VOLATILE   NONVOL    EMPTY   REGION 
REGION TYPE                        SIZE     SIZE     SIZE     SIZE     SIZE     SIZE     SIZE    COUNT (non-coalesced) 
===========                     ======= ========    =====  ======= ========   ======    =====  ======= 
MALLOC_SMALL                      8192K     512K     512K       0K       0K       0K       0K        1 
unused but dirty shlib __DATA       32K      16K      16K      16K       0K       0K       0K        2 
===========                     ======= ========    =====  ======= ========   ======    =====  ======= 
TOTAL                             8224K     528K     528K      16K       0K       0K       0K        3 
";
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("unused.txt");
    std::fs::write(&p, text).unwrap();
    let f = p.to_str().unwrap();
    let v = run_json(&["vmmap", f, "--format", "json"]);
    assert_eq!(v["regions_read"], 3);
    assert_eq!(v["warnings"]["count_mismatches"], serde_json::json!([]));
    let out = table(&["vmmap", f]);
    assert!(!out.contains("but the summary table counts"), "{out}");
    // A real miscount of the type is still reported, under the summary's name.
    let short = text.replacen("      2 \n", "      3 \n", 1);
    std::fs::write(&p, short).unwrap();
    let v = run_json(&["vmmap", f, "--format", "json"]);
    let mm = &v["warnings"]["count_mismatches"];
    assert_eq!(mm[0]["region_type"], "unused but dirty shlib __DATA", "{mm}");
    assert_eq!(
        (mm[0]["summary_count"].as_u64(), mm[0]["region_lines"].as_u64()),
        (Some(3), Some(2))
    );
}

/// `-summary` output has no region list: the GPU rows and the purgeable
/// columns of its table are the analysis.
#[test]
fn summary_only_input_gets_gpu_and_purgeable_analysis_from_its_table() {
    let Some(f11) = shared_file("11_") else { return };
    let out = table(&["vmmap", &f11]);
    assert!(
        out.contains(
            "GPU memory (IOAccelerator, IOSurface, owned unmapped (graphics)) by purge state (from the summary table):"
        ),
        "{out}"
    );
    let row = out.lines().find(|l| l.starts_with("IOAccelerator (graphics)")).unwrap();
    // COUNT 142, VIRTUAL 4.9M, RESIDENT, DIRTY 4.8M, SWAPPED 0, VOLATILE 0,
    // NONVOL 4.8M, EMPTY 0, FOOTPRINT 4.8M, RECLAIMABLE 0.
    assert!(
        row.split_whitespace().skip(2).eq([
            "142", "4.9M", "4.8M", "4.8M", "0", "0", "4.8M", "0", "4.8M", "0"
        ]
        .iter()
        .copied()),
        "{row}"
    );
    assert!(
        out.contains(
            "Purgeable (vmmap's TOTAL row): volatile 0 (reclaimable), non-volatile 4.8M, empty 0"
        ),
        "{out}"
    );
    // vmmap's TOTAL row with its footprint: 10.0G dirty + 1.5G swapped, as
    // the header's physical footprint (11.5G).
    let total = out.lines().find(|l| l.starts_with("TOTAL ")).expect("TOTAL row");
    assert_eq!(total.split_whitespace().nth(9), Some("11.5G"), "{total}");
    let Some(f13) = shared_file("13_") else { return };
    let out = table(&["vmmap", &f13]);
    let row = out.lines().find(|l| l.starts_with("IOAccelerator (graphics)")).unwrap();
    assert!(row.split_whitespace().skip(2).take(8).eq([
        "29", "3.9M", "1.4M", "1008K", "448K", "0", "1.4M", "2.5M"
    ]
    .iter()
    .copied()));
    assert!(out.lines().any(|l| l.starts_with("IOSurface ") && l.contains("384K")), "{out}");
    let v = run_json(&["vmmap", &f13, "--format", "json", "--types", "IOSurface"]);
    assert_eq!(v["footprint_total"]["from"], "summary");
    assert_eq!(v["footprint_total"]["nonvol_vsize"], 384 * 1024);
}

/// `--types T FILE`, as the usage line shows it, and `FILE --types T`.
#[test]
fn types_before_or_after_the_file() {
    let files: Vec<String> =
        [Some(own("04_modern_gpu_purge")), shared_file("12_")].into_iter().flatten().collect();
    for f in &files {
        let before = table(&["vmmap", "--types", "IOAccelerator", f]);
        let after = table(&["vmmap", f, "--types", "IOAccelerator"]);
        assert_eq!(before, after);
        assert!(before.contains("types: IOAccelerator;"), "{before}");
        let both =
            run_json(&["vmmap", "--types", "IOAccelerator,IOSurface", f, "--format", "json"]);
        assert_eq!(both["types"], serde_json::json!(["IOAccelerator", "IOSurface"]));
        let again = run_json(&[
            "vmmap",
            "--types",
            "IOAccelerator",
            "--types",
            "IOSurface",
            f,
            "--format",
            "json",
        ]);
        assert_eq!(both["regions_selected"], again["regions_selected"]);
        let seed = table(&["vmmap", "--types", "IOAccelerator", f, "--seed-view"]);
        assert_eq!(seed, table(&["vmmap", f, "--seed-view", "--types", "IOAccelerator"]));
    }
    // A second bare word is not a type: one clear usage error.
    let f = PathBuf::from(own("04_modern_gpu_purge"));
    let out = run(&["vmmap", f.to_str().unwrap(), "--types", "IOAccelerator", "IOSurface"]);
    assert_eq!(out.status.code(), Some(2));
}
