//! Records a selection's page faults: one sampled software event per
//! thread and CPU (inherited by the threads and children started
//! meanwhile), one ring buffer per CPU, drained as it fills; each sample
//! placed in the mapping its address fell in (smaps read at the start,
//! and again for an address no known mapping holds), told read or write
//! from its page right then, and summed by stack.

use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::fs::FileExt;
use std::time::{Duration, Instant};

use crate::analyze::faults::{FaultTally, PlacedFault};
use crate::analyze::{categorize, Category};
use crate::error::{Error, Result};
use crate::model::faults::{FaultAccess, FaultBytes, FaultReport};
use crate::model::Backing;
use crate::source::faults::record::{self, Record, Sample, SAMPLE_TYPE};
use crate::source::faults::symbols::Symbols;
use crate::source::ProcRoot;
use crate::sys::perf::{self, Ring, Sampling};

/// What to record, and for how long.
#[derive(Debug, Clone)]
pub struct FaultOptions {
    /// One sample every this many faults (1: every fault).
    pub period: u64,
    /// Stop after this long.
    pub duration: Duration,
    /// Stacks kept per category in the report.
    pub top: usize,
    /// Data pages of each CPU's ring buffer (a power of two).
    pub ring_pages: usize,
}

impl Default for FaultOptions {
    fn default() -> FaultOptions {
        FaultOptions { period: 1, duration: Duration::from_secs(30), top: 10, ring_pages: 512 }
    }
}

/// One mapping of a traced process.
struct Mapping {
    start: u64,
    end: u64,
    category: Category,
    name: String,
    writable: bool,
    private: bool,
    /// The file and the offset of `start` in it.
    file: Option<(String, u64)>,
}

/// A traced process: its mappings as last read, its pagemap.
struct Target {
    command: String,
    mappings: Vec<Mapping>,
    pagemap: Option<File>,
}

impl Target {
    fn read(root: &ProcRoot, pid: u32) -> Target {
        let command = root.identity(pid).map(|(comm, _)| comm).unwrap_or_default();
        let pagemap = File::open(root.pid_file(pid, "pagemap")).ok();
        let mut t = Target { command, mappings: Vec::new(), pagemap };
        t.reread(root, pid);
        t
    }

    fn reread(&mut self, root: &ProcRoot, pid: u32) {
        // A process that ended reads as no mapping: keep the last ones known.
        let Ok(regions) = root.read_regions(pid, "smaps") else { return };
        if regions.is_empty() {
            return;
        }
        self.mappings = regions
            .iter()
            .filter_map(|r| {
                let perms = r.perms.as_bytes();
                Some(Mapping {
                    start: r.start?,
                    end: r.end?,
                    category: categorize(r),
                    name: r.path.clone().unwrap_or_else(|| "[anon]".into()),
                    writable: perms.get(1) == Some(&b'w'),
                    private: perms.get(3) == Some(&b'p'),
                    file: match (r.backing, &r.path) {
                        (Backing::File, Some(p)) => Some((p.clone(), r.offset.unwrap_or(0))),
                        _ => None,
                    },
                })
            })
            .collect();
        self.mappings.sort_by_key(|m| m.start);
    }

    fn find(&self, addr: u64) -> Option<&Mapping> {
        let i = self.mappings.partition_point(|m| m.start <= addr).checked_sub(1)?;
        let m = &self.mappings[i];
        (addr < m.end).then_some(m)
    }

    /// Read or write, from the page at `addr` now (see `FaultAccess`):
    /// pagemap's present (63), file-or-shared (61) and exclusively mapped
    /// (56) bits.
    fn access(&self, m: &Mapping, addr: u64, page: u64) -> FaultAccess {
        if !m.writable {
            return FaultAccess::Read;
        }
        if !m.private {
            return FaultAccess::Unknown;
        }
        let mut entry = [0u8; 8];
        let read = self.pagemap.as_ref().map(|f| f.read_exact_at(&mut entry, addr / page * 8));
        let entry = match read {
            Some(Ok(())) => u64::from_ne_bytes(entry),
            _ => return FaultAccess::Unknown,
        };
        match (entry >> 63 & 1, entry >> 61 & 1, entry >> 56 & 1) {
            (0, _, _) => FaultAccess::Unknown,
            (_, 1, _) => FaultAccess::Read,
            (_, _, 1) => FaultAccess::Write,
            _ => FaultAccess::Read,
        }
    }
}

/// The open events: one ring per CPU, the others writing into it.
struct Events {
    rings: Vec<Ring>,
    others: Vec<OwnedFd>,
    kernel_faults_seen: bool,
}

/// The CPUs the kernel has (online or not: an offline one refuses).
fn cpus() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u32).max(
        // SAFETY: sysconf reads a constant.
        unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) }.max(1) as u32,
    )
}

fn denied(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EACCES | libc::EPERM))
}

fn denied_error(pid: u32, e: &io::Error) -> Error {
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into());
    Error::FaultsDenied { pid, why: format!("{e}; kernel.perf_event_paranoid is {paranoid}") }
}

impl Events {
    fn open(root: &ProcRoot, pids: &[u32], opts: &FaultOptions) -> Result<Events> {
        let mut sampling = Sampling {
            event: perf::SW_PAGE_FAULTS,
            period: opts.period.max(1),
            sample_type: SAMPLE_TYPE,
            exclude_kernel: false,
            watermark: (opts.ring_pages * perf::page_size() / 4) as u32,
        };
        let mut per_cpu: Vec<Vec<OwnedFd>> = (0..cpus()).map(|_| Vec::new()).collect();
        for &pid in pids {
            let tasks = root.list(std::path::Path::new(&format!("{pid}/task")));
            let tids: Vec<u32> = match tasks {
                Ok(names) => names.iter().filter_map(|n| n.to_str()?.parse().ok()).collect(),
                Err(_) => vec![pid],
            };
            for tid in tids {
                for (cpu, fds) in per_cpu.iter_mut().enumerate() {
                    let mut opened = perf::open(tid, cpu as u32, &sampling);
                    if matches!(&opened, Err(e) if denied(e)) && !sampling.exclude_kernel {
                        sampling.exclude_kernel = true;
                        opened = perf::open(tid, cpu as u32, &sampling);
                    }
                    match opened {
                        Ok(fd) => fds.push(fd),
                        Err(e) if denied(&e) => return Err(denied_error(pid, &e)),
                        // An offline CPU, or a thread that ended meanwhile.
                        Err(e) if matches!(e.raw_os_error(), Some(libc::ENODEV | libc::ESRCH)) => {}
                        Err(e) => {
                            return Err(Error::io(format!("perf_event_open for thread {tid}"), e))
                        }
                    }
                }
            }
        }
        let mut events = Events {
            rings: Vec::new(),
            others: Vec::new(),
            kernel_faults_seen: !sampling.exclude_kernel,
        };
        for fds in per_cpu {
            let mut fds = fds.into_iter();
            let Some(first) = fds.next() else { continue };
            let ring = match Ring::map(
                first.try_clone().map_err(|e| Error::io("perf buffer", e))?,
                opts.ring_pages,
            ) {
                // Beyond perf_event_mlock_kb for a user without CAP_IPC_LOCK.
                Err(e) if denied(&e) => Ring::map(first, 8),
                ring => ring,
            }
            .map_err(|e| Error::io("mmap of the perf buffer", e))?;
            for fd in fds {
                perf::set_output(&fd, ring.fd()).map_err(|e| Error::io("perf buffer output", e))?;
                events.others.push(fd);
            }
            events.rings.push(ring);
        }
        if events.rings.is_empty() {
            let pid = pids.first().copied().unwrap_or(0);
            return Err(Error::NoSuchProcess { pid, path: root.pid_file(pid, "task") });
        }
        Ok(events)
    }

    fn all(&self) -> impl Iterator<Item = &OwnedFd> {
        self.rings.iter().map(Ring::fd).chain(&self.others)
    }
}

/// Whether `pid` has ended (gone, or a zombie).
fn ended(root: &ProcRoot, pid: u32) -> bool {
    match std::fs::read(root.pid_file(pid, "stat")) {
        Ok(stat) => {
            let after = stat.iter().rposition(|&b| b == b')').map_or(&stat[..], |i| &stat[i..]);
            matches!(after.get(2), Some(b'Z' | b'X'))
        }
        Err(_) => true,
    }
}

/// Records the faults of `pids` (live processes) until `opts.duration`
/// has passed, `stop()` says so, or every one of them has ended. `stop`
/// is first asked once the events are counting.
pub fn record(
    root: &ProcRoot,
    pids: &[u32],
    opts: &FaultOptions,
    stop: &dyn Fn() -> bool,
) -> Result<FaultReport> {
    let mut events = Events::open(root, pids, opts)?;
    let mut targets: HashMap<u32, Target> =
        pids.iter().map(|&pid| (pid, Target::read(root, pid))).collect();
    for fd in events.all() {
        perf::enable(fd).map_err(|e| Error::io("perf_event enable", e))?;
    }
    let page = perf::page_size() as u64;
    let start = Instant::now();
    let mut tally = FaultTally::default();
    let (mut samples, mut lost) = (0u64, 0u64);
    let mut last_check = start;
    let mut batch: Vec<Sample> = Vec::new();
    let mut drain =
        |events: &mut Events, tally: &mut FaultTally, targets: &mut HashMap<u32, Target>| {
            for ring in &mut events.rings {
                ring.drain(|bytes| match record::parse(bytes) {
                    Some(Record::Sample(s)) => batch.push(s),
                    Some(Record::Lost(n)) => lost += n,
                    Some(Record::Other) | None => {}
                });
            }
            samples += batch.len() as u64;
            place(root, &mut batch, targets, tally, page);
        };
    loop {
        let elapsed = start.elapsed();
        if stop() || elapsed >= opts.duration {
            break;
        }
        let fds: Vec<&OwnedFd> = events.rings.iter().map(Ring::fd).collect();
        let left = (opts.duration - elapsed).min(Duration::from_millis(50));
        perf::wait(&fds, left.as_millis().max(1) as i32).map_err(|e| Error::io("poll", e))?;
        drain(&mut events, &mut tally, &mut targets);
        if last_check.elapsed() >= Duration::from_millis(200) {
            last_check = Instant::now();
            if pids.iter().all(|&pid| ended(root, pid)) {
                break;
            }
        }
    }
    for fd in events.all() {
        let _ = perf::disable(fd);
    }
    drain(&mut events, &mut tally, &mut targets);
    let seconds = start.elapsed().as_secs_f64();
    let mut symbols = Symbols::default();
    let mut names: HashMap<(u32, u64), Vec<String>> = HashMap::new();
    let name = |pid: u32, ip: u64| {
        names
            .entry((pid, ip))
            .or_insert_with(|| frame_names(targets.get(&pid), &mut symbols, ip))
            .clone()
    };
    let commands: HashMap<u32, String> =
        targets.iter().map(|(&pid, t)| (pid, t.command.clone())).collect();
    let header = FaultReport {
        seconds,
        sample_period: opts.period.max(1),
        page_size: page,
        samples,
        lost,
        kernel_faults_seen: events.kernel_faults_seen,
        bytes: FaultBytes::default(),
        processes: Vec::new(),
        categories: Vec::new(),
    };
    let command = |pid: u32| commands.get(&pid).cloned().unwrap_or_default();
    Ok(tally.finish(opts.top, name, command, header))
}

/// Places a batch of samples and counts them; a process met for the first
/// time is read, and one whose address fell in no known mapping is read
/// again (once a batch).
fn place(
    root: &ProcRoot,
    batch: &mut Vec<Sample>,
    targets: &mut HashMap<u32, Target>,
    tally: &mut FaultTally,
    page: u64,
) {
    let mut reread: Vec<u32> = Vec::new();
    for s in batch.iter() {
        let t = targets.entry(s.pid).or_insert_with(|| Target::read(root, s.pid));
        if t.find(s.addr).is_none() && !reread.contains(&s.pid) {
            reread.push(s.pid);
            t.reread(root, s.pid);
        }
    }
    for mut s in batch.drain(..) {
        // A return address points after its call: look one byte back.
        for ip in s.stack.iter_mut().skip(1) {
            *ip = ip.saturating_sub(1);
        }
        let t = &targets[&s.pid];
        let m = t.find(s.addr);
        let access = m.map_or(FaultAccess::Unknown, |m| t.access(m, s.addr, page));
        tally.add(&PlacedFault {
            pid: s.pid,
            category: m.map(|m| m.category),
            mapping: m.map_or("[unmapped]", |m| &m.name),
            access,
            bytes: s.period * page,
            stack: &s.stack,
        });
    }
}

/// The function names at `ip` (innermost first), else `FILE+0xOFFSET`,
/// else `[unknown]`.
fn frame_names(target: Option<&Target>, symbols: &mut Symbols, ip: u64) -> Vec<String> {
    let Some(m) = target.and_then(|t| t.find(ip)) else { return vec!["[unknown]".into()] };
    let Some((path, offset)) = &m.file else {
        return vec![format!("{}+0x{:x}", m.name, ip - m.start)];
    };
    let at = ip - m.start + offset;
    let names = symbols.names(path, at);
    if names.is_empty() {
        let base = path.rsplit('/').next().unwrap_or(path);
        return vec![format!("{base}+0x{at:x}")];
    }
    names
}
