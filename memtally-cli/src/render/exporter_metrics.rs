//! The exporter's own cost, beside the figures it publishes (issue 26):
//! kept apart from `prometheus.rs`'s figure families so that each grows
//! on its own. The scan's duration and timestamp, and the processes read
//! and skipped, are `prometheus.rs`'s older `memtally_scrape_duration_seconds`,
//! `memtally_processes_*` and `memtally_kernel_threads`.

use std::sync::atomic::AtomicU64;

use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::{Registry, Unit};

use memtally_core::analyze::metrics::Collector;

/// The commit the binary was built from (build.rs: the one `--version`
/// names), `unknown` where it was built outside a git checkout.
pub const REVISION: &str = match env!("MEMTALLY_COMMIT").as_bytes() {
    [] => "unknown",
    _ => env!("MEMTALLY_COMMIT"),
};

/// Registers the exporter's own metrics of the scan `c`.
pub fn register(reg: &mut Registry, c: &Collector) {
    // `memtally_build_info{version,revision} 1`, as every exporter has one:
    // dashboards and alerts see which build each host runs.
    reg.register(
        "memtally_build",
        "Which memtally build publishes these figures: always 1",
        Info::new(vec![("version", env!("CARGO_PKG_VERSION")), ("revision", REVISION)]),
    );
    let g = Gauge::<u64, AtomicU64>::default();
    g.set(c.bytes_read);
    reg.register_with_unit(
        "memtally_scan_read",
        "Bytes the scan behind these figures read from /proc (stat, cmdline, smaps_rollup, status, meminfo, GPU fdinfo)",
        Unit::Bytes,
        g,
    );
    let limited = Family::<Vec<(&'static str, &'static str)>, Gauge<u64, AtomicU64>>::default();
    for (reason, n) in [("mappings", c.limited.mappings), ("read_budget", c.limited.read_budget)] {
        limited.get_or_create(&vec![("reason", reason)]).set(n as u64);
    }
    reg.register(
        "memtally_processes_limited",
        "Processes the read guard kept to smaps_rollup, status and GPU fdinfo (no smaps read): mappings = more than --max-mappings; read_budget = their reads passed --read-budget",
        limited,
    );
}
