//! The CSV headers against their documentation: docs/csv.md names the
//! header line of every CSV output, and each is exactly what memtally
//! prints on the recorded fixtures; an output without a documented header
//! (or a documented one no test prints) fails here.

use std::collections::BTreeMap;

use crate::support::{repo, repo_path, run};

/// docs/csv.md's table: output -> header.
fn documented() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(repo().join("docs/csv.md")).unwrap();
    let mut out = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        assert_eq!(cells.len(), 2, "two cells: {line}");
        let unquote = |c: &str| c.trim_matches('`').to_string();
        assert!(out.insert(unquote(cells[0]), unquote(cells[1])).is_none(), "one row each: {line}");
    }
    out
}

fn header(args: &[&str]) -> String {
    let out = run(args);
    assert!(out.status.success(), "memtally {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().lines().next().unwrap_or("").to_string()
}

#[test]
fn every_csv_header_is_the_documented_one() {
    let python = repo_path("testdata/fixtures/linux/python3-mmap/proc");
    let gpu = repo_path("testdata/fixtures/gpu/machine");
    let vmmap = repo_path("testdata/fixtures/vmmap/02_fmt22_resident.txt");
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("a.json");
    let taken = run(&["--proc-root", &python, "snapshot", "11364", "-o", snap.to_str().unwrap()]);
    assert!(taken.status.success(), "{}", String::from_utf8_lossy(&taken.stderr));
    let snap = snap.to_str().unwrap();
    let p = |rest: &[&str]| -> Vec<String> {
        ["--proc-root", python.as_str()].iter().chain(rest).map(|s| s.to_string()).collect()
    };
    let cases: Vec<(&str, Vec<String>)> = vec![
        ("top", p(&["top", "--format", "csv"])),
        ("top --by program", p(&["top", "--by", "program", "--format", "csv"])),
        ("top --by user", p(&["top", "--by", "user", "--format", "csv"])),
        ("top --by cgroup", p(&["top", "--by", "cgroup", "--format", "csv"])),
        ("top --by tree", p(&["top", "--by", "tree", "--format", "csv"])),
        ("show PID", p(&["show", "11364", "--format", "csv"])),
        ("show PID --regions", p(&["show", "11364", "--regions", "--format", "csv"])),
        ("show PID --classic", p(&["show", "11364", "--classic", "--format", "csv"])),
        ("files", p(&["files", "--format", "csv"])),
        ("machine", p(&["machine", "--format", "csv"])),
        ("cgroup", p(&["cgroup", "--format", "csv"])),
        ("gpu", ["--proc-root", &gpu, "gpu", "--format", "csv"].map(String::from).to_vec()),
        ("vmmap FILE", ["vmmap", &vmmap, "--format", "csv"].map(String::from).to_vec()),
        ("diff A B", ["diff", snap, snap, "--format", "csv"].map(String::from).to_vec()),
        ("watch", p(&["watch", "--pid", "11364", "--count", "1", "--format", "csv"])),
    ];
    let docs = documented();
    for (name, args) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let want = docs.get(*name).unwrap_or_else(|| panic!("docs/csv.md has no row `{name}`"));
        assert_eq!(&header(&args), want, "{name}: the header printed is not docs/csv.md's");
    }
    let tested: Vec<&str> = cases.iter().map(|(n, _)| *n).collect();
    let untested: Vec<&String> = docs.keys().filter(|k| !tested.contains(&k.as_str())).collect();
    assert!(untested.is_empty(), "documented headers no test prints: {untested:?}");
}
