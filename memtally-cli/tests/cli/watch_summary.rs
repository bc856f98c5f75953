//! `watch`'s summary lists the categories whose rate is not zero and
//! counts the ones that did not change in one line; `--all` lists them.

use std::time::Duration;

use crate::support::{repo_path, run, spawn_steady_grower};

fn summary_rows(text: &str, scope: &str) -> Vec<String> {
    let table = text.lines().skip_while(|l| !l.starts_with("SCOPE"));
    table.filter(|l| l.starts_with(scope)).map(String::from).collect()
}

fn unchanged_count(text: &str) -> Option<usize> {
    let line = text.lines().find(|l| l.contains("did not change: 0/s; --all lists them"))?;
    line.trim_start_matches('(').split(' ').next()?.parse().ok()
}

#[test]
fn unchanged_categories_are_counted_and_all_lists_them() {
    // A recording: every sample is the same, no category changes.
    let proc = repo_path("testdata/fixtures/linux/python3-mmap/proc");
    let args = ["--proc-root", &proc, "watch", "11364", "--count", "3", "--interval", "100ms"];
    let out = run(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let quiet = String::from_utf8(out.stdout).unwrap();
    assert!(summary_rows(&quiet, "category").is_empty(), "{quiet}");
    let n = unchanged_count(&quiet).unwrap_or_else(|| panic!("a count line: {quiet}"));
    let all = run(&[&args[..], &["--all"]].concat());
    let all = String::from_utf8(all.stdout).unwrap();
    assert_eq!(summary_rows(&all, "category").len(), n, "--all lists each: {all}");
    assert_eq!(unchanged_count(&all), None, "{all}");
    assert!(summary_rows(&all, "category").iter().all(|r| r.contains(" 0/s")), "{all}");
}

#[test]
fn a_growing_category_stays_listed() {
    let child = spawn_steady_grower(1 << 20, Duration::from_millis(50), 100);
    let out = run(&["watch", &child.pid.to_string(), "--interval", "150ms", "--count", "4"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let cats = summary_rows(&text, "category");
    assert!(cats.iter().any(|r| r.contains("heap")), "the heap grows: {text}");
    for r in &cats {
        let w: Vec<&str> = r.split_whitespace().collect();
        let (pss, dirty) = (w[w.len() - 3], w[w.len() - 2]);
        assert!(!(pss == "0/s" && dirty == "0/s"), "an unchanged row listed: {r}\n{text}");
    }
    assert!(unchanged_count(&text).is_some_and(|n| n > 0), "the rest counted: {text}");
}
