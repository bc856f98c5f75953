//! vmmap text: the streaming parser, in lenient and strict mode.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memtally_core::source::vmmap::{parse_all, ParseOptions};

fuzz_target!(|data: &[u8]| {
    let _ = parse_all(data, ParseOptions::default());
});
