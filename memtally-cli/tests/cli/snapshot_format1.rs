//! Snapshot files of format 1 (one JSON object, what memtally wrote before
//! format 2's JSON Lines) are still read for one release: `diff`, `report`
//! and `plot` of two saved by main's binary print, byte for byte, what
//! that binary printed of them (testdata/snapshots/format1/README.md).

use crate::support::{memtally, repo};

const DIR: &str = "testdata/snapshots/format1";

/// What `memtally ARGS` prints, run from the repository's root (the page
/// names its input as given), checked to succeed.
fn printed(args: &[&str]) -> Vec<u8> {
    let out = memtally().current_dir(repo()).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

fn golden(name: &str) -> Vec<u8> {
    std::fs::read(repo().join(DIR).join(name)).unwrap()
}

#[test]
fn diff_report_and_plot_of_format_1_print_what_they_did() {
    let (a, b) = (format!("{DIR}/a.json"), format!("{DIR}/b.json"));
    for format in ["table", "json", "csv"] {
        let ab = printed(&["diff", &a, &b, "--format", format]);
        assert!(ab == golden(&format!("diff-a-b.{format}")), "diff a b --format {format}");
        let ba = printed(&["diff", &b, &a, "--format", format, "--min-delta", "0"]);
        assert!(ba == golden(&format!("diff-b-a.{format}")), "diff b a --format {format}");
    }
    let tmp = tempfile::tempdir().unwrap();
    let page = tmp.path().join("report.html");
    printed(&["report", "--input", &a, "-o", page.to_str().unwrap()]);
    assert!(std::fs::read(&page).unwrap() == golden("report-a.html"), "report --input a");
    let svg = tmp.path().join("plot.svg");
    printed(&["plot", &a, "-o", svg.to_str().unwrap()]);
    assert!(std::fs::read(&svg).unwrap() == golden("plot-a.svg"), "plot a");
}
