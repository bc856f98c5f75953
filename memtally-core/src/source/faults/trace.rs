//! Records a selection's page faults: one sampled software event per
//! thread and CPU (inherited by the threads and children started
//! meanwhile), one ring buffer per CPU, drained as it fills; each sample
//! placed in the mapping its address fell in (smaps read at the start,
//! then the mappings, forks and execs the kernel reports in the same
//! buffer; smaps again for an address no known mapping holds), told read
//! or write from its page right then, and summed by stack.

use std::collections::HashMap;
use std::io;
use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::model::faults::{FaultAccess, FaultOptions, FaultSample, Unwind};
use crate::source::faults::record::{self, Record, Sample};
use crate::source::faults::symbols::Symbols;
use crate::source::faults::target::{frame_names, Target};
use crate::source::faults::unwind::Unwinding;
use crate::source::ProcRoot;
use crate::sys::perf::{self, Ring, Sampling};

/// The open events: one ring per CPU, the others writing into it.
struct Events {
    rings: Vec<Ring>,
    others: Vec<OwnedFd>,
    kernel_faults_seen: bool,
    /// Data pages a ring asked for, and the fewest one was allowed.
    pages: (usize, usize),
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
        let stack_bytes = stack_bytes(opts);
        let user_stack = stack_bytes > 0;
        let asked = opts.ring_pages(stack_bytes, perf::page_size(), cpus() as usize);
        let mut sampling = Sampling {
            event: perf::SW_PAGE_FAULTS,
            period: opts.period.max(1),
            sample_type: record::sample_type(user_stack),
            exclude_kernel: false,
            side_records: true,
            watermark: (asked * perf::page_size() / 4).min(u32::MAX as usize) as u32,
            regs_user: if user_stack { record::REGS_USER } else { 0 },
            stack_user: stack_bytes,
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
            pages: (asked, asked),
        };
        for fds in per_cpu {
            let mut fds = fds.into_iter();
            let Some(first) = fds.next() else { continue };
            // Beyond perf_event_mlock_kb and RLIMIT_MEMLOCK for a user
            // without CAP_IPC_LOCK: halved until it fits (and said).
            let ring = loop {
                let fd = first.try_clone().map_err(|e| Error::io("perf buffer", e))?;
                match Ring::map(fd, events.pages.1) {
                    Err(e) if denied(&e) && events.pages.1 > 1 => events.pages.1 /= 2,
                    ring => break ring.map_err(|e| Error::io("mmap of the perf buffer", e))?,
                }
            };
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

/// The user stack bytes a sample copies (with the registers): DWARF
/// unwinding, where this architecture has it; else 0.
fn stack_bytes(opts: &FaultOptions) -> u32 {
    match opts.unwind {
        Unwind::Dwarf { stack_bytes } if record::REGS_USER != 0 => {
            stack_bytes.min(Unwind::MAX_STACK_BYTES) / 8 * 8
        }
        _ => 0,
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

/// What a recording leaves besides its samples: its figures, and the
/// processes' mappings to name the stacks' frames with.
pub struct Recorded {
    /// How long it recorded, in seconds.
    pub seconds: f64,
    /// Samples read.
    pub samples: u64,
    /// Samples lost (the buffer was full).
    pub lost: u64,
    /// Bytes a fault stands for.
    pub page_size: u64,
    /// Whether faults taken in kernel mode were counted.
    pub kernel_faults_seen: bool,
    /// Data pages a CPU's buffer asked for, and the fewest one mapped.
    pub buffer_pages: (usize, usize),
    targets: HashMap<u32, Target>,
    symbols: Symbols,
}

impl Recorded {
    /// The functions at `ip` in process `pid` (innermost first; inlined
    /// ones too), else `FILE+0xOFFSET`, else `[unknown]`.
    pub fn frames(&mut self, pid: u32, ip: u64) -> Vec<String> {
        frame_names(self.targets.get(&pid), &mut self.symbols, ip)
    }

    /// The short name of process `pid` (its last, after an exec).
    pub fn command(&self, pid: u32) -> String {
        self.targets.get(&pid).map(|t| t.command.clone()).unwrap_or_default()
    }
}

/// Records the faults of `pids` (live processes), each sample handed to
/// `sink`, until `opts.duration` has passed, `stop()` says so, or every
/// one of them has ended. `stop` is first asked once the events are
/// counting.
pub fn record(
    root: &ProcRoot,
    pids: &[u32],
    opts: &FaultOptions,
    stop: &dyn Fn() -> bool,
    sink: &mut dyn FnMut(FaultSample<'_>),
) -> Result<Recorded> {
    let mut events = Events::open(root, pids, opts)?;
    let mut rec = Recorder {
        root,
        targets: pids.iter().map(|&pid| (pid, Target::read(root, pid))).collect(),
        sink,
        samples: 0,
        lost: 0,
        page: perf::page_size() as u64,
        period: opts.period.max(1),
        reread: Vec::new(),
        user_stack: stack_bytes(opts) > 0,
        unwinding: Unwinding::default(),
        dwarf: Vec::new(),
    };
    for fd in events.all() {
        perf::enable(fd).map_err(|e| Error::io("perf_event enable", e))?;
    }
    let start = Instant::now();
    let mut last_check = start;
    loop {
        let elapsed = start.elapsed();
        if stop() || elapsed >= opts.duration {
            break;
        }
        let fds: Vec<&OwnedFd> = events.rings.iter().map(Ring::fd).collect();
        let left = (opts.duration - elapsed).min(Duration::from_millis(50));
        perf::wait(&fds, left.as_millis().max(1) as i32).map_err(|e| Error::io("poll", e))?;
        rec.drain(&mut events);
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
    rec.drain(&mut events);
    // The kernel writes its count of lost samples only before its next
    // record, which may never come: what the events counted, less what
    // was read, is lost too (children still running are not counted in
    // it, so this never overstates).
    let period = opts.period.max(1);
    let expected: u64 =
        events.all().filter_map(|fd| perf::count(fd).ok()).map(|n| n / period).sum();
    let lost = rec.lost.max(expected.saturating_sub(rec.samples));
    Ok(Recorded {
        seconds: start.elapsed().as_secs_f64(),
        samples: rec.samples,
        lost,
        page_size: rec.page,
        kernel_faults_seen: events.kernel_faults_seen,
        buffer_pages: events.pages,
        targets: rec.targets,
        symbols: Symbols::default(),
    })
}

/// What the records read so far made.
struct Recorder<'a> {
    root: &'a ProcRoot,
    targets: HashMap<u32, Target>,
    sink: &'a mut dyn FnMut(FaultSample<'_>),
    samples: u64,
    lost: u64,
    page: u64,
    /// Faults a sample stands for.
    period: u64,
    /// The processes whose smaps were read again in this drain.
    reread: Vec<u32>,
    /// Samples carry the user stack and registers.
    user_stack: bool,
    unwinding: Unwinding,
    /// A sample's DWARF-unwound stack, reused.
    dwarf: Vec<u64>,
}
impl Recorder<'_> {
    /// Takes every record waiting in the rings, in order.
    fn drain(&mut self, events: &mut Events) {
        self.reread.clear();
        for ring in &mut events.rings {
            let user_stack = self.user_stack;
            ring.drain(|bytes| {
                // A record cut short is skipped (the kernel writes whole ones).
                if let Some(r) = record::parse(bytes, user_stack) {
                    self.take(r)
                }
            });
        }
    }

    fn take(&mut self, r: Record<'_>) {
        let root = self.root;
        match r {
            Record::Sample(s) => self.place(s),
            Record::Lost(n) => self.lost += n,
            Record::Mmap(m) => {
                let t = self.targets.entry(m.pid).or_insert_with(|| Target::read(root, m.pid));
                if t.mapped(&m) {
                    self.unwinding.forget(m.pid);
                }
            }
            Record::Fork { pid, parent } if pid != parent && !self.targets.contains_key(&pid) => {
                let t = match self.targets.get(&parent) {
                    Some(p) => Target::forked(root, pid, p),
                    None => Target::read(root, pid),
                };
                self.targets.insert(pid, t);
            }
            Record::Comm { pid, comm, exec } => {
                if let Some(t) = self.targets.get_mut(&pid) {
                    if exec {
                        t.exec(root, pid);
                        self.unwinding.forget(pid);
                    }
                    t.command = comm;
                }
            }
            Record::Fork { .. } | Record::Other => {}
        }
    }

    /// Places a sample and counts it; a process met for the first time is
    /// read, and one whose address fell in no known mapping is read again
    /// (once a drain).
    fn place(&mut self, mut s: Sample<'_>) {
        self.samples += 1;
        let root = self.root;
        let t = self.targets.entry(s.pid).or_insert_with(|| Target::read(root, s.pid));
        if t.find(s.addr).is_none() && !self.reread.contains(&s.pid) {
            self.reread.push(s.pid);
            t.reread(root, s.pid);
            self.unwinding.forget(s.pid);
        }
        callers(t, &mut s.stack);
        // The DWARF unwind of the stack copy, unless it stops short of the
        // kernel's frame-pointer chain (a stack deeper than the copy, code
        // without unwind information: where frame pointers still lead).
        if let Some(user) = &s.user {
            self.dwarf.clear();
            let whole = self.unwinding.unwind(s.pid, t, user, &mut self.dwarf);
            callers(t, &mut self.dwarf);
            if self.dwarf.len() > 1 && (whole || self.dwarf.len() >= s.stack.len()) {
                std::mem::swap(&mut s.stack, &mut self.dwarf);
            }
        }
        let m = t.find(s.addr);
        let access = m.map_or(FaultAccess::Unknown, |m| t.access(m, s.addr, self.page));
        (self.sink)(FaultSample {
            pid: s.pid,
            region: m.map(|m| m.region()),
            access,
            bytes: self.period * self.page,
            stack: &s.stack,
        });
    }
}

/// A stack's return addresses moved back into their calls (one byte),
/// and cut where a caller lies outside any executable mapping: where a
/// frame-pointer walk left the rails (code built without frame
/// pointers), the frames from there on are not callers.
fn callers(t: &Target, stack: &mut Vec<u64>) {
    for ip in stack.iter_mut().skip(1) {
        *ip = ip.saturating_sub(1);
    }
    if let Some(cut) = stack.iter().skip(1).position(|&ip| !t.executable(ip)) {
        stack.truncate(cut + 1);
    }
}
