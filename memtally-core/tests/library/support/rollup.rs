//! A `smaps_rollup` read with a plain loop, independent of memtally's
//! parser, to hold memtally's figures against. memtally-cli's test
//! support includes this file by path.

use std::collections::BTreeMap;
use std::path::Path;

/// `/proc/PID/smaps_rollup` (or a recorded copy) as snake_case name -> bytes.
pub fn rollup(path: &Path) -> BTreeMap<String, u64> {
    let text = std::fs::read_to_string(path).expect("smaps_rollup readable");
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            let kb: u64 = v.trim().strip_suffix(" kB")?.trim().parse().ok()?;
            Some((memtally_core::model::snake_case(k), kb * 1024))
        })
        .collect()
}
