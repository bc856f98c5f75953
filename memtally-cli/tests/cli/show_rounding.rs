//! `show`'s rows add up to its total row (issue 21, item 4): the total's
//! PSS figures are the kernel's exact sums (smaps_rollup), the rows add up
//! smaps, which rounds each mapping's down to a kB, and a named `rounding`
//! row carries the difference, in the table, the CSV and the JSON.

use serde_json::Value;

use crate::support::lone::lone;
use crate::support::{repo_path, run, run_json};

/// The recorded trees, with their process.
const RECORDED: &[(&str, &str)] = &[
    ("chromium-renderer", "11755"),
    ("chromium-browser", "11672"),
    ("gst-launch-audiotestsrc", "11531"),
    ("python3-mmap", "11364"),
];

fn root(name: &str) -> String {
    repo_path(&format!("testdata/fixtures/linux/{name}/proc"))
}

/// Every size key of `totals` equals its sum over `categories` plus the
/// document's `rounding` (which names only the figures that need it);
/// returns the rounding of `pss`.
fn rows_add_up(doc: &Value) -> i64 {
    let totals = doc["totals"].as_object().unwrap();
    let rounding = &doc["rounding"];
    for (key, total) in totals {
        let rows: Option<i64> =
            doc["categories"].as_array().unwrap().iter().map(|c| c[key].as_i64()).sum();
        let Some(rows) = rows else { continue }; // pss_anon and kin: the rollup's alone
        let extra = rounding[key].as_i64().unwrap_or(0);
        assert_eq!(rows + extra, total.as_i64().unwrap(), "{key}: rows {rows} + rounding {extra}");
    }
    rounding["pss"].as_i64().unwrap_or(0)
}

#[test]
fn recorded_rows_and_rounding_add_up_to_the_total() {
    for (name, pid) in RECORDED {
        let doc = run_json(&["--proc-root", &root(name), "show", pid, "--format", "json"]);
        assert_eq!(doc["totals_from"], "smaps_rollup", "{name}");
        let pss = rows_add_up(&doc);
        // smaps rounds down, never up: the rollup is at least the rows.
        assert!(pss >= 0, "{name}: {pss}");
        for by in ["path", "perms"] {
            let doc = run_json(&[
                "--proc-root",
                &root(name),
                "show",
                pid,
                "--by",
                by,
                "--format",
                "json",
            ]);
            assert_eq!(rows_add_up(&doc), pss, "{name} --by {by}: the same rounding");
        }
    }
}

#[test]
fn chromium_renderer_rounding_is_named_in_table_csv_and_json() {
    let r = root("chromium-renderer");
    let doc = run_json(&["--proc-root", &r, "show", "11755", "--format", "json"]);
    // Σ Pss over the 729 mappings of the recorded smaps is 20773 kB; the
    // recorded smaps_rollup says 20975 kB.
    assert_eq!(doc["totals"]["pss"], 20975 * 1024);
    assert_eq!(doc["rounding"]["pss"], 202 * 1024);
    assert_eq!(doc["rounding"]["pss_dirty"], 168 * 1024);

    let out = run(&["--proc-root", &r, "show", "11755", "--format", "csv"]);
    let text = String::from_utf8(out.stdout).unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header = reader.headers().unwrap().clone();
    let records: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    let (total, rest) = records.split_last().unwrap();
    assert_eq!(&total[0], "total");
    assert!(rest.iter().any(|r| &r[0] == "rounding"), "{text}");
    for (i, name) in header.iter().enumerate().skip(2) {
        // A figure of the process only (footprint), or one the source
        // does not give, is empty in the rows: it is no sum of them.
        if rest.iter().all(|r| r[i].is_empty()) {
            continue;
        }
        let sum: i64 = rest.iter().map(|r| r[i].parse::<i64>().unwrap_or(0)).sum();
        assert_eq!(sum, total[i].parse::<i64>().unwrap(), "CSV column {name}");
    }

    let out = run(&["--proc-root", &r, "show", "11755"]);
    let text = String::from_utf8(out.stdout).unwrap();
    let row = text.lines().find(|l| l.starts_with("rounding ")).unwrap_or_else(|| panic!("{text}"));
    assert!(row.contains("+202K"), "{row}");
    assert!(
        text.lines().any(|l| l.starts_with("total: ") && l.contains("smaps_rollup")),
        "one line says where the total comes from: {text}"
    );
}

#[test]
fn live_rows_and_rounding_add_up_to_the_total() {
    // An exec'd C child: its C library and loader are shared with every
    // other process, so their PSS is a fraction of a kB per mapping.
    let a = lone(4 << 20);
    let b = lone(4 << 20);
    let (pa, pb) = (a.child.0.id().to_string(), b.child.0.id().to_string());
    let doc = run_json(&["show", &pa, "--format", "json"]);
    assert_eq!(doc["totals_from"], "smaps_rollup");
    rows_add_up(&doc);
    let doc = run_json(&["show", "--pid", &pa, &pb, "--format", "json"]);
    rows_add_up(&doc);
    let out = run(&["show", &pa]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.lines().any(|l| l.starts_with("total: ")), "{text}");
}
