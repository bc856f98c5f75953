//! A process and what was read of it.

use serde::{Deserialize, Serialize};

use super::region::Region;
use super::sizes::Sizes;

/// Which file the figures came from, cheapest last. Each tier knows less:
/// `maps` gives virtual sizes only, `status` resident totals only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum SizeSource {
    /// `/proc/PID/smaps`: every figure, per mapping.
    Smaps,
    /// `/proc/PID/smaps_rollup`: every figure, summed by the kernel.
    SmapsRollup,
    /// `/proc/PID/maps`: addresses and virtual sizes only.
    Maps,
    /// `/proc/PID/status`: RSS and swap totals only.
    Status,
    /// macOS `vmmap` output.
    Vmmap,
    /// macOS libproc (`proc_pid_rusage`): footprint, its peak and RSS.
    Libproc,
}

/// One process: identity and, when read, its regions.
#[derive(Debug, Clone)]
pub struct Process {
    /// The process ID.
    pub pid: u32,
    /// Short name (`/proc/PID/comm`).
    pub comm: String,
    /// Full command line, arguments joined by spaces; empty for kernel threads.
    pub cmdline: String,
    /// Where the regions' figures came from.
    pub source: SizeSource,
    /// Its mappings, in address order; empty when they were streamed (see
    /// `streamed`) or not read.
    pub regions: Vec<Region>,
    /// The kernel's own sums (`smaps_rollup`) when read at the same instant
    /// as the regions (its resident figures equal the regions' sums). The
    /// kernel adds PSS before rounding to kB, smaps rounds each mapping
    /// down, so the rollup's PSS figures are the exact ones.
    pub rollup: Option<Sizes>,
    /// Set when the regions were handed out as they were read and not
    /// kept (`ProcRoot::process` into a sink): their sum and count.
    pub streamed: Option<Streamed>,
    /// Chromium's "private memory footprint" from `status` (RssAnon +
    /// VmSwap), read beside the regions; `None` where status has neither.
    pub footprint: Option<u64>,
}

/// What is left of regions that were streamed and not kept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Streamed {
    /// The regions' figures summed (virtual size from the range where the
    /// source gave none).
    pub totals: Sizes,
    /// How many regions were streamed.
    pub regions: usize,
    /// The sink stopped the read (its output closed): the figures are
    /// those of the regions read until then, not of the whole process.
    pub stopped: bool,
}

impl Process {
    /// The command line, or the short name in brackets when it has none.
    pub fn command(&self) -> String {
        command(&self.cmdline, &self.comm)
    }
}

/// `cmdline`, or `[comm]` when it is empty (a kernel thread's).
fn command(cmdline: &str, comm: &str) -> String {
    match cmdline.is_empty() {
        true => format!("[{comm}]"),
        false => cmdline.to_string(),
    }
}

/// Who a process is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcInfo {
    /// The process ID.
    pub pid: u32,
    /// The parent's process ID; 0 when unknown (and for `init`).
    pub ppid: u32,
    /// Real user id of the owner; `None` when it could not be read.
    pub uid: Option<u32>,
    /// Short name (`comm`, at most 15 bytes).
    pub comm: String,
    /// Command line joined by spaces; empty when the kernel gives none.
    pub cmdline: String,
    /// The program: basename of the first command-line word, else `comm`.
    pub program: String,
    /// cgroup v2 path (`/system.slice/ssh.service`); the first hierarchy's
    /// path on cgroup v1. `None` when unreadable.
    pub cgroup: Option<String>,
    /// What `status` said of the process's memory when it was identified
    /// (resident, swap, virtual size, footprint), where identifying read
    /// it: the memory read takes the footprint (and, when the rollup is
    /// refused, the rest) from here instead of opening `status` again.
    pub status_sizes: Option<StatusSizes>,
    /// When the process started, in clock ticks after boot (`stat` field
    /// 22), read before its identity where a selection narrows (on the
    /// live system): the mark that the process read or reset later is the
    /// one selected, not another that took its PID. `None` elsewhere.
    pub start_time: Option<u64>,
}

/// The figures `status` gives of a process's memory, kept with its
/// identity until the memory read: five numbers rather than a whole
/// [`Sizes`] (over 500 bytes), since a scan holds one per process.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatusSizes {
    /// VmRSS.
    pub rss: Option<u64>,
    /// VmSwap.
    pub swap: Option<u64>,
    /// VmSize.
    pub size: Option<u64>,
    /// RssAnon + VmSwap (see `Sizes::footprint`).
    pub footprint: Option<u64>,
    /// VmHWM (see `Sizes::rss_peak`).
    pub rss_peak: Option<u64>,
}

impl StatusSizes {
    /// The same figures as [`Sizes`], every other one unknown.
    pub fn sizes(self) -> Sizes {
        Sizes {
            rss: self.rss,
            swap: self.swap,
            size: self.size,
            footprint: self.footprint,
            rss_peak: self.rss_peak,
            ..Default::default()
        }
    }
}

impl ProcInfo {
    /// The command line, or `[comm]` when it has none.
    pub fn command(&self) -> String {
        command(&self.cmdline, &self.comm)
    }
}

/// A process's memory totals and where they came from.
#[derive(Debug, Clone)]
pub struct ProcMemory {
    /// Who the process is.
    pub info: ProcInfo,
    /// Which file the sizes came from (`smaps_rollup`, `smaps`, or `status`).
    pub source: SizeSource,
    /// Its totals, in bytes; a figure the source does not give is `None`.
    pub sizes: Sizes,
}

/// Everything a scan found, and what it had to leave out.
#[derive(Debug, Default)]
pub struct Scan {
    /// Every process read, in the order they were listed.
    pub processes: Vec<ProcMemory>,
    /// Processes whose smaps could not be read (permission): PIDs.
    /// They are in `processes` too, with status figures (RSS only).
    pub restricted: Vec<u32>,
    /// Processes that exited while being read.
    pub vanished: usize,
    /// Kernel threads left out (they have no user memory).
    pub kernel_threads: usize,
    /// Processes not read whole: (pid, one-line reason, which says whether
    /// the process is listed with what could be read or left out).
    pub failed: Vec<(u32, String)>,
    /// A recorded tree whose capture did not finish: why (processes it
    /// selected are missing from the scan).
    pub cut_short: Option<String>,
}

/// Which optional identity files to read (each costs a read per process).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Needs {
    /// The command line (to select by name, group by program, display).
    pub cmdline: bool,
    /// The cgroup (to select by cgroup, group by cgroup).
    pub cgroup: bool,
    /// The start time (to know the selected process later, whatever
    /// takes its PID meanwhile).
    pub start_time: bool,
}
