//! The machine's memory as a waterfall: MemTotal split into lines that
//! each name their source (a meminfo field, or a sum over the processes'
//! smaps), so that every byte is on one line and the lines add up to
//! MemTotal exactly; what no line explains is the last, named remainder.
//! Beside it, the headline figures `free` prints (used, buff/cache).

use serde::Serialize;

mod line;
mod swap;
mod thp;

pub use line::{Line, LineGroup};
pub use swap::{SwapFigures, ZramDevice};
pub use thp::Thp;

use crate::analyze::signed::{bytes as signed, clamp};
use crate::model::{MemInfo, ProcMemory, Sizes};

/// One line of the waterfall.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MachineLine {
    /// Which line (its name: JSON, CSV, the Prometheus `line` label).
    pub name: Line,
    /// The short-form group it belongs to: [`Line::group`].
    pub group: LineGroup,
    /// Bytes; only `unexplained` can be negative.
    pub bytes: i64,
    /// Whether the kernel can give it back under pressure (page cache,
    /// reclaimable slab, free huge pages are not: they stay reserved).
    pub reclaimable: bool,
    /// Where the figure comes from, to check it by hand.
    pub source: String,
}

impl MachineLine {
    /// The line `name`, in its group.
    pub(crate) fn new(name: Line, bytes: i64, reclaimable: bool, source: String) -> MachineLine {
        MachineLine { name, group: name.group(), bytes, reclaimable, source }
    }
}

/// The machine's memory, and how much of it processes explain.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Machine {
    /// `MemTotal`, bytes.
    pub total: u64,
    /// `MemAvailable`, when the kernel gives it.
    pub available: Option<u64>,
    /// `MemFree`.
    pub free: u64,
    /// What `free` (procps-ng 4.0.1 and later) and htop call used:
    /// `MemTotal - MemAvailable`; without MemAvailable, `MemTotal - MemFree
    /// - Buffers - Cached - SReclaimable` as older `free` did.
    pub used: u64,
    /// `free`'s buff/cache: `Buffers + Cached + SReclaimable`.
    pub buff_cache: Option<u64>,
    /// Σ PSS of every process that could be read.
    pub processes_pss: u64,
    /// Kernel memory: slab (both kinds), other reclaimable kernel memory,
    /// kernel stacks, page tables, vmalloc, per-CPU.
    pub kernel: Option<u64>,
    /// The part of `kernel` the kernel reclaims under pressure
    /// (`KReclaimable`, or `SReclaimable` on kernels without it).
    pub kernel_reclaimable: Option<u64>,
    /// Page cache, swap cache and shared memory that no read process maps
    /// (`Buffers + Cached + SwapCached - Σ Pss_File - Σ Pss_Shmem`).
    pub cache_unmapped: Option<u64>,
    /// `total - free - processes_pss - kernel - cache_unmapped`: processes
    /// that could not be read, huge page pools, compressed swap (zram,
    /// zswap), drivers, rounding. May be negative.
    pub unattributed: i64,
    /// The waterfall's last line: what no line explains. May be negative.
    pub unexplained: i64,
    /// The waterfall, in order; the bytes add up to `total`.
    pub lines: Vec<MachineLine>,
    /// Shmem by tmpfs mount: (mount point, bytes used per statvfs, mapped
    /// pages included), largest first; live only, empty otherwise. A
    /// detail of the shmem lines, not lines of its own.
    pub shmem_mounts: Vec<(String, u64)>,
    /// Swap space and compressed swap (zswap, zram); `None` when meminfo
    /// has no SwapTotal.
    pub swap: Option<SwapFigures>,
    /// Transparent huge pages: a part of the anonymous, shmem and page
    /// cache lines, not lines of their own.
    pub thp: Option<Thp>,
    /// Swap used (SwapTotal − SwapFree) reconciled with the processes'
    /// SWAP PSS, the rest named; `None` when no swap is in use.
    pub swap_used: Option<crate::analyze::swap_used::SwapUsed>,
}

impl Machine {
    /// The short form: one (group, bytes, names of its non-zero lines)
    /// per group, in waterfall order.
    pub fn groups(&self) -> Vec<(LineGroup, i64, Vec<Line>)> {
        let mut out: Vec<(LineGroup, i64, Vec<Line>)> = Vec::new();
        for l in &self.lines {
            match out.iter_mut().find(|(g, _, _)| *g == l.group) {
                Some(g) => g.1 = g.1.saturating_add(l.bytes),
                None => out.push((l.group, l.bytes, Vec::new())),
            }
            if l.bytes != 0 {
                if let Some(g) = out.iter_mut().find(|(g, _, _)| *g == l.group) {
                    g.2.push(l.name);
                }
            }
        }
        out
    }

    /// Adds a line a driver reports (memory no meminfo field counts), just
    /// before the remainder, which shrinks by as much: the lines still add
    /// up to `total`.
    pub(crate) fn add_driver_line(&mut self, name: Line, bytes: u64, source: String) {
        self.insert_line(&[], MachineLine::new(name, signed(bytes), false, source));
    }

    /// Inserts a line of memory no other line counts right after the
    /// first of `after` that the waterfall has (else just before the
    /// remainder), and takes its bytes out of the remainder: the lines
    /// still add up to `total`.
    fn insert_line(&mut self, after: &[Line], line: MachineLine) {
        let last = self.lines.len().saturating_sub(1);
        let at = after
            .iter()
            .find_map(|a| self.lines.iter().position(|l| l.name == *a))
            .map_or(last, |i| (i + 1).min(last));
        self.unexplained = self.unexplained.saturating_sub(line.bytes);
        self.lines.insert(at, line);
        if let Some(last) = self.lines.last_mut() {
            last.bytes = self.unexplained;
        }
    }

    /// A line's bytes.
    pub fn line(&self, name: Line) -> Option<i64> {
        self.lines.iter().find(|l| l.name == name).map(|l| l.bytes)
    }
}

/// The machine picture; `None` when meminfo lacks MemTotal or MemFree.
pub fn machine(m: &MemInfo, processes: &[ProcMemory]) -> Option<Machine> {
    let total = m.get("MemTotal")?;
    let free = m.get("MemFree")?;
    let read: Vec<&Sizes> =
        processes.iter().filter(|p| p.sizes.pss.is_some()).map(|p| &p.sizes).collect();
    let n = read.len();
    // Saturating: two crafted processes of 8 EiB each must not add up to
    // a small figure.
    let sum = |f: fn(&Sizes) -> Option<u64>| -> u64 {
        read.iter().filter_map(|s| f(s)).fold(0, u64::saturating_add)
    };
    let (pss, anon, file, shmem) =
        (sum(|s| s.pss), sum(|s| s.pss_anon), sum(|s| s.pss_file), sum(|s| s.pss_shmem));
    let f = |k: &str| m.get(k);
    let z = |k: &str| m.get(k).unwrap_or(0);

    let mut lines: Vec<MachineLine> = Vec::new();
    // A line for each figure this kernel has (`None`: no line).
    let mut push = |name, bytes: Option<u64>, reclaimable, source: String| {
        if let Some(bytes) = bytes {
            lines.push(MachineLine::new(name, signed(bytes), reclaimable, source));
        }
    };
    push(Line::Free, Some(free), false, "MemFree".into());
    let noun = if n == 1 { "process" } else { "processes" };
    let of = format!("of the {n} {noun} read (smaps_rollup)");
    push(Line::ProcessAnon, Some(anon), false, format!("Σ Pss_Anon {of}"));
    push(Line::ProcessFile, Some(file), true, format!("Σ Pss_File {of}"));
    push(Line::ProcessShmem, Some(shmem), false, format!("Σ Pss_Shmem {of}"));
    // PSS that a rollup gives but does not split (kernels before 5.x).
    let split = anon.saturating_add(file).saturating_add(shmem);
    let unsplit = pss.saturating_sub(split);
    push(
        Line::ProcessUnsplit,
        (unsplit > 0).then_some(unsplit),
        false,
        "Σ Pss − Σ (Pss_Anon + Pss_File + Pss_Shmem): rounding, or kernels that do not split PSS"
            .into(),
    );
    push(
        Line::AnonUnread,
        f("AnonPages").map(|a| a.saturating_sub(anon.saturating_add(unsplit))),
        false,
        "AnonPages − Σ Pss_Anon: anonymous memory of processes not read".into(),
    );
    let shmem_total = f("Shmem");
    let buffers_cached = f("Buffers").zip(f("Cached")).map(|(b, c)| b.saturating_add(c));
    push(
        Line::PageCacheUnmapped,
        buffers_cached.map(|bc| bc.saturating_sub(shmem_total.unwrap_or(0)).saturating_sub(file)),
        true,
        "Buffers + Cached − Shmem − Σ Pss_File".into(),
    );
    push(
        Line::ShmemUnmapped,
        shmem_total.map(|s| s.saturating_sub(shmem)),
        false,
        "Shmem − Σ Pss_Shmem: tmpfs, /dev/shm, SysV shm no read process maps".into(),
    );
    push(Line::SwapCache, f("SwapCached"), true, "SwapCached".into());
    push(
        Line::Zswap,
        f("Zswap"),
        false,
        "Zswap: RAM of zswap's compressed pool (holding Zswapped, uncompressed)".into(),
    );
    let sreclaim = f("SReclaimable");
    push(Line::SlabReclaimable, sreclaim, true, "SReclaimable".into());
    push(
        Line::KernelReclaimableOther,
        f("KReclaimable").zip(sreclaim).map(|(k, s)| k.saturating_sub(s)),
        true,
        "KReclaimable − SReclaimable".into(),
    );
    push(Line::SlabUnreclaimable, f("SUnreclaim"), false, "SUnreclaim".into());
    push(Line::KernelStack, f("KernelStack"), false, "KernelStack".into());
    push(
        Line::PageTables,
        f("PageTables").map(|p| p.saturating_add(z("SecPageTables"))),
        false,
        "PageTables + SecPageTables".into(),
    );
    push(Line::Vmalloc, f("VmallocUsed"), false, "VmallocUsed".into());
    push(Line::Percpu, f("Percpu"), false, "Percpu".into());
    // Hugetlb covers every pool size; the Free count is of the default size.
    let hugetlb = f("Hugetlb").map(|h| {
        let free_pages =
            m.count("HugePages_Free").unwrap_or(0).saturating_mul(z("Hugepagesize")).min(h);
        (h - free_pages, free_pages)
    });
    push(
        Line::HugetlbUsed,
        hugetlb.map(|(used, _)| used),
        false,
        "Hugetlb − HugePages_Free × Hugepagesize".into(),
    );
    push(
        Line::HugetlbFree,
        hugetlb.map(|(_, free)| free),
        false,
        "HugePages_Free × Hugepagesize: reserved in the pool, unused".into(),
    );
    let explained: i128 = lines.iter().map(|l| i128::from(l.bytes)).sum();
    let unexplained = clamp(i128::from(total) - explained);
    lines.push(MachineLine::new(
        Line::Unexplained,
        unexplained,
        false,
        "MemTotal − every line above: drivers (GPU, network buffers), firmware, rounding".into(),
    ));

    let buff_cache = buffers_cached.map(|bc| bc.saturating_add(sreclaim.unwrap_or(0)));
    let used = match f("MemAvailable") {
        Some(a) => total.saturating_sub(a),
        None => total.saturating_sub(free.saturating_add(buff_cache.unwrap_or(0))),
    };
    // The legacy kernel figure: the waterfall's kernel group (slab, stacks,
    // page tables, vmalloc, percpu), so the two can never disagree.
    let kernel = f("Slab").map(|_| {
        lines
            .iter()
            .filter(|l| l.group == LineGroup::Kernel)
            .map(|l| l.bytes.max(0) as u64)
            .fold(0, u64::saturating_add)
    });
    let kernel_reclaimable = f("KReclaimable").or(sreclaim);
    let cache_unmapped = buffers_cached
        .map(|bc| bc.saturating_add(z("SwapCached")).saturating_sub(file.saturating_add(shmem)));
    let unattributed = clamp(
        i128::from(total)
            - i128::from(free)
            - i128::from(pss)
            - i128::from(kernel.unwrap_or(0))
            - i128::from(cache_unmapped.unwrap_or(0)),
    );
    Some(Machine {
        total,
        available: f("MemAvailable"),
        free,
        used,
        buff_cache,
        processes_pss: pss,
        kernel,
        kernel_reclaimable,
        cache_unmapped,
        unattributed,
        unexplained,
        lines,
        shmem_mounts: Vec::new(),
        swap: swap::from_meminfo(m),
        thp: thp::from_meminfo(m),
        swap_used: crate::analyze::swap_used::swap_used(m, processes),
    })
}

/// The waterfall and what the scan behind it could not read.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct MachineView {
    /// The waterfall.
    pub machine: Machine,
    /// Processes read with PSS.
    pub processes: usize,
    /// Processes that could not be read in detail (their memory is in
    /// `anon_unread` and the cache lines, not the process lines).
    pub restricted: usize,
    /// Processes that exited while being read.
    pub vanished: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::test_support::rollup_process as proc;

    /// This machine's /proc/meminfo (a Firecracker VM, kernel 6.18, hybrid cgroups).
    const HERE: &str = "MemTotal:       24731184 kB\nMemFree:        14609652 kB\nMemAvailable:   22959584 kB\nBuffers:           59728 kB\nCached:          8347792 kB\nSwapCached:            0 kB\nAnonPages:       1088476 kB\nMapped:           179236 kB\nShmem:              9324 kB\nKReclaimable:     281616 kB\nSlab:             331836 kB\nSReclaimable:     281616 kB\nSUnreclaim:        50220 kB\nKernelStack:        2620 kB\nPageTables:        10376 kB\nSecPageTables:         0 kB\nVmallocTotal:   34359738367 kB\nVmallocUsed:       15436 kB\nPercpu:              744 kB\nAnonHugePages:         0 kB\nHugePages_Total:       0\nHugePages_Free:        0\nHugepagesize:       2048 kB\nHugetlb:               0 kB\n";

    const KB: u64 = 1024;

    fn meminfo(text: &str) -> MemInfo {
        crate::source::parse::meminfo::parse(text.as_bytes()).unwrap()
    }

    #[test]
    fn lines_add_up_to_memtotal_exactly_and_name_the_remainder() {
        let m = meminfo(HERE);
        let ps = [proc(1_000_000 * KB, 150_000 * KB, 4_000 * KB)];
        let mm = machine(&m, &ps).unwrap();
        let sum: i64 = mm.lines.iter().map(|l| l.bytes).sum();
        assert_eq!(sum, 24731184 * KB as i64);
        let kb = |name: &str| {
            let line = Line::ALL.iter().find(|l| l.name() == name).unwrap();
            mm.line(*line).unwrap() / 1024
        };
        assert_eq!(kb("free"), 14609652);
        assert_eq!(kb("process_anon"), 1_000_000);
        assert_eq!(kb("anon_unread"), 88476);
        assert_eq!(kb("page_cache_unmapped"), 59728 + 8347792 - 9324 - 150_000);
        assert_eq!(kb("shmem_unmapped"), 9324 - 4000);
        assert_eq!(kb("slab_reclaimable"), 281616);
        assert_eq!(kb("kernel_reclaimable_other"), 0);
        assert_eq!(kb("slab_unreclaimable"), 50220);
        assert_eq!(kb("vmalloc"), 15436);
        // What neither meminfo line nor process explains, here:
        assert_eq!(mm.unexplained / 1024, 24731184 - 24466660);
        assert_eq!(kb("unexplained"), 264524);
        // free(1): used = total - available, buff/cache = Buffers + Cached + SReclaimable.
        assert_eq!(mm.used / KB, 24731184 - 22959584);
        assert_eq!(mm.buff_cache, Some((59728 + 8347792 + 281616) * KB));
        assert_eq!(mm.kernel_reclaimable, Some(281616 * KB));
        // The legacy split still adds up to MemTotal.
        let legacy = mm.free as i64
            + mm.processes_pss as i64
            + mm.kernel.unwrap() as i64
            + mm.cache_unmapped.unwrap() as i64
            + mm.unattributed;
        assert_eq!(legacy, mm.total as i64);
        // In the order Line::ALL lists them.
        let at: Vec<usize> =
            mm.lines.iter().map(|l| Line::ALL.iter().position(|a| *a == l.name).unwrap()).collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{at:?}");
    }

    #[test]
    fn huge_page_pools_and_old_free_without_memavailable() {
        let m = meminfo(
            "MemTotal: 1000000 kB\nMemFree: 100000 kB\nBuffers: 1000 kB\nCached: 20000 kB\nShmem: 500 kB\nSReclaimable: 3000 kB\nSUnreclaim: 2000 kB\nSlab: 5000 kB\nAnonPages: 40000 kB\nHugePages_Total: 256\nHugePages_Free: 100\nHugepagesize: 2048 kB\nHugetlb: 524288 kB\n",
        );
        let mm = machine(&m, &[]).unwrap();
        assert_eq!(mm.line(Line::HugetlbUsed), Some(156 * 2048 * 1024));
        assert_eq!(mm.line(Line::HugetlbFree), Some(100 * 2048 * 1024));
        assert_eq!(mm.lines.iter().map(|l| l.bytes).sum::<i64>(), 1_000_000 * 1024);
        assert_eq!(mm.used, (1_000_000 - 100_000 - 1000 - 20000 - 3000) * 1024);
        assert_eq!(
            mm.unexplained,
            (1_000_000 - 100_000 - 40000 - 20500 - 500 - 5000 - 524288) * 1024
        );
        let groups: Vec<&str> = mm.groups().iter().map(|g| g.0.name()).collect();
        assert_eq!(groups, ["free", "processes", "cache", "kernel", "hugetlb", "unexplained"]);
    }

    #[test]
    fn a_driver_line_comes_out_of_the_remainder() {
        let m = meminfo(HERE);
        let mut mm = machine(&m, &[]).unwrap();
        let before = mm.unexplained;
        mm.add_driver_line(Line::GpuGtt, 4096, "x".into());
        assert_eq!(mm.unexplained, before - 4096);
        assert_eq!(mm.line(Line::Unexplained), Some(before - 4096));
        assert_eq!(mm.lines.iter().map(|l| l.bytes).sum::<i64>(), mm.total as i64);
        assert_eq!(mm.lines[mm.lines.len() - 2].name, Line::GpuGtt);
    }

    /// A crafted meminfo of 16 EiB and two processes of 8 EiB each: the
    /// casts to i64 made free `-1.0K`, and the PSS sum wrapped to a small
    /// figure (4096 in the Prometheus gauge).
    #[test]
    fn figures_past_i64_saturate_and_sums_never_wrap() {
        let m = meminfo(
            "MemTotal: 18014398509481983 kB\nMemFree: 18014398509481983 kB\nBuffers: 18014398509481983 kB\nCached: 18014398509481983 kB\nAnonPages: 1 kB\nSlab: 1 kB\nSReclaimable: 18014398509481983 kB\nSUnreclaim: 18014398509481983 kB\nPageTables: 18014398509481983 kB\nSecPageTables: 18014398509481983 kB\n",
        );
        let half = 1u64 << 63;
        let ps = [proc(half, 0, 0), proc(half, 4096, 0)];
        let mut mm = machine(&m, &ps).unwrap();
        assert_eq!(mm.processes_pss, u64::MAX, "saturated, not 4096");
        assert_eq!(mm.line(Line::Free), Some(i64::MAX), "not -1.0K");
        for l in &mm.lines {
            assert!(l.bytes >= 0 || l.name == Line::Unexplained, "{} = {}", l.name, l.bytes);
        }
        assert!(mm.kernel.unwrap() >= 1 << 62, "{:?}", mm.kernel);
        assert_eq!(mm.buff_cache, Some(u64::MAX));
        for (g, bytes, _) in mm.groups() {
            assert!(bytes >= 0 || g == LineGroup::Unexplained, "{g} = {bytes}");
        }
        mm.add_driver_line(Line::GpuGtt, u64::MAX, "x".into());
        assert_eq!(mm.line(Line::GpuGtt), Some(i64::MAX));
        assert_eq!(mm.line(Line::Unexplained), Some(mm.unexplained));
    }

    #[test]
    fn no_machine_without_the_basics() {
        assert!(machine(&meminfo("MemFree: 1 kB\n"), &[]).is_none());
    }
}
