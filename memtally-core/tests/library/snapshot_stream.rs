//! `snapshot` written as it is read (`usecase::snapshot_stream`, a file of
//! JSON Lines) reads back as the whole document built in memory
//! (`usecase::snapshot`), byte for byte once serialized, but for the moment
//! it was taken: on every recorded /proc tree, and on a tree made here
//! where two processes share swapped shared memory with one process
//! between them (their shares are known only at the end).

use std::path::{Path, PathBuf};

use memtally_core::model::Note;
use memtally_core::source::parse::snapshot::parse;
use memtally_core::source::ProcRoot;
use memtally_core::usecase::snapshot::take;
use memtally_core::usecase::snapshot_stream::{take_into, Extras, Output};
use memtally_core::usecase::Silent;
use memtally_core::{Error, Selection};

use crate::support::repo;

fn word(n: &Note) -> String {
    format!("{n:?}")
}

/// The document without its `time` and `unix_time` (the moment differs).
fn timeless(mut doc: Vec<u8>) -> Vec<u8> {
    let find = |s: &[u8], n: &[u8]| s.windows(n.len()).position(|w| w == n);
    let from = find(&doc, b"\"time\":").expect("a time key");
    let to = find(&doc, b"\"host\":").expect("a host key");
    doc.drain(from..to);
    doc
}

/// The snapshot of every process of `root` built whole and streamed (read
/// back), each serialized as one document, without their moments.
fn both(root: &ProcRoot) -> (Vec<u8>, Vec<u8>) {
    let sel = Selection::of_pids(root.pids().unwrap());
    let taken = take(root, &sel, &Silent).unwrap();
    let mut whole = taken.snapshot;
    whole.notes = taken.notes.iter().map(word).collect();
    let whole = serde_json::to_vec(&whole).unwrap();
    let mut lines = Vec::new();
    let error = |e| Error::io("test output", e);
    let output = Output { out: &mut lines, word: &word, error: &error };
    let notes = take_into(root, &sel, &Silent, Extras::default(), output).unwrap();
    assert_eq!(notes.len(), taken.notes.len());
    assert!(lines.starts_with(b"{\"memtally_snapshot\":2,"), "a file of format 2");
    let streamed = serde_json::to_vec(&parse(&lines).unwrap()).unwrap();
    (timeless(whole), timeless(streamed))
}

fn trees() -> Vec<PathBuf> {
    let fixtures = repo().join("testdata/fixtures");
    let mut trees: Vec<PathBuf> = std::fs::read_dir(fixtures.join("linux"))
        .unwrap()
        .map(|e| e.unwrap().path().join("proc"))
        .filter(|p| p.is_dir())
        .collect();
    trees.push(fixtures.join("gpu/machine"));
    trees.push(fixtures.join("cgroup-v1-root"));
    trees.push(repo().join("../shared/fixtures/linux/gst-launch/proc"));
    trees.sort();
    trees
}

#[test]
fn the_streamed_snapshot_is_the_whole_documents_bytes_on_every_recorded_tree() {
    let mut compared = 0;
    for tree in trees() {
        if !tree.is_dir() {
            eprintln!("skipped {}: not there", tree.display());
            continue;
        }
        let (whole, streamed) = both(&ProcRoot::new(&tree));
        assert!(whole == streamed, "{}: the streamed snapshot differs", tree.display());
        compared += 1;
    }
    assert!(compared >= 5, "only {compared} trees compared");
}

/// Removes the tree it made, even when the test fails.
struct TempTree(PathBuf);

impl Drop for TempTree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// `smaps` with the first mapping of `/dev/shm` or a memfd given 64 kB
/// of swap (and nothing else changed).
fn with_shmem_swap(smaps: &str) -> String {
    let mut out = String::new();
    let (mut in_shmem, mut done) = (false, false);
    for line in smaps.lines() {
        let header = line.split_whitespace().next().is_some_and(|w| {
            w.contains('-') && w.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
        });
        if header {
            in_shmem = !done && (line.contains("/dev/shm/") || line.contains("/memfd:"));
        }
        if in_shmem && line.starts_with("Swap:") {
            out.push_str("Swap:                 64 kB\n");
            (in_shmem, done) = (false, true);
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    assert!(done, "no shared memory mapping to give swap");
    out
}

#[test]
fn processes_sharing_swapped_shared_memory_get_their_shares_in_place() {
    let linux = repo().join("testdata/fixtures/linux");
    let dir = std::env::temp_dir().join(format!("memtally-snapshot-stream-{}", std::process::id()));
    let _guard = TempTree(dir.clone());
    // Two copies of the browser, holding the same objects, and the
    // gst process (no shared memory) between them.
    for pid in ["11672", "20000"] {
        copy_dir(&linux.join("chromium-browser/proc/11672"), &dir.join(pid));
        let smaps = std::fs::read_to_string(dir.join(pid).join("smaps")).unwrap();
        std::fs::write(dir.join(pid).join("smaps"), with_shmem_swap(&smaps)).unwrap();
    }
    copy_dir(&linux.join("gst-launch-audiotestsrc/proc/11531"), &dir.join("15000"));
    std::fs::copy(linux.join("chromium-browser/proc/meminfo"), dir.join("meminfo")).unwrap();
    let (whole, streamed) = both(&ProcRoot::new(&dir));
    assert!(whole == streamed, "the streamed snapshot differs");
    // Each copy holds half of the object's 64 kB.
    let doc: serde_json::Value = serde_json::from_slice(&streamed).unwrap();
    let shares: Vec<u64> = doc["processes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["totals"]["shmem_swap"].as_u64().unwrap())
        .collect();
    assert_eq!(shares, vec![32 << 10, 0, 32 << 10]);
    assert_eq!(doc["totals"]["shmem_swap"].as_u64(), Some(64 << 10));
}

#[test]
fn large_processes_holding_swapped_shared_memory_are_written_whole() {
    // The browser's 839 mappings four times over (some 1.6 MB of region
    // lines) in two processes holding swapped shared memory, the gst
    // process between them.
    let linux = repo().join("testdata/fixtures/linux");
    let dir = std::env::temp_dir().join(format!("memtally-snapshot-large-{}", std::process::id()));
    let _guard = TempTree(dir.clone());
    let browser = linux.join("chromium-browser/proc/11672");
    let smaps = std::fs::read_to_string(browser.join("smaps")).unwrap();
    let mappings = smaps.lines().filter(|l| l.starts_with("Size:")).count();
    for pid in ["11672", "20000"] {
        copy_dir(&browser, &dir.join(pid));
        let large = with_shmem_swap(&smaps).repeat(4);
        std::fs::write(dir.join(pid).join("smaps"), large).unwrap();
    }
    copy_dir(&linux.join("gst-launch-audiotestsrc/proc/11531"), &dir.join("15000"));
    std::fs::copy(linux.join("chromium-browser/proc/meminfo"), dir.join("meminfo")).unwrap();
    let (whole, streamed) = both(&ProcRoot::new(&dir));
    assert!(whole == streamed, "the streamed snapshot differs");
    let doc: serde_json::Value = serde_json::from_slice(&streamed).unwrap();
    let regions: Vec<usize> = doc["processes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["regions"].as_array().unwrap().len())
        .collect();
    assert_eq!(regions, vec![4 * mappings, 155, 4 * mappings]);
}
