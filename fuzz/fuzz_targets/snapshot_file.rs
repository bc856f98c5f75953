//! The `snapshot_file` target; its body is shared with the replay test
//! (memtally-core/tests/library/fuzz_replay.rs), see fuzz_bodies.rs.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../memtally-core/tests/library/fuzz_bodies.rs"]
mod bodies;

fuzz_target!(|data: &[u8]| bodies::snapshot_file(data));
