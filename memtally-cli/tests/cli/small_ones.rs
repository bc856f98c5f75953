//! Issue 24's small ones: several PIDs as plain arguments to `show` (as
//! pmap takes them); `diff` says how many new regions it left unlisted.

use crate::support::lone::{lone, spawn_mapper};
use crate::support::memtally;

fn text(args: &[&str], columns: usize) -> String {
    let out = memtally().args(args).env("COLUMNS", columns.to_string()).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn show_takes_several_pids_as_pmap_does() {
    let (a, b) = (lone(4 << 20), lone(8 << 20));
    let (pa, pb) = (a.child.0.id().to_string(), b.child.0.id().to_string());
    for columns in [80, 200] {
        let plain = text(&["show", &pa, &pb, "--format", "json"], columns);
        let named = text(&["show", "--pid", &pa, "--pid", &pb, "--format", "json"], columns);
        let pids = |doc: &str| {
            let v: serde_json::Value = serde_json::from_str(doc).unwrap();
            let mut p: Vec<u64> = v["processes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["pid"].as_u64().unwrap())
                .collect();
            p.sort_unstable();
            (p, v["totals"]["pss"].clone())
        };
        let (got, _) = pids(&plain);
        let mut want: Vec<u64> = vec![pa.parse().unwrap(), pb.parse().unwrap()];
        want.sort_unstable();
        assert_eq!(got, want, "{plain}");
        assert_eq!(pids(&plain).0, pids(&named).0);
        let table = text(&["show", &pa, &pb], columns);
        assert!(table.lines().next().unwrap().starts_with("2 processes"), "{table}");
    }
}

#[test]
fn diff_counts_the_regions_it_does_not_list() {
    let dir = tempfile::tempdir().unwrap();
    let few = spawn_mapper(0, None);
    let many = spawn_mapper(60, None);
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    for (child, path) in [(&few, &a), (&many, &b)] {
        let pid = child.child.0.id().to_string();
        let out = memtally()
            .args(["snapshot", "--pid", &pid, "-o", path.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    for columns in [80, 200] {
        let d = text(&["diff", a.to_str().unwrap(), b.to_str().unwrap()], columns);
        let summary =
            d.lines().find(|l| l.starts_with("regions: ")).unwrap_or_else(|| panic!("{d}"));
        // `regions: 80 appeared (2.5M virtual), 22 vanished (2.3M virtual)`
        let w: Vec<&str> = summary.split_whitespace().collect();
        let before = |word: &str| -> usize {
            let at = w.iter().position(|x| *x == word).unwrap();
            w[at - 1].parse().unwrap()
        };
        let changed = before("appeared") + before("vanished");
        let listed =
            d.lines().filter(|l| l.starts_with("  + pid") || l.starts_with("  - pid")).count();
        assert!(listed < changed, "more regions changed than the default lists:\n{d}");
        let marker = format!("  ({} more not shown; --top to change)", changed - listed);
        assert!(d.lines().any(|l| l == marker), "no {marker:?}:\n{d}");
    }
}

/// `cgroup` on a recorded tree without cgroup files says so, in one
/// line that fits 80 columns, rather than print a header over nothing.
#[test]
fn cgroup_without_cgroup_files_says_so() {
    let root = crate::support::repo().join("testdata/fixtures/linux/python3-mmap/proc");
    for columns in [80, 200] {
        let t = text(&["--proc-root", root.to_str().unwrap(), "cgroup"], columns);
        assert!(!t.contains("CGROUP  PROCS"), "{t}");
        let line =
            t.lines().find(|l| l.starts_with("no cgroup to show")).unwrap_or_else(|| panic!("{t}"));
        assert!(line.contains("no process read has a cgroup file"), "{line}");
        assert!(t.lines().all(|l| unicode_width::UnicodeWidthStr::width(l) <= columns), "{t}");
    }
}

/// The default table leaves memtally's own process out (it is in the
/// totals, so the machine picture still adds up), as `--name` does;
/// `--include-self` keeps its row.
#[test]
fn the_default_table_leaves_memtally_out() {
    let own_row = |extra: &[&str], columns: usize| {
        let child = memtally()
            .args(["top", "--all"])
            .args(extra)
            .env("COLUMNS", columns.to_string())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id().to_string();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        text.lines().any(|l| l.split_whitespace().next() == Some(pid.as_str()))
    };
    for columns in [80, 200] {
        assert!(!own_row(&[], columns), "its own row at {columns}");
        assert!(own_row(&["--include-self"], columns), "--include-self keeps it");
    }
}
