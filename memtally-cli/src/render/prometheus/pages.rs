//! The opt-in page figures of `serve --pages` / `export --pages` (issue
//! 22): each published row's exclusive bytes, and what the page read cost
//! and left out. None of these is written where the page read did not run
//! (not asked for, or refused: no CAP_SYS_ADMIN), never zeros.

use std::sync::atomic::AtomicU64;

use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::{Registry, Unit};

use memtally_core::analyze::metrics::{MetricRow, Metrics};

use super::Labels;

type Count = Gauge<u64, AtomicU64>;

/// Registers the page figures of `m`, the rows labelled by `labels_of`;
/// `what` is the row's kind (`process`, `program`, `cgroup`).
pub fn register(
    reg: &mut Registry,
    m: &Metrics,
    what: &str,
    labels_of: &dyn Fn(&MetricRow) -> Labels,
) {
    let Some(pages) = &m.pages else { return };
    let fam = Family::<Labels, Count>::default();
    for r in &m.rows {
        if let Some(v) = r.exclusive {
            fam.get_or_create(&labels_of(r)).set(v);
        }
    }
    let help = if what == "process" {
        "Resident pages (not shared memory) and swap slots no other process maps, from pagemap and kpagecount (--pages): what ending it gives back. Not summable: a page two processes share is neither's alone".to_string()
    } else {
        format!("Resident pages (not shared memory) and swap slots no process outside the {what} maps, from pagemap and kpagecount (--pages): what ending its processes gives back. The {what}'s own figure, not a sum of its processes'")
    };
    reg.register_with_unit(
        format!("memtally_{what}_exclusive"),
        format!("{help}. Absent for a row with a process the read guard skipped (memtally_pages_limited)"),
        Unit::Bytes,
        fam,
    );
    let limited = Family::<Vec<(&'static str, &'static str)>, Count>::default();
    for (reason, n) in [("mappings", pages.limited_mappings), ("read_budget", pages.limited_budget)]
    {
        limited.get_or_create(&vec![("reason", reason)]).set(n as u64);
    }
    reg.register(
        "memtally_pages_limited",
        "Processes of the published rows whose pages the read guard did not read (--pages): mappings = more than --max-mappings; read_budget = resident + swapped bytes, at 80 ms per GiB, past --read-budget",
        limited,
    );
    for (name, help, n) in [
        ("memtally_pages_processes_read", "Processes whose pages were read (--pages)", pages.read),
        (
            "memtally_pages_processes_unread",
            "Processes whose pages could not be read (they exited during the scan)",
            pages.unread,
        ),
    ] {
        let g = Count::default();
        g.set(n as u64);
        reg.register(name, help, g);
    }
    let g = Gauge::<f64, AtomicU64>::default();
    g.set(pages.duration_seconds);
    reg.register_with_unit(
        "memtally_pages_duration",
        "Seconds the page read took (the guard, pagemap, kpagecount): a part of memtally_scrape_duration_seconds",
        Unit::Seconds,
        g,
    );
}
