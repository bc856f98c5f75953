//! Snapshot JSON (and show JSON): loading, and a diff against itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memtally_core::analyze::diff::{diff, DiffOptions};
use memtally_core::source::snapshot_file::from_json;

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else { return };
    let Ok(snap) = from_json(value) else { return };
    let d = diff(&snap, &snap, &DiffOptions { sort: vec!["dirty".into()], min_delta: 0 });
    assert!(d.processes.is_empty(), "a snapshot equals itself");
    let _ = serde_json::to_string(&snap);
});
