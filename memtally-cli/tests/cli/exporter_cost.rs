//! The exporter's own metrics (issue 26): `memtally_scan_read_bytes` is
//! the bytes the scan read, at least every file it must have read whole
//! (each process's smaps_rollup, stat and cmdline, and meminfo) and at
//! most every byte the recorded tree holds.

use std::path::Path;

use crate::support::{repo, run};

fn tree_bytes(dir: &Path, total: &mut u64) {
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let meta = e.metadata().unwrap();
        if meta.is_dir() {
            tree_bytes(&e.path(), total);
        } else if meta.is_file() {
            *total += meta.len();
        }
    }
}

fn exported(args: &[&str], name: &str) -> u64 {
    let out = run(args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with(&format!("{name} ")))
        .unwrap_or_else(|| panic!("{name} in the exposition"));
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

#[test]
fn scan_read_bytes_counts_what_the_scan_read() {
    for fixture in ["chromium-browser", "python3-mmap"] {
        let root = repo().join("testdata/fixtures/linux").join(fixture).join("proc");
        let root_arg = root.to_str().unwrap();
        let read = exported(&["--proc-root", root_arg, "export"], "memtally_scan_read_bytes");
        let mut floor = std::fs::metadata(root.join("meminfo")).unwrap().len();
        for e in std::fs::read_dir(&root).unwrap() {
            let e = e.unwrap();
            if e.file_name().to_string_lossy().parse::<u32>().is_err() {
                continue;
            }
            for f in ["smaps_rollup", "stat", "cmdline"] {
                floor += std::fs::metadata(e.path().join(f)).map_or(0, |m| m.len());
            }
        }
        let mut ceiling = 0;
        tree_bytes(&root, &mut ceiling);
        assert!(floor > 0);
        assert!(read >= floor, "{fixture}: {read} bytes read, the files read whole hold {floor}");
        assert!(read <= ceiling, "{fixture}: {read} bytes read, the tree holds {ceiling}");
        eprintln!("{fixture}: read {read} bytes (at least {floor}, at most {ceiling})");
    }
}
