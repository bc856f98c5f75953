//! The key tables of docs/json.md, docs/gpu-json.md and docs/vmmap-json.md,
//! and a document's keys held against them: for the JSON key tests in
//! process (`json_docs`) and the live one in tests/cli/json_docs.rs, which
//! includes this file.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// The repository's docs/.
fn docs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs")
}

/// The keys the `nth` table after the heading containing `heading`
/// documents: the backticked names in its first column (`start`, `end`
/// is two; `…` and nested `a[].b` forms are prose, not keys).
pub fn documented(doc: &str, heading: &str, nth: usize) -> BTreeSet<String> {
    let text = std::fs::read_to_string(docs().join(doc)).expect("the doc");
    let mut lines = text.lines().skip_while(|l| !(l.starts_with('#') && l.contains(heading)));
    assert!(lines.next().is_some(), "{doc}: no heading {heading:?}");
    let mut tables = 0;
    let mut in_table = false;
    let mut keys = BTreeSet::new();
    for line in lines {
        if line.starts_with("## ") {
            break;
        }
        let row = line.starts_with('|');
        if row && !in_table {
            tables += 1;
        }
        in_table = row;
        if !row || tables != nth + 1 {
            continue;
        }
        let first = line.trim_start_matches('|').split('|').next().unwrap_or("");
        for (i, part) in first.split('`').enumerate() {
            if i % 2 == 1
                && !part.is_empty()
                && part.chars().all(|c| c.is_ascii_lowercase() || c == '_' || c.is_ascii_digit())
                && part != "key"
            {
                keys.insert(part.to_string());
            }
        }
    }
    assert!(!keys.is_empty(), "{doc}: table {nth} after {heading:?} names no key");
    keys
}

/// The backticked snake_case words of the paragraph after a heading (the
/// size keys are a list in prose, not a table).
pub fn listed(doc: &str, heading: &str) -> BTreeSet<String> {
    let text = std::fs::read_to_string(docs().join(doc)).expect("the doc");
    let after = text.split_once(heading).expect("the heading").1;
    let paragraph = after.trim_start_matches(|c| c != '\n').trim_start();
    let paragraph = paragraph.split("\n\n").next().unwrap_or("");
    paragraph
        .split('`')
        .enumerate()
        .filter(|(i, p)| i % 2 == 1 && p.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        .map(|(_, p)| p.to_string())
        .collect()
}

pub fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object().unwrap_or_else(|| panic!("an object: {v}")).keys().cloned().collect()
}

/// `actual` has every documented key but those `optional` names, and no
/// key `documented` (or `also`) does not name.
pub fn check(
    what: &str,
    documented: &BTreeSet<String>,
    actual: &BTreeSet<String>,
    optional: &[&str],
    also: &BTreeSet<String>,
) {
    let missing: Vec<&String> = documented
        .iter()
        .filter(|k| !actual.contains(*k) && !optional.contains(&k.as_str()))
        .collect();
    let undocumented: Vec<&String> =
        actual.iter().filter(|k| !documented.contains(*k) && !also.contains(*k)).collect();
    assert!(missing.is_empty(), "{what}: documented but not in the output: {missing:?}");
    assert!(undocumented.is_empty(), "{what}: in the output but not documented: {undocumented:?}");
}

pub fn none() -> BTreeSet<String> {
    BTreeSet::new()
}
