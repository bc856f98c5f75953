//! `report --input` of saved vmmap text in memory bounded by the page
//! (issue 35, item 2): past what the page embeds, only the regions it
//! draws are kept, the rest summed, so the peak does not grow with the
//! input; the page's footprint, by type and in all, is still `memtally
//! vmmap`'s for the same file (a purge state counted region by region).

use std::path::Path;

use crate::bounded_inputs::{write_regions, MemCgroup};

/// 5,000 and 40,000 regions (0.6 and 4.9 MB) on a page of 200K: the
/// second in the peak of the first.
#[test]
fn report_of_large_vmmap_text_keeps_what_the_page_draws() {
    report_of_vmmap_text(&[5_000, 40_000], "200K");
}

/// 40,000 and 320,000 regions (4.9 and 39 MB) on a page of the default
/// budget (4M).
#[test]
#[ignore = "stress: generated inputs of 39 MB; scripts/stress/run.sh runs it"]
fn stress_report_of_large_vmmap_text_stays_flat() {
    report_of_vmmap_text(&[40_000, 320_000], "4M");
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
/// on a page of `max_size`: the page's figures `vmmap`'s; with two
/// sizes, the second's peak within 8 MiB of the first's.
fn report_of_vmmap_text(sizes: &[usize], max_size: &str) {
    let Some(cg) = MemCgroup::new("report-input", 1 << 30) else { return };
    let tmp = tempfile::tempdir().unwrap();
    let mut peaks = Vec::new();
    for &regions in sizes {
        let input = tmp.path().join(format!("{regions}.txt"));
        write_regions(&input, regions);
        let page = tmp.path().join(format!("{regions}.html"));
        let args = ["report", "--input", input.to_str().unwrap(), "--max-size", max_size, "-o"];
        let args = [&args[..], &[page.to_str().unwrap()]].concat();
        let (code, err, peak) = cg.run(&args, Path::new("/dev/null"));
        assert_eq!(code, 0, "{err}");
        let html = std::fs::read_to_string(&page).unwrap();
        let (total, by_type) = vmmap_footprint(&input);
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
