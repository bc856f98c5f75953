//! `memtally vmmap --format csv` of every table (issue 21, item 12): input
//! without region lines prints its summary rows (it printed a header
//! alone), and `--csv summary|breakdown|footprint` carries the other
//! tables, exact bytes, the same figures as the JSON.

use serde_json::Value;

use super::{repo_path, run, run_json, shared};

fn csv_of(args: &[&str]) -> Vec<csv::StringRecord> {
    let out = run(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    let mut r = csv::Reader::from_reader(out.stdout.as_slice());
    let mut rows = vec![r.headers().unwrap().clone()];
    rows.extend(r.records().map(|x| x.unwrap()));
    rows
}

fn col(header: &csv::StringRecord, name: &str) -> usize {
    header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name}"))
}

#[test]
fn summary_only_csv_has_the_summary_rows() {
    let Some(dir) = shared().map(|s| s.join("fixtures/vmmap")) else {
        println!("skipping: ../shared/fixtures/vmmap is absent");
        return;
    };
    let f = dir.join("11_macos-26.4.1_vmmap-summary_llama-server.txt");
    if !f.exists() {
        println!("skipping: no {}", f.display());
        return;
    }
    let f = f.to_str().unwrap();
    let doc = run_json(&["vmmap", f, "--format", "json"]);
    for args in
        [&["vmmap", f, "--format", "csv"][..], &["vmmap", f, "--format", "csv", "--csv", "summary"]]
    {
        let rows = csv_of(args);
        let (h, rows) = rows.split_first().unwrap();
        let summary = doc["summary"].as_array().unwrap();
        let kept: Vec<_> = rows.iter().filter(|r| &r[0] == "row").collect();
        assert_eq!(kept.len(), summary.len(), "every summary row");
        assert_eq!(rows.iter().filter(|r| &r[0] == "total").count(), 2, "TOTAL rows");
        for (r, s) in kept.iter().zip(summary) {
            assert_eq!(r[col(h, "region_type")], *s["region_type"].as_str().unwrap());
            for k in
                ["count", "virtual", "resident", "dirty", "swapped", "volatile", "nonvol", "empty"]
            {
                assert_eq!(r[col(h, k)].parse::<u64>().ok(), s[k].as_u64(), "{k}");
            }
        }
        let sum: u64 = kept.iter().map(|r| r[col(h, "footprint")].parse::<u64>().unwrap()).sum();
        assert_eq!(Some(sum), doc["footprint_total"]["footprint"].as_u64());
    }
}

fn check_footprint_csv(path: &str, doc: &Value) {
    let rows = csv_of(&["vmmap", path, "--format", "csv", "--csv", "footprint"]);
    let (h, rows) = rows.split_first().unwrap();
    let total = rows.iter().find(|r| &r[0] == "total").expect("a total row");
    assert_eq!(
        total[col(h, "footprint")].parse::<u64>().ok(),
        doc["footprint_total"]["footprint"].as_u64()
    );
    let types: u64 = rows
        .iter()
        .filter(|r| &r[0] == "type")
        .filter_map(|r| r[col(h, "footprint")].parse::<u64>().ok())
        .sum();
    assert_eq!(Some(types), doc["footprint_total"]["footprint"].as_u64(), "{path}");
    let stated = rows.iter().find(|r| &r[0] == "physical_footprint");
    assert_eq!(
        stated.map(|r| r[col(h, "footprint")].parse::<u64>().unwrap()),
        doc["header"]["physical_footprint"].as_u64(),
        "{path}"
    );
}

#[test]
fn breakdown_and_footprint_tables_as_csv() {
    let f = repo_path("testdata/fixtures/vmmap/04_modern_gpu_purge.txt");
    let doc = run_json(&["vmmap", &f, "--format", "json"]);
    let rows = csv_of(&["vmmap", &f, "--format", "csv", "--csv", "breakdown"]);
    let (h, rows) = rows.split_first().unwrap();
    let breakdown = doc["breakdown"].as_array().unwrap();
    assert_eq!(rows.len(), breakdown.len());
    for r in rows {
        let b = breakdown
            .iter()
            .find(|b| b["region_type"] == r[0] && b["purge"] == r[1])
            .unwrap_or_else(|| panic!("{r:?}"));
        for k in ["regions", "vsize", "resident", "dirty", "swap"] {
            assert_eq!(r[col(h, k)].parse::<u64>().ok(), b[k].as_u64(), "{k} {r:?}");
        }
    }
    let fp: u64 = rows.iter().filter_map(|r| r[col(h, "footprint")].parse::<u64>().ok()).sum();
    assert_eq!(Some(fp), doc["footprint_total"]["footprint"].as_u64());
    check_footprint_csv(&f, &doc);
    if let Some(dir) = shared().map(|s| s.join("fixtures/vmmap")) {
        let f11 = dir.join("11_macos-26.4.1_vmmap-summary_llama-server.txt");
        if f11.exists() {
            let f11 = f11.to_str().unwrap();
            check_footprint_csv(f11, &run_json(&["vmmap", f11, "--format", "json"]));
        }
    }
    let out = run(&["vmmap", &f, "--csv", "footprint"]);
    assert_eq!(out.status.code(), Some(2), "--csv without --format csv");
}
