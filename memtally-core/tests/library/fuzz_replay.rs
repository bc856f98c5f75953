//! The fuzz targets' bodies (`fuzz_bodies`) over the seeds `scripts/fuzz.sh`
//! starts from, the crashers kept in `fuzz/regressions/TARGET/`, and each
//! seed with its numbers made huge: a quick, deterministic form of the
//! fuzzing, with the overflow checks of a test build on. CI runs it with
//! every `cargo test`; `cargo fuzz run -a` (scripts/fuzz.sh) is the long form.

use std::path::{Path, PathBuf};

use crate::fuzz_bodies;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// Files under `dir` (recursively) whose path ends with one of `names`.
fn files(dir: &Path, names: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() {
            files(&path, names, out);
        } else if names.is_empty() || names.iter().any(|n| path.ends_with(n)) {
            out.push(path);
        }
    }
}

/// `text` with every run of decimal digits replaced by `digits`, and every
/// run of 12 or more hex digits (an address) by `ffffffffffffffff`.
fn huge(text: &[u8], digits: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() * 2);
    let mut i = 0;
    while i < text.len() {
        let run = text[i..].iter().take_while(|b| b.is_ascii_hexdigit()).count();
        if run >= 12 {
            out.extend_from_slice(b"ffffffffffffffff");
            i += run;
        } else if text[i].is_ascii_digit() && (i == 0 || !text[i - 1].is_ascii_alphanumeric()) {
            let n = text[i..].iter().take_while(|b| b.is_ascii_digit()).count();
            out.extend_from_slice(digits);
            i += n;
        } else {
            out.push(text[i]);
            i += 1;
        }
    }
    out
}

/// Runs `body` over every input and two huge variants of each.
fn replay(target: &str, mut inputs: Vec<PathBuf>, made: Vec<(String, Vec<u8>)>, body: fn(&[u8])) {
    files(&repo().join("fuzz/regressions").join(target), &[], &mut inputs);
    let mut all: Vec<(String, Vec<u8>)> =
        inputs.iter().map(|p| (p.display().to_string(), std::fs::read(p).unwrap())).collect();
    all.extend(made);
    assert!(!all.is_empty(), "{target}: no seeds");
    for (name, data) in &all {
        for (what, input) in [
            ("as it is", data.clone()),
            ("u64::MAX numbers", huge(data, b"18446744073709551615")),
            ("8 EiB numbers", huge(data, b"9007199254740992")),
        ] {
            let run = std::panic::catch_unwind(|| body(&input));
            assert!(run.is_ok(), "fuzz target {target} panicked on {name} ({what})");
        }
    }
}

fn fixtures(under: &str, names: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    files(&repo().join(under), names, &mut out);
    out
}

#[test]
fn smaps_target_replays_its_seeds_and_crashers() {
    let seeds = fixtures("testdata/fixtures/linux", &["smaps", "smaps_rollup", "maps"]);
    replay("smaps", seeds, Vec::new(), fuzz_bodies::smaps);
}

#[test]
fn vmmap_target_replays_its_seeds_and_crashers() {
    let mut seeds = fixtures("testdata/fixtures/vmmap", &[]);
    files(&repo().join("../shared/fixtures/vmmap"), &[], &mut seeds);
    seeds.retain(|p| p.extension().is_some_and(|e| e == "txt"));
    replay("vmmap", seeds, Vec::new(), fuzz_bodies::vmmap);
}

#[test]
fn fdinfo_target_replays_its_seeds_and_crashers() {
    let mut seeds = Vec::new();
    files(&repo().join("testdata/fixtures/gpu/machine"), &[], &mut seeds);
    seeds.retain(|p| p.parent().is_some_and(|d| d.ends_with("fdinfo")));
    replay("fdinfo", seeds, Vec::new(), fuzz_bodies::fdinfo);
}

#[test]
fn status_target_replays_its_seeds_and_crashers() {
    let seeds = fixtures("testdata/fixtures", &["status"]);
    replay("status", seeds, Vec::new(), fuzz_bodies::status);
}

#[test]
fn stat_target_replays_its_seeds_and_crashers() {
    let seeds = fixtures("testdata/fixtures", &["stat"]);
    replay("stat", seeds, Vec::new(), fuzz_bodies::stat);
}

#[test]
fn fd_targets_target_replays_its_seeds_and_crashers() {
    let seeds = fixtures("testdata/fixtures/gpu/machine", &["fd_targets"]);
    replay("fd_targets", seeds, Vec::new(), fuzz_bodies::fd_targets);
}

/// Snapshots of the recorded trees made by the library: each smaps as a
/// format-1 document, and each tree as a snapshot file (format 2).
fn made_snapshots() -> Vec<(String, Vec<u8>)> {
    use memtally_core::model::{Process, SizeSource};
    let mut made: Vec<(String, Vec<u8>)> = fixtures("testdata/fixtures/linux", &["smaps"])
        .into_iter()
        .map(|path| {
            let text = std::fs::read(&path).unwrap();
            let regions = memtally_core::source::parse::smaps::SmapsReader::new(&text[..])
                .read_all()
                .unwrap();
            let p = Process {
                pid: 42,
                comm: "seed".into(),
                cmdline: "seed".into(),
                source: SizeSource::Smaps,
                regions,
                rollup: None,
                streamed: None,
                footprint: None,
            };
            let snap = memtally_core::analyze::snapshot::linux_snapshot(&[p], Default::default());
            (format!("a snapshot of {}", path.display()), serde_json::to_vec(&snap).unwrap())
        })
        .collect();
    for tree in ["python3-mmap", "gst-launch-audiotestsrc"] {
        use memtally_core::source::ProcRoot;
        use memtally_core::usecase::snapshot_stream::{take_into, Extras, Output};
        let root = ProcRoot::new(repo().join("testdata/fixtures/linux").join(tree).join("proc"));
        let sel = memtally_core::Selection::of_pids(root.pids().unwrap());
        let mut lines = Vec::new();
        let error = |e| memtally_core::Error::io("seed", e);
        let word = |n: &memtally_core::model::Note| format!("{n:?}");
        let output = Output { out: &mut lines, word: &word, error: &error };
        take_into(&root, &sel, &memtally_core::usecase::Silent, Extras::default(), output).unwrap();
        assert!(lines.starts_with(b"{\"memtally_snapshot\":2,"), "a file of format 2");
        made.push((format!("a snapshot file of {tree}"), lines));
    }
    made
}

#[test]
fn snapshot_target_replays_its_seeds_and_crashers() {
    // scripts/fuzz.sh seeds with memtally's own snapshots of the recorded
    // trees; made here from the same smaps and trees by the library.
    replay("snapshot", Vec::new(), made_snapshots(), fuzz_bodies::snapshot);
}

/// A report page around a one-object snapshot, as the HTML printer embeds it.
fn page(json: &[u8]) -> Vec<u8> {
    let json = String::from_utf8_lossy(json).replace('<', "\\u003c");
    let open = memtally_core::model::SNAPSHOT_ELEMENT;
    format!("<!doctype html>\n<html><body><p>seed</p>\n{open}{json}</script></body></html>\n")
        .into_bytes()
}

#[test]
fn report_page_target_replays_its_seeds_and_crashers() {
    let seeds = fixtures("testdata/snapshots/format1", &["report-a.html"]);
    assert_eq!(seeds.len(), 1, "the recorded page");
    let made = made_snapshots()
        .into_iter()
        .filter(|(_, json)| json.starts_with(b"{\"memtally_snapshot\":1"))
        .map(|(name, json)| (format!("a page of {name}"), page(&json)))
        .collect::<Vec<_>>();
    let recorded = std::fs::read(&seeds[0]).unwrap();
    for data in made.iter().map(|(_, d)| d).chain([&recorded]) {
        let snap = memtally_core::source::parse::snapshot_html::parse(data).unwrap();
        assert!(!snap.processes.is_empty(), "every page seed reads back");
    }
    replay("report_page", seeds, made, fuzz_bodies::report_page);
}

#[test]
fn snapshot_file_target_replays_its_seeds_and_crashers() {
    let mut seeds = fixtures("testdata/snapshots/format1", &["a.json", "b.json", "report-a.html"]);
    seeds.extend(fixtures("testdata/fixtures/vmmap", &["04_modern_gpu_purge.txt"]));
    // Every seed reads: the body's comparisons run on each (not only its
    // early return on a document that does not read).
    let path = fuzz_bodies::snapshot_file_path();
    let made = made_snapshots();
    for (name, data) in seeds
        .iter()
        .map(|p| (p.display().to_string(), std::fs::read(p).unwrap()))
        .chain(made.clone())
    {
        std::fs::write(&path, &data).unwrap();
        let loaded = memtally_core::usecase::snapshot::load(&path);
        assert!(loaded.is_ok_and(|s| !s.processes.is_empty()), "{name} reads back");
    }
    replay("snapshot_file", seeds, made, fuzz_bodies::snapshot_file);
    let _ = std::fs::remove_file(path);
}
