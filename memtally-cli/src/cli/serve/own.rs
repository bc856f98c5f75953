//! The exporter's own process, as every Prometheus client library
//! publishes it (`process_*`, the names client_golang's process collector
//! gives): what a memory tool costs the host is scrapeable beside what it
//! measures. Read at each scan, from the exporter's own process (never
//! through `--proc-root`, which may be another machine's or a recording).

use std::sync::atomic::AtomicU64;
use std::time::{SystemTime, UNIX_EPOCH};

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::{Registry, Unit};

/// The figures of this process that the system gives.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Own {
    /// User + system CPU time, seconds (`CLOCK_PROCESS_CPUTIME_ID`).
    pub cpu_seconds: Option<f64>,
    /// Resident bytes (`/proc/self/statm`, Linux).
    pub resident: Option<u64>,
    /// Virtual bytes (`/proc/self/statm`, Linux).
    pub virtual_bytes: Option<u64>,
    /// Open file descriptors (`/proc/self/fd`, Linux).
    pub open_fds: Option<u64>,
    /// The soft limit of open file descriptors (`RLIMIT_NOFILE`).
    pub max_fds: Option<u64>,
}

impl Own {
    /// This process's figures now.
    pub fn read() -> Own {
        let cpu = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
        let (virtual_bytes, resident, open_fds) = memory_and_files();
        Own {
            cpu_seconds: Some(cpu.tv_sec as f64 + cpu.tv_nsec as f64 / 1e9),
            max_fds: rustix::process::getrlimit(rustix::process::Resource::Nofile).current,
            virtual_bytes,
            resident,
            open_fds,
        }
    }
}

/// Virtual and resident bytes (`/proc/self/statm`) and open file
/// descriptors (`/proc/self/fd`).
#[cfg(target_os = "linux")]
fn memory_and_files() -> (Option<u64>, Option<u64>, Option<u64>) {
    let page = rustix::param::page_size() as u64;
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let mut pages = statm.split_ascii_whitespace().map(|n| n.parse::<u64>().ok().map(|n| n * page));
    let (virtual_bytes, resident) = (pages.next().flatten(), pages.next().flatten());
    let open_fds =
        std::fs::read_dir("/proc/self/fd").ok().map(|d| d.filter(|e| e.is_ok()).count() as u64);
    (virtual_bytes, resident, open_fds)
}

/// Not read on this system (no `/proc`).
#[cfg(not(target_os = "linux"))]
fn memory_and_files() -> (Option<u64>, Option<u64>, Option<u64>) {
    (None, None, None)
}

/// The wall-clock time now, seconds since the epoch: the start time
/// `serve` records as it begins.
pub fn now_unix() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

/// Registers `own` and the start time `started` (seconds since the epoch).
pub fn register(reg: &mut Registry, own: &Own, started: f64) {
    if let Some(cpu) = own.cpu_seconds {
        let c = Counter::<f64, AtomicU64>::default();
        c.inc_by(cpu);
        reg.register_with_unit(
            "process_cpu",
            "Total user and system CPU time spent in seconds",
            Unit::Seconds,
            c,
        );
    }
    let mut bytes = |name: &str, help: &str, unit: Option<Unit>, v: Option<u64>| {
        if let Some(v) = v {
            let g = Gauge::<u64, AtomicU64>::default();
            g.set(v);
            match unit {
                Some(u) => reg.register_with_unit(name, help, u, g),
                None => reg.register(name, help, g),
            }
        }
    };
    bytes(
        "process_resident_memory",
        "Resident memory size in bytes",
        Some(Unit::Bytes),
        own.resident,
    );
    bytes(
        "process_virtual_memory",
        "Virtual memory size in bytes",
        Some(Unit::Bytes),
        own.virtual_bytes,
    );
    bytes("process_open_fds", "Number of open file descriptors", None, own.open_fds);
    bytes("process_max_fds", "Maximum number of open file descriptors", None, own.max_fds);
    let g = Gauge::<f64, AtomicU64>::default();
    g.set(started);
    reg.register_with_unit(
        "process_start_time",
        "Start time of the process since unix epoch in seconds",
        Unit::Seconds,
        g,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_figures_are_this_process() {
        let own = Own::read();
        assert!(own.cpu_seconds.is_some_and(|s| s > 0.0), "{own:?}");
        assert!(own.max_fds.is_some_and(|n| n > 2), "{own:?}");
        #[cfg(target_os = "linux")]
        {
            let r = own.resident.unwrap();
            assert!(r > 1 << 20 && r < own.virtual_bytes.unwrap(), "{own:?}");
            assert!(own.open_fds.is_some_and(|n| n >= 3), "{own:?}");
        }
    }
}
