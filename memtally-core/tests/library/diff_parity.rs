//! `diff` of two `memtally snapshot` files, read a line at a time (each
//! region kept only as where its line begins, the ones listed read again
//! there; or, from a pipe, every region kept), gives what the whole
//! documents give: on every recorded /proc tree, with regions gone, new,
//! grown, processes unmatched or sharing a pid. The files are written here
//! from the documented format (docs/json.md), not by memtally's writer.

use std::io::Write;
use std::path::{Path, PathBuf};

use memtally_core::analyze::diff::{diff_digests, DiffOptions};
use memtally_core::model::snap_digest::Digest;
use memtally_core::model::snapshot::Snapshot;
use memtally_core::source::ProcRoot;
use memtally_core::usecase::diff::diff_files;
use memtally_core::usecase::snapshot::{load, take};
use memtally_core::usecase::Silent;
use memtally_core::Selection;
use serde_json::{json, Value};

use crate::support::repo;

fn snapshot_of(fixture: &str) -> Snapshot {
    let root = ProcRoot::new(repo().join("testdata/fixtures/linux").join(fixture).join("proc"));
    let pids = root.pids().unwrap();
    take(&root, &Selection::of_pids(pids), &Silent).unwrap().snapshot
}

/// `snap` as a snapshot file of format 2: the head line, each process's
/// region lines and then its line (its share of swapped shared memory and
/// exclusive figure left to the end line), the end line.
fn lines(snap: &Snapshot) -> Vec<u8> {
    let Value::Object(mut doc) = serde_json::to_value(snap).unwrap() else { panic!() };
    let mut out = Vec::new();
    let mut head = json!({});
    for k in ["kind", "time", "unix_time", "host", "kernel", "proc_root", "machine", "wss"] {
        if let Some(v) = doc.remove(k) {
            head[k] = v;
        }
    }
    // The version first: it says what the file is.
    writeln!(out, "{{\"memtally_snapshot\":2,{}", &head.to_string()[1..]).unwrap();
    let (mut shares, mut exclusive) = (Vec::new(), Vec::new());
    let processes = doc.remove("processes").unwrap();
    for mut p in processes.as_array().unwrap().iter().cloned() {
        for r in p.as_object_mut().unwrap().remove("regions").unwrap().as_array().unwrap() {
            writeln!(out, "{}", json!({ "region": r })).unwrap();
        }
        exclusive.push(p.as_object_mut().unwrap().remove("exclusive").unwrap_or(Value::Null));
        shares
            .push(p["totals"].as_object_mut().unwrap().remove("shmem_swap").unwrap_or(Value::Null));
        writeln!(out, "{}", json!({ "process": p })).unwrap();
    }
    let mut end = json!({"processes": shares.len(), "shmem_swap": shares});
    for k in ["totals", "categories", "notes", "exact"] {
        if let Some(v) = doc.remove(k) {
            end[k] = v;
        }
    }
    if end.get("exact").is_some() {
        end["exclusive"] = Value::Array(exclusive);
    }
    writeln!(out, "{}", json!({ "end": end })).unwrap();
    out
}

/// A path to read `bytes` from: a file, or a pipe written by a thread (a
/// file that cannot be read twice), held open while the path is used.
struct Input {
    path: PathBuf,
    pipe: Option<(std::thread::JoinHandle<()>, std::os::fd::OwnedFd)>,
}

fn input(dir: &Path, name: &str, bytes: Vec<u8>, piped: bool) -> Input {
    use std::os::fd::FromRawFd;
    if !piped {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        return Input { path, pipe: None };
    }
    let mut fds = [0; 2];
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: both ends were just made, and each is owned once.
    let (read, write) =
        unsafe { (std::os::fd::OwnedFd::from_raw_fd(fds[0]), std::fs::File::from_raw_fd(fds[1])) };
    let writer = std::thread::spawn(move || {
        let mut write = write;
        // The reader may stop early: whatever of it is read.
        let _ = write.write_all(&bytes);
    });
    Input { path: PathBuf::from(format!("/dev/fd/{}", fds[0])), pipe: Some((writer, read)) }
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
        for reshuffle in [false, true] {
            let later = changed(a, reshuffle);
            // The whole documents' diff and the files' bytes, made once for
            // the two ways of reading them (a file, a pipe).
            let (a_lines, later_lines) = (lines(a), lines(&later));
            for (before, after, before_lines, after_lines) in
                [(a, &later, &a_lines, &later_lines), (&later, a, &later_lines, &a_lines)]
            {
                let whole =
                    diff_digests(&Digest::of(before.clone()), &Digest::of(after.clone()), &opts);
                for piped in [false, true] {
                    let a = input(tmp.path(), "a.json", before_lines.clone(), piped);
                    let b = input(tmp.path(), "b.json", after_lines.clone(), piped);
                    let streamed = diff_files(&a.path, &b.path, &opts).unwrap();
                    for (writer, _) in [a.pipe, b.pipe].into_iter().flatten() {
                        writer.join().unwrap();
                    }
                    assert_eq!(
                        format!("{streamed:?}"),
                        format!("{whole:?}"),
                        "{name}, reshuffle {reshuffle}, piped {piped}"
                    );
                    if !piped {
                        // Read whole, the files are the snapshots written.
                        let back = serde_json::to_value(load(&a.path).unwrap()).unwrap();
                        assert_eq!(back, serde_json::to_value(before).unwrap(), "{name}");
                    }
                    listed += streamed.regions.len();
                }
            }
        }
    }
    assert!(listed > 100, "the changes list regions: {listed}");
}
