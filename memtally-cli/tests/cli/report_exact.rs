//! The HTML report's EXCLUSIVE and WORKING SET columns, in headless
//! chromium's DOM: from a live read with `report --exact` and from a
//! `snapshot --exact --wss 1s` file, the process table shows each
//! process's exclusive bytes (and, from the file, its working set: the
//! embedded snapshot's figures) and a sentence says what they are;
//! without the figures, no column and one sentence that says why.

use crate::pages::frames_readable;
use crate::report::{chromium, dump_dom, embedded, report, rows, url};
use crate::support::lone::lone;
use crate::support::run;

/// Column of the EXCLUSIVE cell among a row's `data-v` cells: pid, PSS,
/// USS, dirty, swap, footprint, RSS, then it.
const EXCLUSIVE_CELL: usize = 7;

#[test]
fn an_exact_page_shows_each_process_s_exclusive_bytes_and_says_what_they_are() {
    if !frames_readable() {
        return;
    }
    let Some(bin) = chromium() else { return };
    let len = 24 << 20;
    let child = lone(len);
    let pid = child.child.0.id();
    let dir = tempfile::tempdir().unwrap();
    let live = report(dir.path(), "live.html", &["--pid", &pid.to_string(), "--exact"]);
    let snap = dir.path().join("s.json");
    let pid_s = pid.to_string();
    let out =
        run(&["snapshot", "--pid", &pid_s, "--exact", "--wss", "1s", "-o", snap.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let from_file = report(dir.path(), "file.html", &["--input", snap.to_str().unwrap()]);
    for (page, wss) in [(live, false), (from_file, true)] {
        let json = embedded(&page);
        let ex = json["processes"][0]["exclusive"]["bytes"].as_i64().expect("an exclusive figure");
        assert!(ex >= len as i64, "the {len} bytes it wrote are its alone: {ex}");
        let dom = dump_dom(&bin, &url(&page, ""));
        assert!(dom.contains(">Exclusive</th>"), "a column head");
        let cells = &rows(&dom)[&(pid as u64)];
        assert_eq!(cells[EXCLUSIVE_CELL], ex, "the row's cell is the snapshot's figure: {cells:?}");
        let note = dom.split(r#"<p id="exclusive-note">"#).nth(1).expect("the sentence");
        assert!(
            note.starts_with("Exclusive: the resident pages and swap slots no other process maps")
        );
        // The working set: only from a snapshot taken with --wss, after it.
        assert_eq!(dom.contains(">Working set</th>"), wss);
        assert_eq!(note.contains("Working set: the dirty bytes plus the clean file bytes"), wss);
        if wss {
            let ws = json["processes"][0]["totals"]["working_set"].as_i64().unwrap();
            assert!(ws >= len as i64, "it wrote {len} bytes before the interval: {ws}");
            assert_eq!(cells[EXCLUSIVE_CELL + 1], ws, "{cells:?}");
        }
    }
}

#[test]
fn a_page_without_the_figures_has_no_column_and_says_why() {
    let Some(bin) = chromium() else { return };
    let child = lone(4 << 20);
    let pid = child.child.0.id();
    let dir = tempfile::tempdir().unwrap();
    let page = report(dir.path(), "plain.html", &["--pid", &pid.to_string()]);
    let dom = dump_dom(&bin, &url(&page, ""));
    assert!(!dom.contains(">Exclusive</th>"), "no column");
    assert_eq!(rows(&dom)[&(pid as u64)].len(), EXCLUSIVE_CELL, "no cell either");
    let note = dom.split(r#"<p id="exclusive-note">"#).nth(1).expect("the sentence");
    assert!(
        note.starts_with("No Exclusive column: the snapshot was read without page frames"),
        "{note}"
    );
}

#[test]
fn report_exact_of_a_recording_is_live_only() {
    let root = crate::support::python_root_path();
    let out = run(&["--proc-root", &root, "report", "--exact", "-o", "/dev/null"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("live") && err.lines().count() == 1, "{err}");
}
