//! `top --columns` (which figure columns, in which order: table and CSV;
//! JSON keeps every key) and `top --sort oom` (procrank -o), on three
//! exec'd children of 8, 16 and 32 MiB, piped at 80 columns.

use memtally_core::analyze::top::TopSort;
use memtally_core::model::Named;

use crate::support::lone::{lone, Lone};
use crate::support::{memtally, run, run_json};

const MIB: usize = 1 << 20;

fn pid(l: &Lone) -> u32 {
    l.child.0.id()
}

fn top(ls: &[Lone], more: &[&str], columns: usize) -> String {
    let mut args = vec!["top".to_string()];
    args.extend(ls.iter().flat_map(|l| ["--pid".to_string(), pid(l).to_string()]));
    args.extend(more.iter().map(|s| s.to_string()));
    let out = memtally().args(&args).env("COLUMNS", columns.to_string()).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn header(text: &str) -> Vec<String> {
    let line = text.lines().find(|l| l.trim_start().starts_with("PID")).expect(text);
    // Two spaces part the columns; one is inside a header (SWAP PSS).
    line.split("  ").map(str::trim).filter(|h| !h.is_empty()).map(String::from).collect()
}

#[test]
fn columns_choose_the_figures_and_their_order_in_the_table_and_csv() {
    let ls = [lone(8 * MIB), lone(16 * MIB), lone(32 * MIB)];
    let text = top(&ls, &["--columns", "footprint,pss,swap_pss"], 80);
    assert_eq!(header(&text), ["PID", "USER", "FOOTPRINT", "PSS", "SWAP PSS", "COMMAND"], "{text}");
    for line in text.lines() {
        assert!(line.chars().count() <= 80, "wider than 80: {line:?}");
    }
    // The child's row: its footprint (status RssAnon + VmSwap) and PSS.
    let doc = run_json(&["top", "--pid", &pid(&ls[2]).to_string(), "--format", "json"]);
    let row = &doc["rows"][0];
    let big = text.lines().find(|l| l.split_whitespace().next() == Some(&pid(&ls[2]).to_string()));
    let cells: Vec<&str> = big.expect(&text).split_whitespace().collect();
    let human = |v: &serde_json::Value| format!("{:.1}M", v.as_u64().unwrap() as f64 / MIB as f64);
    assert_eq!(
        (cells[2], cells[3]),
        (human(&row["footprint"]).as_str(), human(&row["pss"]).as_str())
    );
    // Every sort name is a column name; none gives an unnamed column.
    for c in TopSort::ALL {
        let text = top(&ls, &["--columns", c.name()], 200);
        assert!(!header(&text).iter().any(|h| h == "?"), "{}: {text}", c.name());
    }
    // `oom` adds the OOM column; pid and processes are there anyway.
    assert!(header(&top(&ls, &["--columns", "pss,oom"], 80)).contains(&"OOM".to_string()));
    // CSV: the chosen figures, in order, after the identity columns.
    let csv = top(&ls, &["--columns", "uss,pss", "--format", "csv"], 80);
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("pid,ppid,user,source,depth,processes,uss,pss,command"));
    assert_eq!(lines.count(), 3, "{csv}");
    // JSON keeps every key.
    let mut args = vec!["top", "--columns", "pss", "--format", "json"];
    let p = pid(&ls[0]).to_string();
    args.extend(["--pid", &p]);
    let doc = run_json(&args);
    assert!(doc["rows"][0]["rss"].is_u64() && doc["rows"][0]["footprint"].is_u64(), "{doc}");
    // An unknown name is a usage error that lists the names.
    let bad = run(&["top", "--columns", "pss,nope"]);
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("nope") && err.contains("swap_pss") && err.contains("footprint"), "{err}");
}

#[test]
fn sort_oom_puts_the_oom_killers_first_pick_first() {
    let ls = [lone(8 * MIB), lone(16 * MIB), lone(32 * MIB)];
    // The smallest one made the OOM killer's first pick.
    let first = pid(&ls[0]);
    if std::fs::write(format!("/proc/{first}/oom_score_adj"), "1000").is_err() {
        eprintln!("skipped: cannot write oom_score_adj");
        return;
    }
    let text = top(&ls, &["--sort", "oom"], 80);
    let rows: Vec<u32> = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("PID"))
        .skip(1)
        .take_while(|l| !l.starts_with("---"))
        .filter_map(|l| l.split_whitespace().next()?.parse().ok())
        .collect();
    assert_eq!(rows.first(), Some(&first), "{text}");
    let scores: Vec<u32> = rows
        .iter()
        .map(|p| {
            std::fs::read_to_string(format!("/proc/{p}/oom_score")).unwrap().trim().parse().unwrap()
        })
        .collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "highest first: {scores:?}\n{text}");
    assert!(header(&text).contains(&"OOM".to_string()), "the score is shown: {text}");
    // A group has no one score.
    let bad = run(&["top", "--by", "program", "--sort", "oom"]);
    assert_eq!(bad.status.code(), Some(2), "{}", String::from_utf8_lossy(&bad.stderr));
}
