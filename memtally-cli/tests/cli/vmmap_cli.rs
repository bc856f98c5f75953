//! `memtally vmmap` on the repo's own fixtures: figures, formats, errors.

use std::io::Write;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_memtally");

fn fixture(name: &str) -> String {
    crate::support::repo_path(&format!("testdata/fixtures/vmmap/{name}.txt"))
}

fn run(args: &[&str]) -> (String, String, i32) {
    let out = Command::new(BIN).args(args).output().expect("run memtally");
    (
        String::from_utf8(out.stdout).expect("utf-8"),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

fn json(args: &[&str]) -> serde_json::Value {
    let mut a = args.to_vec();
    a.extend(["--format", "json"]);
    let (out, err, code) = run(&a);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).expect("valid json")
}

#[test]
fn json_carries_exact_regions_summary_header_and_losses() {
    let f = fixture("04_modern_gpu_purge");
    let v = json(&["vmmap", &f]);
    let h = &v["header"];
    assert_eq!(h["process"], "GpuDemo");
    assert_eq!(h["pid"], 5150);
    assert_eq!(h["os_version"], "macOS 26.5.2 (25F84)");
    assert_eq!(h["page_size"], 16384);
    assert_eq!(h["physical_footprint"], (135.3f64 * 1048576.0) as u64);
    assert_eq!(h["physical_footprint_peak"], (236.3f64 * 1048576.0) as u64);
    let regions = v["regions"].as_array().unwrap();
    assert_eq!(regions.len(), 26);
    assert_eq!(v["regions_read"], 26);
    // The 2.0T IOSurface the seed cannot read.
    let big = regions.iter().find(|r| r["vsize"] == 2u64 << 40).expect("2.0T region");
    assert_eq!(big["region_type"], "IOSurface");
    assert_eq!(big["resident"], 3u64 << 39);
    assert_eq!(big["purge"], "V");
    assert_eq!(big["share_mode"], "SHM");
    assert_eq!(big["protection"], "rw-");
    assert_eq!(big["max_protection"], "rw-");
    assert_eq!(big["start"], 0x104714000u64);
    // A placeholder range has null addresses.
    let k = regions.iter().find(|r| r["region_type"] == "kernel page tables").unwrap();
    assert!(k["start"].is_null() && k["end"].is_null());
    assert_eq!(k["vsize"], 4096 * 1024);
    // The line shifted one column right still reads.
    let acc: Vec<_> = regions.iter().filter(|r| r["region_type"] == "IOAccelerator").collect();
    assert_eq!(acc.len(), 3);
    assert_eq!(acc[0]["detail"], serde_json::Value::Null);
    let f2 = regions.iter().find(|r| r["region_type"] == "mapped file").unwrap();
    assert_eq!(f2["detail"], "/System/Library/Fonts/Helvetica Neue.ttc");
    let types: Vec<&str> = regions.iter().map(|r| r["region_type"].as_str().unwrap()).collect();
    assert!(types.contains(&"IOSurface (wired, 2)"));
    assert!(types.contains(&"MALLOC freed, no zone"));
    assert!(types.contains(&"AttributeGraph Data (old"));

    let summary = v["summary"].as_array().unwrap();
    assert_eq!(summary.len(), 14);
    let s = summary.iter().find(|s| s["region_type"] == "IOSurface").unwrap();
    assert_eq!(s["virtual"], 2u64 << 40);
    assert_eq!(s["nonvol"], 4112 * 1024);
    assert_eq!(s["count"], 8);
    let fd = summary.iter().find(|s| s["region_type"] == "__FONT_DATA").unwrap();
    assert_eq!(fd["virtual"], 2352);
    assert_eq!(fd["resident"], 752);
    assert_eq!(v["summary_totals"].as_array().unwrap().len(), 2);
    assert_eq!(v["malloc_zones"]["rows"].as_array().unwrap().len(), 2);
    assert_eq!(v["unparsed"]["unreadable"], 0);
    assert_eq!(v["partial"], false);
    // 16K dirty + 16K swap over a 16K region.
    assert_eq!(v["warnings"]["overcommit_regions"], 1);
    let mm = v["warnings"]["count_mismatches"].as_array().unwrap();
    let names: Vec<&str> = mm.iter().map(|m| m["region_type"].as_str().unwrap()).collect();
    assert_eq!(names, vec!["AttributeGraph Data", "__FONT_DATA", "AttributeGraph Data (old"]);
}

#[test]
fn types_select_by_substring_and_breakdown_adds_up() {
    let f = fixture("04_modern_gpu_purge");
    let v = json(&["vmmap", &f, "--types", "IOAccelerator"]);
    assert_eq!(v["regions_selected"], 8);
    let b = v["breakdown"].as_array().unwrap();
    let total: u64 = b.iter().map(|x| x["vsize"].as_u64().unwrap()).sum();
    assert_eq!(total, (16 + 48 + 64 + 64 + 256 + 256 + 1024 + 32) * 1024);
    let v_row = b
        .iter()
        .find(|x| x["region_type"] == "IOAccelerator (graphics)" && x["purge"] == "V")
        .unwrap();
    assert_eq!(v_row["regions"], 2);
    assert_eq!(v_row["dirty"], 1280 * 1024);
    let fp = v["footprint"].as_array().unwrap();
    let g = fp.iter().find(|x| x["region_type"] == "IOAccelerator (graphics)").unwrap();
    // Footprint (Apple's): dirty + swap outside volatile regions, 64K swap +
    // 64K dirty of the two N regions; the V regions' 256K + 1024K resident
    // are reclaimable instead; the E region holds nothing.
    assert_eq!(g["footprint"], (64 + 64) * 1024);
    assert_eq!(g["reclaimable"], 1280 * 1024);
    assert!(v["summary"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["region_type"].as_str().unwrap().contains("IOAccelerator")));
}

#[test]
fn table_report_shows_breakdown_footprint_histograms_and_warnings() {
    let f = fixture("04_modern_gpu_purge");
    let (out, err, code) = run(&["vmmap", &f, "--types", "IOSurface"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("vmmap: GpuDemo [5150], macOS 26.5.2 (25F84), physical footprint"),
        "{out}"
    );
    for want in [
        "IOSurface by purge state:",
        "V (Volatile/Purgeable)",
        "Footprint by region type",
        "report dirty + swap above their virtual size",
        "2.0T",
    ] {
        assert!(out.contains(want), "missing {want:?} in\n{out}");
    }
    assert!(!out.contains("Histogram of"), "histograms only on request:\n{out}");
    let (out, _, _) = run(&["vmmap", &f, "--types", "IOSurface", "--histograms"]);
    assert!(out.contains("Histogram of IOSurface regions by exact virtual size:"), "{out}");
    let (out, _, _) = run(&["vmmap", &f, "--types", "IOSurface", "--pow2"]);
    assert!(out.contains("power-of-two size buckets"), "{out}");
    assert!(out.contains("4.0M..8.0M"), "{out}");
}

#[test]
fn by_keys_group_with_the_common_code() {
    let f = fixture("04_modern_gpu_purge");
    for (key, want) in [
        ("type", "IOAccelerator (graphics)"),
        ("purge", "E (Empty/Purged)"),
        ("detail", "CoreAnimation layer 0x1234"),
        ("share-mode", "SHM"),
    ] {
        let (out, err, code) = run(&["vmmap", &f, "--by", key]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains(want), "--by {key}: {out}");
        let v = json(&["vmmap", &f, "--by", key]);
        let groups = v["grouped"]["groups"].as_array().unwrap();
        let n: u64 = groups.iter().map(|g| g["regions"].as_u64().unwrap()).sum();
        assert_eq!(n, 26, "--by {key}");
    }
    let v = json(&["vmmap", &f, "--by", "purge", "--types", "IOSurface"]);
    let groups = v["grouped"]["groups"].as_array().unwrap();
    let e = groups.iter().find(|g| g["key"] == "E (Empty/Purged)").unwrap();
    assert_eq!(e["regions"], 1);
    assert_eq!(e["sizes"]["size"], 4096 * 1024);
}

#[test]
fn csv_has_one_row_per_region_in_exact_bytes() {
    let (out, err, code) = run(&["vmmap", &fixture("06_pages_fractional"), "--format", "csv"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "line,region_type,start,end,vsize,resident,dirty,swap,purge,share_mode,protection,max_protection,detail");
    assert_eq!(lines.len(), 7);
    // 7.55 pages of an assumed 4096 bytes, truncated: 30924.
    assert!(
        lines[4].starts_with(
            "5,__DATA,140735770013696,140735770044640,30924,16384,0,10444,-,COW,rw-,rwx,"
        ),
        "{}",
        lines[4]
    );
}

#[test]
fn pages_convert_with_the_stated_page_size_and_the_override() {
    let f = fixture("05_pages_indented");
    let v = json(&["vmmap", &f]);
    assert_eq!(v["header"]["pages"], true);
    assert_eq!(v["header"]["page_size_used"], 16384);
    assert_eq!(v["header"]["page_size_assumed"], false);
    let stack = v["regions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["region_type"] == "Stack")
        .unwrap()
        .clone();
    assert_eq!(stack["vsize"], 512 * 16384);
    let s = v["summary"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["region_type"] == "IOSurface")
        .unwrap()
        .clone();
    assert_eq!(s["volatile"], 16 * 16384);
    assert_eq!(s["note"], "<<<---- here");
    let v = json(&["vmmap", &f, "--page-size", "4096"]);
    let stack = v["regions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["region_type"] == "Stack")
        .unwrap()
        .clone();
    assert_eq!(stack["vsize"], 512 * 4096);
    let (out, _, _) = run(&["vmmap", &fixture("06_pages_fractional")]);
    assert!(out.contains("assumed 4096 bytes (pass --page-size BYTES)"), "{out}");
}

#[test]
fn old_formats_crash_reports_and_mangled_copies() {
    let v = json(&["vmmap", &fixture("01_fmt22_vsize_only")]);
    assert_eq!(v["regions_read"], 5);
    assert!(v["regions"][0]["resident"].is_null(), "vsize-only has no resident figure");
    assert_eq!(v["regions"][3]["vsize"], 28u64 << 30);
    assert_eq!(v["summary_columns"], serde_json::json!(["virtual"]));
    assert_eq!(v["partial"], true, "the file has an elision");
    let v = json(&["vmmap", &fixture("02_fmt22_resident")]);
    assert_eq!(v["regions"][1]["resident"], 8192);
    assert!(v["regions"][1]["dirty"].is_null());
    assert_eq!(v["malloc_zones"]["rows"][1]["values"], serde_json::json!(["0K", "0K", "0", "0K"]));
    let v = json(&["vmmap", &fixture("10_crash_report")]);
    assert_eq!(v["header"]["crash_report"], true);
    assert_eq!(v["summary"].as_array().unwrap().len(), 5);
    assert_eq!(v["summary_totals"][0]["count"], 62);
    let v = json(&["vmmap", &fixture("11_mangled_comment")]);
    assert_eq!(v["regions_read"], 4);
    assert_eq!(v["unparsed"]["damaged"], 3);
    assert!(v["regions"][1]["max_protection"].is_null());
    assert_eq!(v["regions"][2]["purge"], "V");
    let v = json(&["vmmap", &fixture("03_interleaved_comment")]);
    assert_eq!(v["regions"][2]["detail"], "/Users/dev/My App.app/Contents/lib.dylib");
}

#[test]
fn unreadable_lines_are_counted_and_strict_fails_with_line_numbers() {
    let f = fixture("12_unreadable");
    let (out, _, code) = run(&["vmmap", &f]);
    assert_eq!(code, 0);
    assert!(out.contains("PARTIAL: 3 line(s)"), "{out}");
    let (_, err, code) = run(&["vmmap", &f, "--strict"]);
    assert_eq!(code, 5);
    assert!(
        err.contains(
            "12_unreadable.txt: 3 unreadable line(s) (--strict): line 4: bad size \"6?K\"; line 5:"
        ),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// A file and the same bytes on standard input print the same, in every
/// format (the source's name aside).
#[test]
fn a_file_and_standard_input_print_the_same() {
    let f = fixture("04_modern_gpu_purge");
    let bytes = std::fs::read(&f).unwrap();
    for extra in [
        &[][..],
        &["--types", "IOAccelerator,IOSurface"][..],
        &["--pow2", "--regions"][..],
        &["--format", "json"][..],
        &["--format", "json", "--types", "IOSurface", "--by", "purge"][..],
        &["--format", "csv"][..],
    ] {
        let (from_file, err, code) = run(&[&["vmmap", &f][..], extra].concat());
        assert_eq!(code, 0, "{err}");
        let mut child = Command::new(BIN)
            .args(["vmmap", "-"])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(&bytes).unwrap();
        let from_stdin = child.wait_with_output().unwrap();
        assert!(from_stdin.status.success());
        let from_stdin = String::from_utf8(from_stdin.stdout).unwrap();
        assert!(from_file.contains("IOSurface"), "{extra:?}: {from_file}");
        assert_eq!(
            from_file.replace(&f, "SOURCE"),
            from_stdin.replace("standard input", "SOURCE"),
            "vmmap {extra:?}"
        );
    }
}

#[test]
fn stdin_and_errors() {
    let text = std::fs::read(fixture("04_modern_gpu_purge")).unwrap();
    let mut child = Command::new(BIN)
        .args(["vmmap", "-", "--format", "json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&text).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["regions_read"], 26);
    assert_eq!(v["source"], "standard input");

    let (_, err, code) = run(&["vmmap", "/nonexistent/vmmap.txt"]);
    assert_eq!(code, 3);
    assert!(err.contains("/nonexistent/vmmap.txt"), "{err}");
    let (_, err, code) = run(&["vmmap", &crate::support::repo_path("Cargo.toml")]);
    assert_eq!(code, 5, "{err}");
    assert!(err.contains("is this `vmmap` output?"), "{err}");
    assert_eq!(err.lines().count(), 1);
    let (_, _, code) = run(&["vmmap"]);
    assert_eq!(code, 2);
    let (_, _, code) = run(&["vmmap", &fixture("04_modern_gpu_purge"), "--page-size", "0"]);
    assert_eq!(code, 2);
}
