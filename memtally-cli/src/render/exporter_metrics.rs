//! The exporter's own cost, beside the figures it publishes (issue 26):
//! kept apart from `prometheus.rs`'s figure families so that each grows
//! on its own. The scan's duration and timestamp, and the processes read
//! and skipped, are `prometheus.rs`'s older `memtally_scrape_duration_seconds`,
//! `memtally_processes_*` and `memtally_kernel_threads`.

use std::sync::atomic::AtomicU64;

use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::{Registry, Unit};

use memtally_core::analyze::metrics::Collector;

/// Registers the exporter's own metrics of the scan `c`.
pub fn register(reg: &mut Registry, c: &Collector) {
    let g = Gauge::<u64, AtomicU64>::default();
    g.set(c.bytes_read);
    reg.register_with_unit(
        "memtally_scan_read",
        "Bytes the scan behind these figures read from /proc (stat, cmdline, smaps_rollup, status, meminfo, GPU fdinfo)",
        Unit::Bytes,
        g,
    );
}
