//! `diff` of two `memtally snapshot` files, streamed (the later file read
//! once against the earlier one's identities, the earlier one again only
//! for what vanished), gives what the whole documents give: on every
//! recorded /proc tree, with regions gone, new, grown, processes
//! unmatched or sharing a pid, and in either order of a process's keys.

use std::io::Write;
use std::path::Path;

use memtally_core::analyze::diff::{diff_digests, DiffOptions};
use memtally_core::model::snapshot::{Digest, Snapshot};
use memtally_core::source::ProcRoot;
use memtally_core::usecase::diff::diff_files;
use memtally_core::usecase::snapshot::{load, take};
use memtally_core::usecase::Silent;
use memtally_core::Selection;
use serde_json::Value;

use crate::support::repo;

fn snapshot_of(fixture: &str) -> Snapshot {
    let root = ProcRoot::new(repo().join("testdata/fixtures/linux").join(fixture).join("proc"));
    let pids = root.pids().unwrap();
    take(&root, &Selection::of_pids(pids), &Silent).unwrap().snapshot
}

/// Writes `snap` as JSON; with `regions_first`, each process's `regions`
/// come before its `pid` (a reader must not count on the order).
fn write(path: &Path, snap: &Snapshot, regions_first: bool) {
    let Value::Object(doc) = serde_json::to_value(snap).unwrap() else { panic!() };
    let mut f = std::fs::File::create(path).unwrap();
    write!(f, "{{\"memtally_snapshot\":{}", doc["memtally_snapshot"]).unwrap();
    for (k, v) in doc.iter().filter(|(k, _)| *k != "memtally_snapshot" && *k != "processes") {
        write!(f, ",{}:{v}", Value::String(k.clone())).unwrap();
    }
    f.write_all(b",\"processes\":[").unwrap();
    for (i, p) in doc["processes"].as_array().unwrap().iter().enumerate() {
        let mut entries: Vec<(&String, &Value)> = p.as_object().unwrap().iter().collect();
        if regions_first {
            entries.sort_by_key(|(k, _)| *k != "regions");
        }
        let body: Vec<String> =
            entries.iter().map(|(k, v)| format!("{}:{v}", Value::String((*k).clone()))).collect();
        write!(f, "{}{{{}}}", if i > 0 { "," } else { "" }, body.join(",")).unwrap();
    }
    f.write_all(b"]}").unwrap();
}

/// The later snapshot: every third region gone, one new, one grown; and,
/// with `reshuffle`, one process under a new pid and a second process
/// under the pid of the first.
fn changed(a: &Snapshot, reshuffle: bool) -> Snapshot {
    let mut b = a.clone();
    for p in &mut b.processes {
        let mut i = 0;
        p.regions.retain(|_| {
            i += 1;
            i % 3 != 0
        });
        if let Some(r) = p.regions.first().cloned() {
            let mut new = r.clone();
            new.start = new.start.map(|s| s + 1);
            new.path = Some("/new/mapping".into());
            p.regions.push(new);
        }
        if let Some(r) = p.regions.get_mut(1) {
            r.sizes.rss = Some(r.sizes.rss.unwrap_or(0) + 4096);
        }
    }
    if reshuffle && !b.processes.is_empty() {
        b.processes[0].pid = b.processes[0].pid.map(|p| p + 1_000_000);
        let mut twin = a.processes[0].clone();
        twin.comm = "twin".into();
        twin.regions.truncate(5);
        b.processes.push(twin);
    }
    b
}

#[test]
fn streamed_diff_equals_the_diff_of_whole_documents() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = DiffOptions::default().with_min_delta(0);
    let mut all = snapshot_of("gst-launch-audiotestsrc");
    let mut cases = Vec::new();
    for fixture in
        ["chromium-browser", "chromium-renderer", "gst-launch-audiotestsrc", "python3-mmap"]
    {
        let s = snapshot_of(fixture);
        if fixture != "gst-launch-audiotestsrc" {
            all.processes.extend(s.processes.iter().cloned());
        }
        cases.push((fixture, s));
    }
    cases.push(("all", all));
    let mut listed = 0;
    for (name, a) in &cases {
        for (reshuffle, regions_first) in
            [(false, false), (true, false), (false, true), (true, true)]
        {
            for (before, after) in
                [(a.clone(), changed(a, reshuffle)), (changed(a, reshuffle), a.clone())]
            {
                let (pa, pb) = (tmp.path().join("a.json"), tmp.path().join("b.json"));
                write(&pa, &before, regions_first);
                write(&pb, &after, regions_first);
                let streamed = diff_files(&pa, &pb, &opts).unwrap();
                let whole = diff_digests(
                    &Digest::of(load(&pa).unwrap()),
                    &Digest::of(load(&pb).unwrap()),
                    &opts,
                );
                assert_eq!(
                    format!("{streamed:?}"),
                    format!("{whole:?}"),
                    "{name}, reshuffle {reshuffle}, regions first {regions_first}"
                );
                listed += streamed.regions.len();
            }
        }
    }
    assert!(listed > 100, "the changes list regions: {listed}");
}
