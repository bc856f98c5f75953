//! The `procfs` crate's way to read a process's smaps, for the benchmark in
//! `bench/smaps/` (memtally parses smaps with its own streaming parser; this
//! is the peer it was measured against).
//!
//!     cargo run --release --example procfs_smaps -- PID
//!
//! Reads and parses `/proc/PID/smaps` with `procfs::process::Process::smaps`
//! and prints one JSON object: the number of mappings and every smaps key
//! summed over them, in bytes (`VmFlags` and the like are left out).
//! Linux only, as the `procfs` crate.

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("procfs_smaps: reads Linux's /proc; Linux only");
    std::process::exit(2);
}

#[cfg(target_os = "linux")]
fn main() {
    use std::collections::BTreeMap;

    let pid: i32 = match std::env::args().nth(1).map(|a| a.parse()) {
        Some(Ok(pid)) => pid,
        _ => {
            eprintln!("usage: procfs_smaps PID");
            std::process::exit(2);
        }
    };
    let maps = match procfs::process::Process::new(pid).and_then(|p| p.smaps()) {
        Ok(maps) => maps,
        Err(e) => {
            eprintln!("procfs_smaps: pid {pid}: {e}");
            std::process::exit(1);
        }
    };
    let mut totals: BTreeMap<String, u64> = BTreeMap::new();
    let mut regions = 0u64;
    for map in maps.iter() {
        regions += 1;
        for (key, value) in &map.extension.map {
            *totals.entry(key.clone()).or_default() += value;
        }
    }
    let doc = serde_json::json!({ "pid": pid, "regions": regions, "totals": totals });
    println!("{doc}");
}
