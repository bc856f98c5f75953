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

#[test]
fn snapshot_target_replays_its_seeds_and_crashers() {
    // scripts/fuzz.sh seeds with memtally's own snapshots of the recorded
    // trees; made here from the same smaps by the library.
    use memtally_core::model::{Process, SizeSource};
    let made = fixtures("testdata/fixtures/linux", &["smaps"])
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
    replay("snapshot", Vec::new(), made, fuzz_bodies::snapshot);
}
