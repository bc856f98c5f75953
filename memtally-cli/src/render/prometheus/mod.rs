//! Prometheus exposition of [`Metrics`]: the text format 0.0.4 (what
//! `curl` and node_exporter's textfile collector read) or OpenMetrics 1.0
//! (what Prometheus asks for first). Both are encoded by
//! `prometheus-client`, the Prometheus project's Rust client, from one
//! registry built per scan; every metric is a gauge, in bytes or a count,
//! and a figure the scan does not have is left out, never written as 0.
//! The metric list is in docs/prometheus.md.

use std::sync::atomic::{AtomicI64, AtomicU64};

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::{Registry, Unit};

use memtally_core::analyze::machine::Machine;
use memtally_core::analyze::metrics::{GpuFigures, MetricRow, Metrics};
use memtally_core::model::{Figure as SizeFigure, Named, Sizes, ZramStat};

use crate::render::table::scrub_label;

mod pages;
mod rows;

/// The wire format of one exposition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exposition {
    /// Prometheus text format 0.0.4.
    Text,
    /// OpenMetrics 1.0 text (ends in `# EOF`).
    OpenMetrics,
}

impl Exposition {
    /// The `Content-Type` to answer with.
    pub fn content_type(self) -> &'static str {
        match self {
            Exposition::Text => prometheus_client::encoding::prometheus_text::CONTENT_TYPE,
            Exposition::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
        }
    }
}

/// The per-row byte figures: (name without `_bytes`, help, how to get it).
/// Each help says whether a sum over processes means something: the
/// proportional and private figures add up, the full-count ones count a
/// shared page once in every process that maps it.
type Figure = (&'static str, &'static str, fn(&Sizes) -> Option<u64>);
pub(super) const FIGURES: &[Figure] = &[
    ("pss", "Proportional set size: resident bytes, each shared page divided among the processes mapping it. Summable over processes", |s| s.pss),
    ("pss_dirty", "Pss_Dirty: the written part of PSS, each shared dirty page divided among its processes (Linux 6.0 and later). Summable over processes", |s| s.pss_dirty),
    ("uss", "Unique set size: private clean + private dirty bytes; on exit anonymous pages are freed, file pages stay in the page cache, tmpfs/shm pages stay while their file exists. Summable over processes", |s| s.uss()),
    ("rss", "Resident set size: resident bytes, shared pages counted in full. Not summable: a shared page counts in every process", |s| s.rss),
    ("swap", "Swapped-out bytes (smaps Swap), shared swap counted in full. Not summable: sum swap_pss instead", |s| s.swap),
    ("swap_pss", "Swapped-out bytes, shared swap divided like PSS (smaps SwapPss). Summable over processes", |s| s.swap_pss),
    ("private_dirty", "Resident pages only this process has written: freed when it exits (tmpfs/shm pages stay while their file exists), or swapped. Summable over processes", |s| s.private_dirty),
    ("thp", "Transparent huge pages mapped: AnonHugePages + ShmemPmdMapped + FilePmdMapped, counted in full. Not summable: huge pages a forked child shares count in each", |s| s.figure(SizeFigure::Thp)),
    ("ksm", "KSM: pages merged by kernel same-page merging, counted in full in every process that maps them. Not summable", |s| s.ksm),
    ("hugetlb", "hugetlbfs pages mapped (Shared_Hugetlb + Private_Hugetlb; in neither RSS nor PSS), shared ones counted in full. Not summable", |s| s.figure(SizeFigure::Hugetlb)),
    ("shmem_swap", "Swapped shared memory (tmpfs, /dev/shm, memfd, SysV) that SwapPss leaves out: this process's share, each object counted once across the scan (swap_pss + shmem_swap is the swap it holds). Summable over processes", |s| s.shmem_swap),
    ("footprint", "Chromium's private memory footprint: status RssAnon + VmSwap, per process only. Not summable: anonymous pages shared after fork count in full in each (sum footprint_pss instead)", |s| s.footprint),
    ("rss_peak", "The most resident the process has been over its life (status VmHWM), per process only. Not summable: shared pages count in full, and peaks of different moments do not add up", |s| s.rss_peak),
    ("footprint_pss", "The footprint in summable form: Pss_Anon + SwapPss, shared anonymous pages divided among the processes mapping them. Summable over processes", |s| s.footprint_pss()),
];

pub(super) type GpuFigure = (&'static str, &'static str, fn(&GpuFigures) -> Option<u64>);
/// A row's labels.
pub(crate) type Labels = Vec<(&'static str, String)>;
pub(super) type Bytes = Gauge<u64, AtomicU64>;

/// Builds the registry holding every metric of `m`.
pub fn registry(m: &Metrics) -> Registry {
    let mut reg = Registry::default();
    for grouping in std::iter::once(m).chain(&m.also) {
        rows::register(&mut reg, grouping);
    }
    let labels_of = |r: &MetricRow| rows::labels(m.by, r);
    pages::register(&mut reg, m, m.by.name(), &labels_of);

    // The rest, added up.
    let rest = reg.sub_registry_with_prefix("memtally_other_processes");
    for (name, help, get) in FIGURES {
        if let Some(v) = get(&m.other.sizes) {
            let g = Bytes::default();
            g.set(v);
            rest.register_with_unit(
                *name,
                format!("{help}. Summed over the processes not in the first --top rows"),
                Unit::Bytes,
                g,
            );
        }
    }
    if let Some(gpu) = &m.other.gpu {
        for (name, v) in [("gpu_resident", gpu.resident), ("gpu_purgeable", gpu.purgeable)] {
            if let Some(v) = v {
                let g = Bytes::default();
                g.set(v);
                rest.register_with_unit(
                    name,
                    "GPU bytes of the processes not in the first --top rows",
                    Unit::Bytes,
                    g,
                );
            }
        }
    }
    gauge(
        &mut reg,
        "memtally_other_processes",
        "Processes not in the first --top rows (their bytes are in memtally_other_processes_*_bytes)",
        m.other.processes as u64,
    );

    if let Some(mm) = &m.machine {
        let machine = reg.sub_registry_with_prefix("memtally_machine");
        let figures: [(&str, &str, Option<u64>); 9] = [
            ("total", "MemTotal", Some(mm.total)),
            ("available", "MemAvailable", mm.available),
            ("free", "MemFree", Some(mm.free)),
            ("used", "MemTotal - MemAvailable: used as free(1) (procps-ng 4.0.1 and later) and htop print it", Some(mm.used)),
            ("buff_cache", "Buffers + Cached + SReclaimable: free(1)'s buff/cache", mm.buff_cache),
            ("processes_pss", "Sum of PSS of every process read", Some(mm.processes_pss)),
            ("kernel", "Slab + other KReclaimable + KernelStack + PageTables + SecPageTables + VmallocUsed + Percpu", mm.kernel),
            ("kernel_reclaimable", "KReclaimable (or SReclaimable): the part of kernel the kernel reclaims under pressure", mm.kernel_reclaimable),
            ("cache_unmapped", "Buffers + Cached + SwapCached - sum of Pss_File and Pss_Shmem: page cache and shared memory no process maps", mm.cache_unmapped),
        ];
        for (name, help, v) in figures {
            if let Some(v) = v {
                let g = Bytes::default();
                g.set(v);
                machine.register_with_unit(name, help, Unit::Bytes, g);
            }
        }
        let g = Gauge::<i64, AtomicI64>::default();
        g.set(mm.unattributed);
        machine.register_with_unit(
            "unattributed",
            "total - free - processes_pss - kernel - cache_unmapped: unreadable processes, huge page pools, compressed swap (zram, zswap), drivers (GPU); may be negative",
            Unit::Bytes,
            g,
        );
        machine_swap_and_thp(machine, mm);
        let fam = Family::<Labels, Gauge<i64, AtomicI64>>::default();
        for l in &mm.lines {
            fam.get_or_create(&vec![("line", l.name.to_string()), ("group", l.group.to_string())])
                .set(l.bytes);
        }
        machine.register_with_unit(
            "waterfall",
            "MemTotal split into lines that add up to it exactly (sum by line = memtally_machine_total_bytes); the line unexplained may be negative; sources in docs/prometheus.md",
            Unit::Bytes,
            fam,
        );
    }

    if let Some(n) = m.oom_kills {
        let c = Counter::<u64, AtomicU64>::default();
        c.inc_by(n);
        reg.register(
            "memtally_machine_oom_kills",
            "Processes the kernel's OOM killer killed since boot (/proc/vmstat oom_kill), whatever the selection",
            c,
        );
    }
    let c = &m.collector;
    gauge(
        &mut reg,
        "memtally_processes_scanned",
        "Processes whose memory the scan read (including those read from status only)",
        c.scanned as u64,
    );
    let unreadable = Family::<Labels, Bytes>::default();
    unreadable.get_or_create(&vec![("reason", "restricted".into())]).set(c.restricted as u64);
    unreadable.get_or_create(&vec![("reason", "failed".into())]).set(c.failed as u64);
    reg.register(
        "memtally_processes_unreadable",
        "Processes whose smaps_rollup could not be read: restricted = permission denied, RSS only from status (no PSS); failed = nothing read",
        unreadable,
    );
    gauge(
        &mut reg,
        "memtally_processes_vanished",
        "Processes that exited while the scan read them",
        c.vanished as u64,
    );
    gauge(
        &mut reg,
        "memtally_kernel_threads",
        "Kernel threads left out (no user memory)",
        c.kernel_threads as u64,
    );
    let seconds = |name: &str, help: &str, v: f64, reg: &mut Registry| {
        let g = Gauge::<f64, AtomicU64>::default();
        g.set(v);
        reg.register_with_unit(name, help, Unit::Seconds, g);
    };
    seconds(
        "memtally_scrape_duration",
        "Seconds the scan behind these figures took (a result younger than --min-interval is reused)",
        c.duration_seconds,
        &mut reg,
    );
    seconds(
        "memtally_scan_timestamp",
        "When the scan behind these figures ended, seconds since the epoch",
        c.unix_time,
        &mut reg,
    );
    crate::render::exporter_metrics::register(&mut reg, c);
    reg
}

/// `memtally_machine_swap_*`, `_zswap*`, `_zram_*{device}` and `_thp_*`
/// (docs/prometheus.md): what `free` says of swap, the RAM compressed
/// swap holds beside what it holds, and the THP parts of the anonymous,
/// shmem and page cache figures. Machine-wide: one sample each (zram: one
/// per device, and they add up to the waterfall's `zram` line).
fn machine_swap_and_thp(machine: &mut Registry, mm: &Machine) {
    let mut one = |name: &str, help: &str, v: Option<u64>| {
        if let Some(v) = v {
            let g = Bytes::default();
            g.set(v);
            machine.register_with_unit(name, help, Unit::Bytes, g);
        }
    };
    if let Some(s) = &mm.swap {
        one("swap_total", "SwapTotal: swap space, on disk or zram", Some(s.total));
        one(
            "swap_used",
            "SwapTotal - SwapFree: swap space in use, as free(1) prints it",
            Some(s.used),
        );
        one(
            "swap_cached",
            "SwapCached: pages in RAM that also have a copy in swap (the swap_cache line)",
            s.cached,
        );
        one(
            "zswap",
            "Zswap: RAM of zswap's compressed pool (the zswap line of the waterfall)",
            s.zswap,
        );
        one("zswapped", "Zswapped: what zswap's pool holds, uncompressed", s.zswapped);
    }
    if let Some(t) = &mm.thp {
        one("thp_anon", "AnonHugePages: anonymous memory in transparent huge pages (part of AnonPages, not a waterfall line of its own)", t.anon);
        one(
            "thp_shmem",
            "ShmemHugePages: shared memory in transparent huge pages (part of Shmem)",
            t.shmem,
        );
        one(
            "thp_file",
            "FileHugePages: page cache in transparent huge pages (part of Cached)",
            t.file,
        );
    }
    let Some(s) = mm.swap.as_ref().filter(|s| !s.zram.is_empty()) else { return };
    type Zram = (&'static str, &'static str, fn(&ZramStat) -> u64);
    let figures: [Zram; 4] = [
        ("zram_mem_used", "zram mm_stat mem_used_total: RAM the device uses; the sum over devices is the waterfall's zram line", |z| z.mem_used_total),
        ("zram_orig_data", "zram mm_stat orig_data_size: what the device holds, uncompressed", |z| z.orig_data_size),
        ("zram_compr_data", "zram mm_stat compr_data_size: what the device holds, compressed (orig_data / compr_data is the compression ratio)", |z| z.compr_data_size),
        ("zram_mem_limit", "zram mm_stat mem_limit: the most RAM the device may use; 0 means no limit", |z| z.mem_limit),
    ];
    for (name, help, get) in figures {
        let fam = Family::<Labels, Bytes>::default();
        for d in &s.zram {
            fam.get_or_create(&vec![("device", scrub_label(d.name.clone()))]).set(get(&d.stat));
        }
        machine.register_with_unit(name, help, Unit::Bytes, fam);
    }
}

fn gauge(reg: &mut Registry, name: &str, help: &str, v: u64) {
    let g = Bytes::default();
    g.set(v);
    reg.register(name, help, g);
}

/// Encodes `m` in the chosen format.
pub fn encode(m: &Metrics, format: Exposition) -> String {
    encode_registry(&registry(m), format)
}

/// Encodes a registry (one [`registry`] made, and added to) in the chosen format.
pub fn encode_registry(reg: &Registry, format: Exposition) -> String {
    let mut out = String::new();
    // Writing into a String cannot fail.
    let _ = match format {
        Exposition::Text => prometheus_client::encoding::prometheus_text::encode(&mut out, reg),
        Exposition::OpenMetrics => prometheus_client::encoding::text::encode(&mut out, reg),
    };
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use memtally_core::analyze::metrics::{build, Collector};
    use memtally_core::analyze::top::TopBy;
    use memtally_core::model::SizeSource;
    use memtally_core::model::{ProcInfo, ProcMemory};
    use std::collections::{BTreeMap, HashMap};

    fn proc(pid: u32, comm: &str, pss: Option<u64>) -> ProcMemory {
        let known = pss.is_some();
        ProcMemory {
            info: ProcInfo {
                pid,
                comm: comm.into(),
                program: comm.into(),
                cgroup: Some("/system.slice/x.service".into()),
                ..Default::default()
            },
            source: if known { SizeSource::SmapsRollup } else { SizeSource::Status },
            sizes: Sizes {
                pss,
                rss: Some(3 << 20),
                private_clean: known.then_some(4096),
                private_dirty: known.then_some(1 << 20),
                swap: known.then_some(0),
                swap_pss: known.then_some(0),
                ..Default::default()
            },
        }
    }

    fn sample() -> Metrics {
        let ps = vec![
            proc(10, "plain", Some(2 << 20)),
            proc(11, "tab\there", Some(1 << 20)),
            proc(12, "status-only", None),
            proc(13, "rest", Some(4096)),
        ];
        let mi = memtally_core::source::parse::meminfo::parse(
            b"MemTotal: 1000000 kB\nMemFree: 200000 kB\nMemAvailable: 600000 kB\nBuffers: 10 kB\nCached: 300 kB\nSlab: 50 kB\n",
        )
        .unwrap();
        let gpu: HashMap<u32, GpuFigures> =
            [(10, GpuFigures { resident: Some(8192), purgeable: Some(4096) })].into();
        let c =
            Collector { scanned: 4, restricted: 1, duration_seconds: 0.25, ..Default::default() };
        build(&ps, TopBy::Process, 2, Some(&gpu), Some(&mi), c)
    }

    /// Parses with prometheus-parse, checking that no sample line was skipped.
    fn parse(text: &str) -> Vec<prometheus_parse::Sample> {
        let lines = text.lines().map(|l| Ok(l.to_string()));
        let scrape = prometheus_parse::Scrape::parse(lines).expect("parses");
        let sample_lines = text.lines().filter(|l| !l.starts_with('#') && !l.is_empty()).count();
        assert_eq!(scrape.samples.len(), sample_lines, "every sample line parsed:\n{text}");
        scrape.samples
    }

    fn value(s: &prometheus_parse::Sample) -> f64 {
        match s.value {
            prometheus_parse::Value::Gauge(v) => v,
            ref other => panic!("{} is not a gauge: {other:?}", s.metric),
        }
    }

    #[test]
    fn text_format_parses_with_valid_names_and_the_figures() {
        let text = encode(&sample(), Exposition::Text);
        let samples = parse(&text);
        let name_ok = |n: &str| {
            let mut c = n.chars();
            c.next().is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
                && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
        };
        let mut by: BTreeMap<(String, Option<String>), f64> = BTreeMap::new();
        for s in &samples {
            assert!(name_ok(&s.metric) && s.metric.starts_with("memtally_"), "{}", s.metric);
            for k in s.labels.keys() {
                assert!(name_ok(k) && !k.starts_with("__"), "label {k}");
            }
            by.insert((s.metric.clone(), s.labels.get("pid").map(String::from)), value(s));
        }
        let get =
            |m: &str, pid: Option<&str>| by.get(&(m.to_string(), pid.map(String::from))).copied();
        assert_eq!(get("memtally_process_pss_bytes", Some("10")), Some((2 << 20) as f64));
        assert_eq!(get("memtally_process_uss_bytes", Some("10")), Some(((1 << 20) + 4096) as f64));
        // Past --top 2: the status-only process adds its RSS to the rest, no PSS.
        assert_eq!(get("memtally_process_rss_bytes", Some("12")), None);
        // The rest is a sum over two processes: RSS is not summable.
        assert_eq!(get("memtally_other_processes_rss_bytes", None), None);
        assert_eq!(get("memtally_process_gpu_resident_bytes", Some("10")), Some(8192.0));
        assert_eq!(get("memtally_process_gpu_purgeable_bytes", Some("10")), Some(4096.0));
        assert_eq!(get("memtally_process_gpu_resident_bytes", Some("11")), None);
        assert_eq!(get("memtally_other_processes_pss_bytes", None), Some(4096.0));
        assert_eq!(get("memtally_other_processes", None), Some(2.0));
        assert_eq!(get("memtally_machine_total_bytes", None), Some(1_024_000_000.0));
        assert_eq!(get("memtally_processes_scanned", None), Some(4.0));
        assert_eq!(get("memtally_scrape_duration_seconds", None), Some(0.25));
        let restricted = samples
            .iter()
            .find(|s| {
                s.metric == "memtally_processes_unreadable"
                    && s.labels.get("reason") == Some("restricted")
            })
            .unwrap();
        assert_eq!(value(restricted), 1.0);
        // Every family is typed and documented.
        for s in &samples {
            assert!(text.contains(&format!("# TYPE {} gauge\n", s.metric)), "{}", s.metric);
            assert!(text.contains(&format!("# HELP {} ", s.metric)), "{}", s.metric);
        }
        assert!(!text.contains("# EOF") && !text.contains("# UNIT"));
    }

    #[test]
    fn openmetrics_has_units_and_ends_with_eof() {
        let m = sample();
        let om = encode(&m, Exposition::OpenMetrics);
        assert!(om.ends_with("# EOF\n"));
        assert_eq!(om.matches("# EOF").count(), 1);
        assert!(om.contains("# UNIT memtally_process_pss_bytes bytes\n"));
        assert!(om.contains("# UNIT memtally_scrape_duration_seconds seconds\n"));
        // The same samples as the text format.
        let samples = |t: &str| {
            let mut v: Vec<String> =
                t.lines().filter(|l| !l.starts_with('#')).map(String::from).collect();
            v.sort();
            v
        };
        assert_eq!(samples(&om), samples(&encode(&m, Exposition::Text)));
    }

    #[test]
    fn a_figure_the_scan_lacks_is_left_out_not_zero() {
        let ps = vec![proc(12, "status-only", None)];
        let text = encode(
            &build(&ps, TopBy::Process, 5, None, None, Collector::default()),
            Exposition::Text,
        );
        assert!(text.contains("memtally_process_rss_bytes{pid=\"12\",comm=\"status-only\",program=\"status-only\"} 3145728\n"), "{text}");
        assert!(!text.contains("memtally_process_pss_bytes{"));
        assert!(!text.contains("memtally_other_processes_pss_bytes"));
        assert!(!text.contains("memtally_machine_"));
    }

    #[test]
    fn label_values_are_escaped() {
        let ps = vec![proc(7, "a\"b\\c\nd", Some(4096))];
        let m = build(&ps, TopBy::Process, 5, None, None, Collector::default());
        let text = encode(&m, Exposition::Text);
        assert!(
            text.contains(
                r#"memtally_process_pss_bytes{pid="7",comm="a\"b\\c\nd",program="a\"b\\c\nd"} 4096"#
            ),
            "{text}"
        );
    }

    #[test]
    fn grouped_rows_have_their_own_names_and_labels() {
        let ps = vec![proc(1, "a", Some(10)), proc(2, "a", Some(5)), proc(3, "b", Some(1))];
        let m = build(&ps, TopBy::Program, 5, None, None, Collector::default());
        let text = encode(&m, Exposition::Text);
        assert!(text.contains("memtally_program_pss_bytes{program=\"a\"} 15\n"), "{text}");
        assert!(text.contains("memtally_program_processes{program=\"a\"} 2\n"));
        assert!(!text.contains("memtally_process_") && !text.contains("gpu"));
        let m = build(&ps, TopBy::Cgroup, 5, None, None, Collector::default());
        let text = encode(&m, Exposition::Text);
        assert!(text.contains("memtally_cgroup_pss_bytes{cgroup=\"/system.slice/x.service\"} 16\n"));
        parse(&text);
    }
}
