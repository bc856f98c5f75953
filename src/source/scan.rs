//! Reads many processes at once: who they are, then their memory by the
//! cheapest tier that answers (`smaps_rollup`, then `smaps`, then
//! `status`), on every core. Processes that vanish mid-scan are skipped
//! and counted; ones that cannot be read are counted with the reason.

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::Error;
use crate::model::{SizeSource, Sizes};
use crate::source::proc_root::join_cmdline;
use crate::source::status::Status;
use crate::source::ProcRoot;

/// Who a process is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcInfo {
    pub pid: u32,
    pub ppid: u32,
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
}

impl ProcInfo {
    /// The command line, or `[comm]` when it has none.
    pub fn command(&self) -> String {
        if self.cmdline.is_empty() {
            format!("[{}]", self.comm)
        } else {
            self.cmdline.clone()
        }
    }
}

/// A process's memory totals and where they came from.
#[derive(Debug, Clone)]
pub struct ProcMemory {
    pub info: ProcInfo,
    pub source: SizeSource,
    pub sizes: Sizes,
}

/// Everything a scan found, and what it had to leave out.
#[derive(Debug, Default)]
pub struct Scan {
    pub processes: Vec<ProcMemory>,
    /// Processes whose smaps could not be read (permission): PIDs.
    /// They are in `processes` too, with status figures (RSS only).
    pub restricted: Vec<u32>,
    /// Processes that exited while being read.
    pub vanished: usize,
    /// Kernel threads left out (they have no user memory).
    pub kernel_threads: usize,
    /// Processes that could not be read at all: (pid, one-line reason).
    pub failed: Vec<(u32, String)>,
}

/// Which optional identity files to read (each costs a read per process).
#[derive(Debug, Clone, Copy, Default)]
pub struct Needs {
    /// The command line (for `--name`, `--by program`, display).
    pub cmdline: bool,
    /// The cgroup (for `--cgroup`, `--by cgroup`).
    pub cgroup: bool,
}

/// Identity of every process in the tree (kernel threads left out),
/// and how many kernel threads and vanished processes there were.
pub fn list(root: &ProcRoot, needs: Needs) -> crate::error::Result<(Vec<ProcInfo>, usize, usize)> {
    let pids = root.pids()?;
    let mut out = Vec::with_capacity(pids.len());
    let (mut kthreads, mut vanished) = (0, 0);
    for pid in pids {
        match identify(root, pid, needs) {
            Ok(Some(info)) => out.push(info),
            Ok(None) => kthreads += 1,
            Err(_) => vanished += 1,
        }
    }
    Ok((out, kthreads, vanished))
}

/// One process's identity; `None` for a kernel thread.
///
/// Live, this reads `stat` (the cheapest file with the parent and the
/// kernel-thread flag) and takes the owner from the directory's metadata;
/// a recorded tree's metadata belongs to whoever copied it, so there the
/// recorded `status` is read instead.
pub fn identify(root: &ProcRoot, pid: u32, needs: Needs) -> crate::error::Result<Option<ProcInfo>> {
    let mut info = ProcInfo { pid, ..Default::default() };
    let stat = if root.is_live() {
        root.read(pid, "stat").ok().and_then(|b| Stat::parse(&b))
    } else {
        None
    };
    match stat {
        Some(stat) => {
            if stat.flags & PF_KTHREAD != 0 {
                return Ok(None);
            }
            use std::os::unix::fs::MetadataExt;
            info.comm = stat.comm;
            info.ppid = stat.ppid;
            info.uid = std::fs::metadata(root.path().join(pid.to_string())).ok().map(|m| m.uid());
        }
        None => {
            let status = Status::parse(&root.read(pid, "status")?);
            // Kernel threads have no address space: no Vm* lines (older
            // kernels have no `Kthread:` line).
            if status.kthread == Some(true)
                || (status.kthread.is_none() && status.vm_size.is_none())
            {
                return Ok(None);
            }
            info.comm = status.name.unwrap_or_default();
            info.ppid = status.ppid.unwrap_or(0);
            info.uid = status.uid;
        }
    }
    info.program = info.comm.clone();
    if needs.cmdline {
        fill_cmdline(root, &mut info);
    }
    if needs.cgroup {
        info.cgroup =
            root.read(pid, "cgroup").ok().and_then(|b| cgroup_path(&String::from_utf8_lossy(&b)));
    }
    Ok(Some(info))
}

/// Reads the command line and derives the program name from it.
pub fn fill_cmdline(root: &ProcRoot, info: &mut ProcInfo) {
    info.cmdline = root.read(info.pid, "cmdline").map(|b| join_cmdline(&b)).unwrap_or_default();
    if let Some(first) = info.cmdline.split(' ').next().filter(|w| !w.is_empty()) {
        info.program = first.rsplit('/').next().unwrap_or(first).to_string();
    }
}

/// `PF_KTHREAD` in `/proc/PID/stat`'s flags field.
const PF_KTHREAD: u64 = 0x0020_0000;

/// The few fields of `/proc/PID/stat` the scan uses.
struct Stat {
    comm: String,
    ppid: u32,
    flags: u64,
}

impl Stat {
    /// `pid (comm) state ppid pgrp session tty tpgid flags ...`; the name
    /// may hold spaces and parentheses, so fields are counted from the last `)`.
    fn parse(raw: &[u8]) -> Option<Stat> {
        let text = String::from_utf8_lossy(raw);
        let open = text.find('(')?;
        let close = text.rfind(')')?;
        let comm = text.get(open + 1..close)?.to_string();
        let mut rest = text.get(close + 1..)?.split_whitespace();
        let _state = rest.next()?;
        let ppid = rest.next()?.parse().ok()?;
        let flags = rest.nth(4)?.parse().ok()?;
        Some(Stat { comm, ppid, flags })
    }
}

/// The path of `/proc/PID/cgroup`: the v2 line (`0::/path`) when there is
/// one, else the first v1 hierarchy's path.
pub fn cgroup_path(text: &str) -> Option<String> {
    let mut first = None;
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (id, _controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        if id == "0" {
            return Some(path.to_string());
        }
        first.get_or_insert_with(|| path.to_string());
    }
    first
}

/// What happened reading one process's memory.
enum Outcome {
    Read(SizeSource, Sizes),
    Restricted(Sizes),
    Vanished,
    Failed(String),
}

/// Reads one process's totals by the cheapest tier that answers.
fn read_memory(root: &ProcRoot, pid: u32) -> Outcome {
    let denied = match root.rollup(pid) {
        Ok(sizes) => return Outcome::Read(SizeSource::SmapsRollup, sizes),
        Err(Error::NoSuchProcess { .. }) => return Outcome::Vanished,
        Err(Error::PermissionDenied { .. }) => true,
        // No rollup (kernel before 4.14, or a capture without it): sum smaps.
        Err(_) => match root.read_regions(pid, "smaps") {
            Ok(regions) => {
                return Outcome::Read(SizeSource::Smaps, crate::analyze::total(&regions));
            }
            Err(Error::NoSuchProcess { .. }) => return Outcome::Vanished,
            Err(Error::PermissionDenied { .. }) => true,
            Err(_) => false,
        },
    };
    match root.read(pid, "status") {
        Ok(b) => {
            let s = Status::parse(&b);
            let sizes =
                Sizes { rss: s.vm_rss, swap: s.vm_swap, size: s.vm_size, ..Default::default() };
            if denied {
                Outcome::Restricted(sizes)
            } else {
                Outcome::Read(SizeSource::Status, sizes)
            }
        }
        Err(Error::NoSuchProcess { .. }) => Outcome::Vanished,
        Err(e) => Outcome::Failed(e.to_string()),
    }
}

/// Reads the memory of every process in `infos`, on `threads` threads.
/// `progress` counts processes done, for a progress bar.
pub fn read_all(
    root: &ProcRoot,
    infos: Vec<ProcInfo>,
    threads: usize,
    progress: &AtomicUsize,
) -> Scan {
    let next = AtomicUsize::new(0);
    let threads = threads.clamp(1, infos.len().max(1));
    let results: Vec<Vec<(usize, Outcome)>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(info) = infos.get(i) else { break };
                        mine.push((i, read_memory(root, info.pid)));
                        progress.fetch_add(1, Ordering::Relaxed);
                    }
                    mine
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap_or_default()).collect()
    });
    let mut outcomes: Vec<(usize, Outcome)> = results.into_iter().flatten().collect();
    outcomes.sort_by_key(|(i, _)| *i);
    let mut scan = Scan::default();
    let mut infos = infos.into_iter().map(Some).collect::<Vec<_>>();
    for (i, outcome) in outcomes {
        let Some(info) = infos[i].take() else { continue };
        match outcome {
            Outcome::Read(source, sizes) => scan.processes.push(ProcMemory { info, source, sizes }),
            Outcome::Restricted(sizes) => {
                scan.restricted.push(info.pid);
                scan.processes.push(ProcMemory { info, source: SizeSource::Status, sizes });
            }
            Outcome::Vanished => scan.vanished += 1,
            Outcome::Failed(why) => scan.failed.push((info.pid, why)),
        }
    }
    scan
}

/// How many threads to read with: every core, since each read is the
/// kernel walking page tables (CPU work) rather than waiting on a disk.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()).min(8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_from_the_last_paren() {
        let s = Stat::parse(b"42 (a) b (c)) S 7 42 42 0 -1 4194560 100 0").unwrap();
        assert_eq!(s.comm, "a) b (c)");
        assert_eq!(s.ppid, 7);
        assert_eq!(s.flags, 4194560);
        let k = Stat::parse(b"2 (kthreadd) S 0 0 0 0 -1 2129984 0 0").unwrap();
        assert_ne!(k.flags & PF_KTHREAD, 0);
    }

    #[test]
    fn cgroup_prefers_the_v2_line() {
        assert_eq!(
            cgroup_path("0::/user.slice/session-1.scope\n").as_deref(),
            Some("/user.slice/session-1.scope")
        );
        assert_eq!(
            cgroup_path("12:memory:/docker/abc\n11:cpu:/docker/abc\n0::/init.scope\n").as_deref(),
            Some("/init.scope")
        );
        assert_eq!(cgroup_path("12:memory:/docker/abc\n").as_deref(), Some("/docker/abc"));
        assert_eq!(cgroup_path(""), None);
    }
}
