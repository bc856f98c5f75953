//! Reads many processes at once: who they are, then their memory by the
//! cheapest tier that answers (`smaps_rollup`, then `smaps`, then
//! `status`), on every core. Processes that vanish mid-scan are skipped
//! and counted; ones that cannot be read are counted with the reason.

use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::Error;
use crate::model::{Needs, ProcInfo, ProcMemory, Scan, SizeSource, Sizes, StatusSizes};
use crate::source::cgroup_ns;
use crate::source::closes::Closes;
use crate::source::parse::status;
use crate::source::proc_root::join_cmdline;
use crate::source::proc_root::RegionsFile;
use crate::source::ProcRoot;

/// Identity of every process in the tree (kernel threads left out),
/// and how many kernel threads and vanished processes there were.
pub fn list(root: &ProcRoot, needs: Needs) -> crate::error::Result<(Vec<ProcInfo>, usize, usize)> {
    let pids = root.pids()?;
    let closes = Closes::default();
    let found = par_map(&pids, default_threads(), SMALL_READS_PER_THREAD, |&pid| {
        identify(root, pid, needs, &closes)
    });
    let mut out = Vec::with_capacity(found.len());
    let (mut kthreads, mut vanished) = (0, 0);
    for one in found {
        match one {
            Ok(Some(info)) => out.push(info),
            Ok(None) => kthreads += 1,
            // Out of descriptors, every process after would look gone too:
            // a list of one with exit status 0 (`ulimit -n 40` at 100
            // processes, when the batch of closes did not heed the limit).
            Err(e) if e.is_out_of_descriptors() => return Err(e),
            Err(_) => vanished += 1,
        }
    }
    Ok((out, kthreads, vanished))
}

/// One process's identity; `None` for a kernel thread.
///
/// One read of `status` says it all: name, parent, owner, whether it is
/// a kernel thread (no address space: then nothing more is read of it),
/// and the figures the memory read takes from it (the footprint), which
/// ride along in `status_sizes` so `status` is opened once per process.
/// The files read are closed with `closes`'s batch.
pub(crate) fn identify(
    root: &ProcRoot,
    pid: u32,
    needs: Needs,
    closes: &Closes,
) -> crate::error::Result<Option<ProcInfo>> {
    // Read first: a process that takes the PID between the two reads
    // gives its identity with the old start time, and is then told apart.
    let start_time = match needs.start_time {
        true => crate::source::stamp::stamp(root, pid)?.map(|s| s.start_time),
        false => None,
    };
    let status = with_buffer(|buf| {
        root.read_reusing(pid, "status", buf, closes)
            .map(|()| status::parse(buf).unwrap_or_default())
    })?;
    // Kernel threads have no address space: no Vm* lines (older
    // kernels have no `Kthread:` line).
    if status.kthread == Some(true) || (status.kthread.is_none() && status.vm_size.is_none()) {
        return Ok(None);
    }
    let mut info = ProcInfo {
        pid,
        ppid: status.ppid.unwrap_or(0),
        uid: status.uid,
        status_sizes: Some(status_sizes(&status)),
        comm: status.name.unwrap_or_default(),
        start_time,
        ..Default::default()
    };
    info.program = info.comm.clone();
    if needs.cmdline {
        set_cmdline(&mut info, read_cmdline(root, pid, closes));
    }
    if needs.cgroup {
        info.cgroup = with_buffer(|buf| {
            let read = root.read_reusing(pid, "cgroup", buf, closes).ok();
            read.and_then(|()| cgroup_ns::cgroup_path(&String::from_utf8_lossy(buf)))
        })
        .map(|path| cgroup_ns::to_host(root, path));
    }
    Ok(Some(info))
}

/// The figures `status` gives of a process's memory.
fn status_sizes(s: &status::Status) -> StatusSizes {
    StatusSizes {
        rss: s.vm_rss,
        swap: s.vm_swap,
        size: s.vm_size,
        footprint: s.footprint(),
        rss_peak: s.vm_hwm,
    }
}

/// The command line joined, where it can be read. Joined as soon as it
/// is read, into the reading thread's one buffer: the raw bytes of every
/// process kept until all were read would be the largest part of `top
/// --all`'s memory.
fn read_cmdline(root: &ProcRoot, pid: u32, closes: &Closes) -> Option<String> {
    with_buffer(|buf| {
        root.read_reusing(pid, "cmdline", buf, closes).ok().map(|()| join_cmdline(buf))
    })
}

/// The most a reading thread's buffer keeps between reads: a first read
/// is 16 KiB (`bounded::read_record`); one long command line (up to
/// `MAX_SMALL`) is not kept for every read after it.
const KEPT_BUFFER: usize = 64 << 10;

thread_local! {
    /// Each reading thread's buffer for the small files it reads of every
    /// process (`status`, `smaps_rollup`, `cmdline`, `cgroup`): one
    /// allocation per thread, not one per file read.
    static BUFFER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// `f` with this thread's read buffer (a fresh one if `f` reads again
/// from inside: never the case, but never a panic either).
fn with_buffer<R>(f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    BUFFER.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buf) => {
            let out = f(&mut buf);
            if buf.capacity() > KEPT_BUFFER {
                *buf = Vec::new();
            }
            out
        }
        Err(_) => f(&mut Vec::new()),
    })
}

/// Reads the command lines of the processes at `which` and derives their
/// program names from them, on `threads` threads.
pub(crate) fn fill_cmdlines(
    root: &ProcRoot,
    processes: &mut [ProcMemory],
    which: &[usize],
    threads: usize,
) {
    let pids: Vec<u32> = which.iter().map(|&i| processes[i].info.pid).collect();
    let closes = Closes::default();
    let cmdlines =
        par_map(&pids, threads, SMALL_READS_PER_THREAD, |&pid| read_cmdline(root, pid, &closes));
    for (&i, cmdline) in which.iter().zip(cmdlines) {
        set_cmdline(&mut processes[i].info, cmdline);
    }
}

fn set_cmdline(info: &mut ProcInfo, cmdline: Option<String>) {
    info.cmdline = cmdline.unwrap_or_default();
    if let Some(first) = info.cmdline.split(' ').next().filter(|w| !w.is_empty()) {
        info.program = first.rsplit('/').next().unwrap_or(first).to_string();
    }
}

/// What happened reading one process's memory. The figures are boxed:
/// every process's outcome is held at once (beside every identity) until
/// the scan is put together, and a boxed one is 8 bytes there, not 500,
/// moved into its process once.
enum Outcome {
    Read(SizeSource, Box<Sizes>),
    Restricted(Box<Sizes>),
    /// Neither smaps_rollup nor smaps could be read, for a reason other
    /// than permission (said): the figures are status's, and the scan is partial.
    Degraded(Box<Sizes>, String),
    Vanished,
    Failed(String),
}

/// Reads one process's totals by the cheapest tier that answers.
fn read_memory(root: &ProcRoot, info: &ProcInfo, closes: &Closes) -> Outcome {
    let pid = info.pid;
    let mut why = None;
    // status's figures: those read with the identity, else read now (a
    // process listed by another way).
    let from_status = || match info.status_sizes {
        Some(sizes) => Ok(sizes),
        None => with_buffer(|buf| {
            root.read_reusing(pid, "status", buf, closes)
                .map(|()| status_sizes(&status::parse(buf).unwrap_or_default()))
        }),
    };
    // The footprint (RssAnon + VmSwap) and the peak RSS (VmHWM) are
    // status's: figures a denied smaps still leaves.
    let with_status = |sizes: Sizes| {
        let s = from_status().unwrap_or_default();
        Sizes { footprint: s.footprint, rss_peak: s.rss_peak, ..sizes }
    };
    let denied = match with_buffer(|buf| root.rollup_reusing(pid, buf, closes)) {
        // Read of the process selected, not of another that took its PID
        // (a stamp taken after the read: the PID was the selected
        // process's until then).
        Ok(_) if !still_selected(root, info) => return Outcome::Vanished,
        Ok(sizes) => return Outcome::Read(SizeSource::SmapsRollup, Box::new(with_status(sizes))),
        Err(Error::NoSuchProcess { .. }) => return Outcome::Vanished,
        Err(Error::PermissionDenied { .. }) => true,
        // No rollup (kernel before 4.14, or a capture without it): sum smaps.
        Err(_) => match root.read_regions(pid, RegionsFile::Smaps, Vec::new()) {
            Ok(regions) => {
                let sizes = with_status(Sizes::total(&regions));
                return Outcome::Read(SizeSource::Smaps, Box::new(sizes));
            }
            Err(Error::NoSuchProcess { .. } | Error::Exited { .. }) => return Outcome::Vanished,
            Err(Error::PermissionDenied { .. }) => true,
            Err(e) => {
                why = Some(e.to_string());
                false
            }
        },
    };
    match from_status().map(|s| Box::new(s.sizes())) {
        Ok(sizes) => match why {
            _ if denied => Outcome::Restricted(sizes),
            Some(why) => Outcome::Degraded(sizes, why),
            // A capture with status alone: nothing was unreadable.
            None => Outcome::Read(SizeSource::Status, sizes),
        },
        Err(Error::NoSuchProcess { .. }) => Outcome::Vanished,
        Err(e) => Outcome::Failed(e.to_string()),
    }
}

/// Whether `info.pid` still names the process its selection identified
/// (only a narrowed selection keeps a start time: one more `stat` read
/// per process there, none for every process).
fn still_selected(root: &ProcRoot, info: &ProcInfo) -> bool {
    if info.start_time.is_none() {
        return true;
    }
    match crate::source::stamp::stamp(root, info.pid) {
        Ok(now) => crate::source::stamp::same_life(info, now.as_ref(), None),
        Err(_) => false,
    }
}

/// Reads the memory of every process in `infos`, on `threads` threads.
/// `done` is called once per process read (from any of the threads).
pub fn read_all(
    root: &ProcRoot,
    infos: Vec<ProcInfo>,
    threads: usize,
    done: &(dyn Fn() + Sync),
) -> Scan {
    // One process per turn: a single big process's rollup can take
    // milliseconds (the kernel walks its page tables), so even two
    // processes are worth two threads.
    let closes = Closes::default();
    let outcomes = par_map(&infos, threads, 1, |info| {
        let outcome = read_memory(root, info, &closes);
        // A recording its capture marked incomplete (never on procfs).
        let marked = root.incomplete(info.pid);
        done();
        (outcome, marked)
    });
    // Sized once: grown by doubling, the old and new buffers of a list
    // of every process would both be held at its largest.
    let mut scan = Scan {
        processes: Vec::with_capacity(infos.len()),
        cut_short: root.cut_short(),
        ..Scan::default()
    };
    for (info, (outcome, marked)) in infos.into_iter().zip(outcomes) {
        if let (Some(why), false) = (marked, matches!(outcome, Outcome::Vanished)) {
            scan.failed.push((
                info.pid,
                format!("recorded incomplete ({why}); listed with what was recorded"),
            ));
        }
        match outcome {
            Outcome::Read(source, sizes) => {
                scan.processes.push(ProcMemory { info, source, sizes: *sizes })
            }
            Outcome::Restricted(sizes) => {
                scan.restricted.push(info.pid);
                scan.processes.push(ProcMemory { info, source: SizeSource::Status, sizes: *sizes });
            }
            Outcome::Degraded(sizes, why) => {
                scan.failed.push((info.pid, format!("{why}; figures from status instead")));
                scan.processes.push(ProcMemory { info, source: SizeSource::Status, sizes: *sizes });
            }
            Outcome::Vanished => scan.vanished += 1,
            Outcome::Failed(why) => scan.failed.push((info.pid, format!("{why}; left out"))),
        }
    }
    scan
}

/// How many small-file reads (`stat`, `cmdline`: some microseconds each)
/// make starting one more thread worth it.
const SMALL_READS_PER_THREAD: usize = 32;

/// `f` over every item on up to `threads` threads (at least `per_thread`
/// items each), results in the items' order. Threads take the next item
/// as they finish one, so one slow item does not hold up the rest. With
/// one thread it runs on the caller's, starting none.
pub(crate) fn par_map<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    per_thread: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let threads = threads.min(items.len().div_ceil(per_thread.max(1))).max(1);
    if threads == 1 {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let mut done: Vec<(usize, R)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break };
                        mine.push((i, f(item)));
                    }
                    mine
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    done.sort_unstable_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// How many threads to read with: every core (as the scheduler and the
/// cgroup's CPU quota allow), since each read is the kernel walking page
/// tables (CPU work) rather than waiting on a disk.
pub(crate) fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()).min(8)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A narrowed selection's process read later is the one selected: a
    /// PID that names a process started at another time reads as gone.
    #[test]
    fn a_pid_now_naming_another_process_reads_as_vanished() {
        let root = ProcRoot::live();
        let Some(mut child) = crate::source::stamp::sleeping_child() else {
            eprintln!("skipped: cannot start sleep");
            return;
        };
        let needs = Needs { start_time: true, ..Needs::default() };
        let info = identify(&root, child.id(), needs, &Closes::default()).unwrap().unwrap();
        assert!(info.start_time.is_some());
        let read = read_memory(&root, &info, &Closes::default());
        assert!(matches!(read, Outcome::Read(..)));
        let later = ProcInfo { start_time: info.start_time.map(|t| t + 1), ..info };
        assert!(matches!(read_memory(&root, &later, &Closes::default()), Outcome::Vanished));
        let _ = child.kill();
        let _ = child.wait();
    }

    #[test]
    fn par_map_keeps_order_and_covers_every_item() {
        let items: Vec<u64> = (0..1000).collect();
        for (threads, per_thread) in [(1, 1), (2, 1), (4, 32), (8, 2000), (3, 0)] {
            let seen = AtomicUsize::new(0);
            let out = par_map(&items, threads, per_thread, |&x| {
                seen.fetch_add(1, Ordering::Relaxed);
                x * x
            });
            assert_eq!(out, items.iter().map(|x| x * x).collect::<Vec<_>>());
            assert_eq!(seen.load(Ordering::Relaxed), items.len());
        }
        assert!(par_map(&[] as &[u8], 4, 1, |_| 0u8).is_empty());
    }

    #[test]
    fn par_map_uses_several_threads_only_when_there_is_enough_work() {
        let threads_used = |n: usize, threads: usize, per_thread: usize| {
            let items = vec![(); n];
            let ids = par_map(&items, threads, per_thread, |_| {
                // Long enough that a second thread gets some items.
                std::thread::sleep(std::time::Duration::from_millis(10));
                std::thread::current().id()
            });
            let mut ids: Vec<_> = ids.into_iter().map(|id| format!("{id:?}")).collect();
            ids.sort();
            ids.dedup();
            ids
        };
        let caller = format!("{:?}", std::thread::current().id());
        assert_eq!(threads_used(10, 1, 1), vec![caller.clone()]);
        assert_eq!(threads_used(31, 2, 32), vec![caller.clone()]);
        let two = threads_used(8, 2, 1);
        assert_eq!(two.len(), 2);
        assert!(!two.contains(&caller));
    }

    #[test]
    fn what_a_scan_holds_per_process_stays_small() {
        // A scan holds every identity and every outcome at once (issue 25:
        // peak RSS at 3,000 processes): neither carries a whole `Sizes`
        // (an identity: its strings, five figures of `status`, the start
        // time).
        assert!(std::mem::size_of::<Sizes>() > 500);
        assert!(std::mem::size_of::<ProcInfo>() <= 208, "{}", std::mem::size_of::<ProcInfo>());
        assert!(std::mem::size_of::<(Outcome, Option<String>)>() <= 64);
        let s = StatusSizes {
            rss: Some(1),
            swap: Some(2),
            size: Some(3),
            footprint: Some(4),
            rss_peak: Some(5),
        };
        let sizes = s.sizes();
        assert_eq!(
            (sizes.rss, sizes.swap, sizes.size, sizes.footprint, sizes.rss_peak),
            (s.rss, s.swap, s.size, s.footprint, s.rss_peak)
        );
        assert_eq!(
            Sizes { rss: None, swap: None, size: None, footprint: None, rss_peak: None, ..sizes },
            Sizes::default()
        );
    }
}
