//! Issue 37, item 2: a diff of several processes withholds the full
//! counts (DIRTY, SWAP: a shared page counted once per process) and
//! offers the figures that add up in their place, in `top`'s words: Δ PSS
//! DIRTY and Δ SWAP PSS, in the table, JSON, CSV and the report's diff
//! page. The two saved snapshots hold three processes each; in the
//! second, two of them grew an anonymous mapping by 4 KiB.

use crate::support::{memtally, repo};

const DIR: &str = "testdata/snapshots/format1";

fn printed(args: &[&str]) -> String {
    let out = memtally().current_dir(repo()).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_diff_of_several_processes_shows_pss_dirty_and_swap_pss() {
    let (a, b) = (format!("{DIR}/a.json"), format!("{DIR}/b.json"));
    let table = printed(&["diff", &a, &b]);
    let head = table.lines().next().unwrap();
    assert_eq!(head, "total over 0s: PSS dirty +8.0K, PSS -280K, RSS -, swap PSS 0", "{table}");
    assert!(!table.contains("- → -"), "{table}");
    let heap = table.lines().find(|l| l.ends_with("heap / anon rw")).expect(&table);
    let cells: Vec<&str> = heap.split_whitespace().collect();
    assert_eq!(cells[..5], ["+8.0K", "+8.0K", "-", "0", "0"], "{table}");
    let header = table.lines().find(|l| l.ends_with("CATEGORY")).unwrap();
    assert!(header.starts_with("Δ PSS DIRTY") && header.contains("Δ SWAP PSS"), "{header}");

    let json: serde_json::Value =
        serde_json::from_str(&printed(&["diff", &a, &b, "--format", "json"])).unwrap();
    assert!(json["totals"]["delta"]["dirty"].is_null());
    assert_eq!(json["totals"]["delta"]["pss_dirty"], 8192);
    assert_eq!(json["totals"]["delta"]["swap_pss"], 0);

    let csv = printed(&["diff", &a, &b, "--format", "csv"]);
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at = header.iter().position(|h| *h == "pss_dirty_delta").expect("a pss_dirty column");
    let total: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!((total[0], total[at]), ("total", "8192"), "{csv}");

    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("growth.html");
    let page = page.to_str().unwrap();
    printed(&["report", "--diff", &a, &b, "-o", page]);
    let html = std::fs::read_to_string(page).unwrap();
    assert!(html.contains(r#"<th class="n">Δ PSS dirty</th>"#), "the growth table's column");
    assert!(html.contains(r#"<th class="n">Δ swap PSS</th>"#));
    assert!(html.contains("PSS dirty +8.0K."), "the growth headline");
    let heap = html.find("<code>heap / anon rw</code>").expect("a heap row");
    assert!(
        html[heap..].starts_with(r#"<code>heap / anon rw</code></td><td class="n" data-v="8192">"#)
    );
}
