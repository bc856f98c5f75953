//! Reading one process, in named steps: stamp (who it is now, to see an
//! exit or exec later), identity (`comm`, `cmdline`),
//! status, regions (smaps, or maps when smaps is refused: each region
//! parsed, enriched, summed and handed to the sink), check (the second
//! stamp) and rollup (the kernel's sums, read on their own thread). The
//! per-region enrichment hook ([`Enrich`]) is where readers that add to a
//! region after it is parsed plug in (hugetlbfs marks today).

use std::io::BufRead;

use super::{join_cmdline, ProcRoot};
use crate::error::{Error, Result};
use crate::model::sizes::ROUNDED_PER_MAPPING;
use crate::model::{
    Figure, Flow, ProcInfo, Process, Region, RegionSink, SizeSource, Sizes, Streamed,
};
use crate::source::closes::Closes;
use crate::source::enrich::{Enrich, HugetlbfsMarks};
use crate::source::parse::smaps::{ReaderMemory, SmapsReader};
use crate::source::parse::status::{self, Status};
use crate::source::parse::ParseError;
use crate::source::stamp;

/// How to read one process ([`ProcRoot::process`]): its helper threads,
/// what the selection already knows of it, what adds to each region,
/// whether the kernel's sums are read beside the regions, and whether a
/// read an exec spoiled is made once more. Built from `default()` (one
/// process read on its own: threads, rollup, no retry) and the `with_*`
/// setters.
#[non_exhaustive]
pub struct ReadPlan<'a> {
    /// Two helper threads: one reading smaps ahead of the parser, one
    /// reading the rollup beside it. For one big process (the read takes
    /// less time); off for many processes one after another, where each
    /// thread costs more CPU than it saves (docs/benchmarks.md).
    pub threads: bool,
    /// What the selection read of the process a moment before: then its
    /// `status` is not read again (the footprint is the selection's), the
    /// name comes from the `stat` read for the first stamp, and both
    /// stamps read one open `stat` file: five files per process, each
    /// opened once (issue 25). Used only for the process of its PID, and
    /// only on procfs (a recorded tree is read as without it).
    pub known: Option<&'a ProcInfo>,
    /// Applied in turn to each region after the built-in hugetlbfs marks
    /// and before the sink sees it ([`Enrich`]).
    pub enrich: Vec<&'a mut dyn Enrich>,
    /// Read `smaps_rollup`, the kernel's exact sums, beside the regions
    /// (a second walk of the page tables, as costly as smaps). Without
    /// it the totals are the regions' sums.
    pub rollup: bool,
    /// A read that an exec spoiled (or that lost mappings on the way) is
    /// read once more, from scratch and without `known` (what the
    /// selection read is from before the exec), when the sink can drop
    /// what it took ([`RegionSink::restart`]).
    pub retry: bool,
}

impl Default for ReadPlan<'_> {
    fn default() -> Self {
        ReadPlan { threads: true, known: None, enrich: Vec::new(), rollup: true, retry: false }
    }
}

setters!(ReadPlan<'a> {
    with_threads: threads: bool,
    with_known: known: Option<&'a ProcInfo>,
    with_enrich: enrich: Vec<&'a mut dyn Enrich>,
    with_rollup: rollup: bool,
    with_retry: retry: bool,
});

/// The per-process file that lists its regions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RegionsFile {
    /// Addresses, permissions and paths only.
    Maps,
    /// Each mapping with its sizes.
    Smaps,
}

impl RegionsFile {
    fn name(self) -> &'static str {
        match self {
            RegionsFile::Maps => "maps",
            RegionsFile::Smaps => "smaps",
        }
    }
}

impl ProcRoot {
    /// Reads one process as `plan` says, handing each region to `sink` as
    /// it is parsed: smaps when it can, maps otherwise (then only virtual
    /// sizes are known, and `source` says so). Memory stays bounded by one
    /// region, whatever the size of the smaps: the returned process has
    /// no regions (a sink keeps them: `Vec<Region>` is one) and their sums
    /// in `streamed`. A kernel thread or a process that cannot be read at
    /// all is an error.
    ///
    /// A sink that answers [`Flow::Stop`] ends the read there: the process
    /// comes back with `streamed.stopped` set, its totals those of the
    /// regions read, and none of the checks below made.
    ///
    /// Errors found after regions were handed out (the process exited
    /// while being read: [`Error::Exited`]; it exec'd: [`Error::Changed`],
    /// see the `source::stamp` module) still return `Err`: the caller must
    /// then drop what it made of them, unless `plan.retry` read it again.
    pub fn process(
        &self,
        pid: u32,
        mut plan: ReadPlan<'_>,
        sink: &mut impl RegionSink,
    ) -> Result<Process> {
        let known = plan.known.filter(|info| info.pid == pid);
        match self.read_once(pid, known, known, &mut plan, sink) {
            Err(Error::Changed { .. } | Error::Unsteady { .. }) if plan.retry && sink.restart() => {
                self.read_once(pid, None, known, &mut plan, sink)
            }
            read => read,
        }
    }

    /// One read of the process: its steps in order, the rollup on its own
    /// thread when the plan has threads. Not a scoped one: a read the sink
    /// stopped returns without waiting for it (on 60,000 mappings it takes
    /// longer than the rest of a stopped read, docs/benchmarks.md#early-stop).
    fn read_once(
        &self,
        pid: u32,
        known: Option<&ProcInfo>,
        selected: Option<&ProcInfo>,
        plan: &mut ReadPlan<'_>,
        sink: &mut impl RegionSink,
    ) -> Result<Process> {
        let rollup = match (plan.rollup, plan.threads) {
            (false, _) => Rollup::Skipped,
            (true, false) => Rollup::After,
            (true, true) => {
                let (sent, beside) = std::sync::mpsc::sync_channel(1);
                let root = self.clone();
                std::thread::spawn(move || {
                    // A stopped read has dropped the receiver: nobody to tell.
                    let _ = sent.send(root.rollup(pid).ok());
                });
                Rollup::Beside(beside)
            }
        };
        let mut read = match known {
            Some(info) => OneProcess::start_selected(self, info)?,
            None => OneProcess::start(self, pid)?,
        };
        // The PID names the process selected, not another that took it.
        if selected.is_some_and(|info| !stamp::same_life(info, read.before.as_ref(), None)) {
            return Err(Error::Exited { pid, comm: read.process.comm.clone() });
        }
        if read.regions(plan.threads, &mut plan.enrich, sink)?.is_stop() {
            return Ok(read.stopped());
        }
        read.check()?;
        read.rollup(|| match rollup {
            Rollup::Skipped => None,
            Rollup::After => self.rollup(pid).ok(),
            Rollup::Beside(beside) => beside.recv().ok().flatten(),
        })
    }

    /// Reads `smaps_rollup`: the kernel's sums over every mapping.
    pub(crate) fn rollup(&self, pid: u32) -> Result<Sizes> {
        self.rollup_reusing(pid, &mut Vec::new(), &Closes::default())
    }

    /// [`rollup`](Self::rollup), read into `text` (a buffer the caller
    /// keeps for many processes), the file closed with `closes`'s batch.
    pub(crate) fn rollup_reusing(
        &self,
        pid: u32,
        text: &mut Vec<u8>,
        closes: &Closes,
    ) -> Result<Sizes> {
        // About 1 KiB: read whole, then parse from memory.
        self.read_reusing(pid, "smaps_rollup", text, closes)?;
        let mut regions = Vec::new();
        self.parse_into(pid, "smaps_rollup", &text[..], &mut [], &mut regions)?;
        match regions.pop() {
            Some(r) if regions.is_empty() => {
                // The header's range spans the whole address space; it is
                // not a size, so leave `size` unknown.
                Ok(Sizes { size: None, ..r.sizes })
            }
            _ => Err(Error::Parse {
                path: self.pid_file(pid, "smaps_rollup"),
                message: "expected exactly one [rollup] entry".into(),
            }),
        }
    }

    /// Parses `ROOT/PID/smaps` or `maps` alone (no stamps, status or rollup:
    /// see [`process`](Self::process)), handing each region to `sink`; gives it back.
    pub(crate) fn read_regions<S: RegionSink>(
        &self,
        pid: u32,
        file: RegionsFile,
        mut sink: S,
    ) -> Result<S> {
        self.stream_enriched(pid, file, true, &mut [], &mut sink)?;
        Ok(sink)
    }

    fn stream_enriched(
        &self,
        pid: u32,
        file: RegionsFile,
        threads: bool,
        enrich: &mut [&mut dyn Enrich],
        sink: &mut impl RegionSink,
    ) -> Result<Flow> {
        let file = file.name();
        let f = self.open(pid, file)?;
        if !threads {
            let input = std::io::BufReader::with_capacity(crate::source::prefetch::CHUNK, f);
            return self.parse_into(pid, file, input, enrich, sink);
        }
        // smaps of a big process is megabytes that the kernel generates as
        // we read: a helper thread reads the next chunk while this one
        // parses (see PrefetchReader and docs/benchmarks.md).
        let input = crate::source::prefetch::PrefetchReader::new(f);
        self.parse_into(pid, file, input, enrich, sink)
    }

    /// Parses smaps or maps text read from `ROOT/PID/FILE`: each region
    /// enriched (hugetlbfs marks, then `enrich`) and handed to `sink`.
    fn parse_into(
        &self,
        pid: u32,
        file: &str,
        input: impl BufRead,
        enrich: &mut [&mut dyn Enrich],
        sink: &mut impl RegionSink,
    ) -> Result<Flow> {
        let mut smaps = SmapsReader::with_memory(input, READER_MEMORY.take());
        // The path only for an error (it is an allocation or three).
        let path = || self.pid_file(pid, file);
        let mut hugetlbfs = HugetlbfsMarks::new(self, pid);
        let flow = loop {
            match smaps.next_located() {
                Ok(Some((line, r))) => {
                    hugetlbfs.enrich(r);
                    for e in enrich.iter_mut() {
                        e.enrich(r);
                    }
                    if sink.region(line, r).is_stop() {
                        break Ok(Flow::Stop);
                    }
                }
                Ok(None) => break Ok(Flow::Continue),
                Err(ParseError { os_error: Some(code), .. }) => {
                    let e = std::io::Error::from_raw_os_error(code);
                    break Err(self.explain(pid, path(), e));
                }
                Err(e) => break Err(Error::Parse { path: path(), message: e.to_string() }),
            }
        };
        READER_MEMORY.set(smaps.into_memory());
        flow
    }
}

thread_local! {
    /// The smaps reader's memory, kept between the processes a thread
    /// reads one after another (docs/benchmarks.md, "Scale").
    static READER_MEMORY: std::cell::Cell<ReaderMemory> = std::cell::Cell::new(ReaderMemory::default());
}

/// Where a read's rollup comes from: not read, read after the regions,
/// or read on its own thread beside them.
enum Rollup {
    Skipped,
    After,
    Beside(std::sync::mpsc::Receiver<Option<Sizes>>),
}

/// The steps of reading one process, named after what each reads.
struct OneProcess<'r> {
    root: &'r ProcRoot,
    /// The stamp taken first: an exit or exec from then on shows in the
    /// second ([`check`](Self::check)).
    before: Option<stamp::Stamp>,
    /// The open `stat` the second stamp is read through, where the first
    /// was read through it too; else the second opens `stat` anew.
    stat: Option<stamp::StatFile>,
    status: Option<Status>,
    process: Process,
    totals: Streamed,
}

/// A process named but not yet read: its regions and rollup follow.
fn unread(pid: u32, comm: String, cmdline: String, footprint: Option<u64>) -> Process {
    Process {
        pid,
        comm,
        cmdline,
        source: SizeSource::Smaps,
        regions: Vec::new(),
        rollup: None,
        streamed: None,
        footprint,
    }
}

impl<'r> OneProcess<'r> {
    /// Steps stamp, identity and status.
    fn start(root: &'r ProcRoot, pid: u32) -> Result<OneProcess<'r>> {
        let before = stamp::stamp(root, pid)?;
        let (comm, cmdline) = root.identity(pid)?;
        let status = root.read(pid, "status").ok().and_then(|b| status::parse(&b).ok());
        let footprint = status.as_ref().and_then(Status::footprint);
        let process = unread(pid, comm, cmdline, footprint);
        Ok(OneProcess { root, before, stat: None, status, process, totals: Streamed::default() })
    }

    /// Steps stamp, identity and status for a process the selection
    /// identified (see [`ReadPlan::known`]); as
    /// [`start`](Self::start) where the tree is a recording, or the
    /// selection kept no footprint, or the name cannot be read from `stat`.
    fn start_selected(root: &'r ProcRoot, info: &ProcInfo) -> Result<OneProcess<'r>> {
        let pid = info.pid;
        let footprint = info.status_sizes.map(|s| s.footprint);
        let (Some(footprint), Some(stat)) = (footprint, stamp::StatFile::open(root, pid)?) else {
            return OneProcess::start(root, pid);
        };
        let (before, comm) = stat.stamp(root)?;
        let Some(comm) = comm else { return OneProcess::start(root, pid) };
        let cmdline = root.read(pid, "cmdline").map(|b| join_cmdline(&b)).unwrap_or_default();
        let process = unread(pid, comm, cmdline, footprint);
        let stat = Some(stat);
        Ok(OneProcess { root, before, stat, status: None, process, totals: Streamed::default() })
    }

    /// Step regions: smaps, or maps when smaps is refused (nothing was
    /// handed out then: the file could not be opened).
    fn regions(
        &mut self,
        threads: bool,
        enrich: &mut [&mut dyn Enrich],
        sink: &mut impl RegionSink,
    ) -> Result<Flow> {
        let (root, pid) = (self.root, self.process.pid);
        let mut summed = Summed { totals: &mut self.totals, process: &self.process, sink };
        match root.stream_enriched(pid, RegionsFile::Smaps, threads, enrich, &mut summed) {
            Err(smaps_err @ Error::PermissionDenied { .. }) => {
                self.process.source = SizeSource::Maps;
                let mut summed = Summed { totals: &mut self.totals, process: &self.process, sink };
                match root.stream_enriched(pid, RegionsFile::Maps, threads, enrich, &mut summed) {
                    Ok(flow) if self.totals.regions > 0 => Ok(flow),
                    _ => Err(smaps_err),
                }
            }
            read => read,
        }
    }

    /// The process as read when the sink stopped the read.
    fn stopped(mut self) -> Process {
        self.totals.stopped = true;
        self.totals.totals.footprint = self.process.footprint;
        self.process.streamed = Some(self.totals);
        self.process
    }

    /// Step check: the process is still the one whose regions were read.
    fn check(&self) -> Result<()> {
        let (root, pid, count) = (self.root, self.process.pid, self.totals.regions);
        let comm = || self.process.comm.clone();
        // A process that exits or execs while its smaps is read leaves a
        // list cut short at a mapping boundary: call it gone (or changed)
        // rather than show part of it as the whole.
        let change = match &self.stat {
            Some(stat) => stat.check(root, &self.process.comm, self.before.as_ref())?,
            None => stamp::check(root, pid, &self.process.comm, self.before.as_ref())?,
        };
        if change == stamp::Change::Execed {
            return Err(Error::Changed { pid, comm: comm() });
        }
        // A capture that saw the process exit says so in its own mark
        // (then what it kept is shown, as partial); a recorded zombie
        // without one had exited before it was recorded.
        let marked = root.incomplete(pid).is_some();
        if !root.is_procfs() && !marked && self.status.as_ref().is_some_and(Status::exited) {
            return Err(Error::Exited { pid, comm: comm() });
        }
        if marked && count == 0 {
            return Err(Error::Exited { pid, comm: comm() });
        }
        let kernel_thread = self.status.as_ref().and_then(|s| s.kthread).unwrap_or(false)
            || self.before.as_ref().is_some_and(|s| s.kernel_thread());
        if count == 0 && (kernel_thread || self.process.cmdline.is_empty()) {
            return Err(Error::KernelThread { pid, comm: comm() });
        }
        Ok(())
    }

    /// Step rollup: the kernel's sums, kept when they are of the same
    /// instant as the regions.
    fn rollup(mut self, rollup: impl FnOnce() -> Option<Sizes>) -> Result<Process> {
        let sum = &self.totals.totals;
        if self.process.source == SizeSource::Smaps {
            let rollup = rollup();
            // A live read whose regions sum to far less than the rollup
            // read beside them lost mappings on the way: a second sign of
            // an exit or exec, beside the stamp.
            if let Some(r) = rollup.as_ref().filter(|r| self.root.is_procfs() && far_short(sum, r))
            {
                return Err(Error::Unsteady {
                    pid: self.process.pid,
                    comm: self.process.comm,
                    summed_kib: sum.rss.unwrap_or(0) / 1024,
                    rollup_kib: r.rss.unwrap_or(0) / 1024,
                });
            }
            // A recording's rollup must be of the same instant as its smaps to
            // stand for it; a live one, read beside the mappings, only of the
            // same address space (see `same_instant`).
            let recorded = !self.root.is_procfs();
            self.process.rollup =
                rollup.filter(|r| same_instant(r, sum, self.totals.regions, recorded));
        }
        // The footprint is status's (read at the start), whichever file
        // the other figures came from: smaps, its rollup, or maps alone.
        let footprint = self.process.footprint;
        if let Some(r) = self.process.rollup.as_mut() {
            r.footprint = footprint;
        }
        self.totals.totals.footprint = footprint;
        self.process.streamed = Some(self.totals);
        Ok(self.process)
    }
}

/// The regions step's own fold: each region summed and counted, then
/// handed on with the process as known so far.
struct Summed<'a, S> {
    totals: &'a mut Streamed,
    process: &'a Process,
    sink: &'a mut S,
}

impl<S: RegionSink> RegionSink for Summed<'_, S> {
    fn region(&mut self, line: usize, region: &Region) -> Flow {
        if self.totals.regions == 0 && self.sink.begin(self.process).is_stop() {
            return Flow::Stop;
        }
        self.totals.totals.add_region(region);
        self.totals.regions += 1;
        self.sink.region(line, region)
    }
}

/// Whether a rollup describes the same address space as `regions`
/// mappings whose sum is `sum`: every figure that is not proportional must
/// be equal. For a recording (`recorded`), every proportional one must
/// also be at most the rounding above the sum (`smaps` rounds each
/// mapping's down to a whole kB, the rollup only its total): a process
/// that shares pages sees its PSS move when a sharer writes or exits while
/// its resident figures stay, and a capture that recorded the rollup a
/// moment after the mappings then holds two instants; show and a diff of
/// its snapshot must agree, so the mappings' sums stand. A live read takes
/// the kernel's exact sums as they were beside the mappings: memtally's
/// own first touch of the C library it shares with the process moves the
/// process's file PSS while both are read, every time.
fn same_instant(rollup: &Sizes, sum: &Sizes, regions: usize, recorded: bool) -> bool {
    let rounding = (regions as u64).saturating_mul(1024);
    let exact = [
        Figure::Rss,
        Figure::SharedClean,
        Figure::SharedDirty,
        Figure::PrivateClean,
        Figure::PrivateDirty,
        Figure::Anonymous,
        Figure::Swap,
    ]
    .iter()
    .all(|&k| rollup.field(k) == sum.field(k));
    let rounded = ROUNDED_PER_MAPPING.iter().all(|&k| match (rollup.field(k), sum.field(k)) {
        (Some(r), Some(s)) => r >= s && r - s <= rounding,
        _ => true,
    });
    exact && (rounded || !recorded)
}

/// Whether regions summing to `sum` fall short of `rollup`'s resident
/// bytes by more than memory moves between two reads of a steady process
/// (an eighth of it, and at least 1 MiB). Rounding never comes near: the
/// resident figures of both are sums of the same whole kB.
fn far_short(sum: &Sizes, rollup: &Sizes) -> bool {
    let (sum, rollup) = (sum.rss.unwrap_or(0), rollup.rss.unwrap_or(0));
    sum.saturating_add((rollup / 8).max(1 << 20)) < rollup
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts the regions it sees and marks each with an attribute.
    struct Marks(usize);
    impl Enrich for Marks {
        fn enrich(&mut self, region: &mut Region) {
            self.0 += 1;
            region.attributes.push(("marked".into(), self.0.to_string()));
        }
    }

    /// A read planned for the process a selection identified fails as
    /// exited when its PID names a process started at another time.
    #[test]
    fn a_pid_now_naming_another_process_is_not_read_as_the_selected_one() {
        let root = ProcRoot::live();
        let Some(mut child) = crate::source::stamp::sleeping_child() else {
            eprintln!("skipped: cannot start sleep");
            return;
        };
        let pid = child.id();
        let stamp = crate::source::stamp::stamp(&root, pid).unwrap().unwrap();
        let (comm, _) = root.identity(pid).unwrap();
        let info =
            ProcInfo { pid, comm, start_time: Some(stamp.start_time), ..ProcInfo::default() };
        let plan = |info| ReadPlan::default().with_threads(false).with_known(Some(info));
        root.process(pid, plan(&info), &mut Vec::new()).unwrap();
        let later = ProcInfo { start_time: Some(stamp.start_time + 1), ..info.clone() };
        let got = root.process(pid, plan(&later), &mut Vec::new());
        assert!(matches!(got, Err(Error::Exited { .. })), "{got:?}");
        let _ = child.kill();
        let _ = child.wait();
    }

    /// Every plan reads a recorded process to the same regions and sums:
    /// threads or none, the selection's info or not, with or without the
    /// rollup (then the totals are the regions' sums); an enricher sees
    /// every region before the sink does.
    #[test]
    fn every_plan_reads_the_same_process_alike() {
        let Some(dir) = crate::testdata::testdata("fixtures/linux/python3-mmap/proc") else {
            return;
        };
        let root = ProcRoot::new(dir);
        let read = |plan: ReadPlan<'_>| {
            let mut regions = Vec::new();
            let p = root.process(11364, plan, &mut regions).unwrap();
            (p, regions)
        };
        let (whole, regions) = read(ReadPlan::default());
        assert!(regions.len() > 100, "{}", regions.len());
        assert!(whole.rollup.is_some());
        let (infos, _, _) = crate::source::scan::list(&root, Default::default()).unwrap();
        let info = infos.into_iter().find(|i| i.pid == 11364).unwrap();
        for plan in [
            ReadPlan::default().with_threads(false),
            ReadPlan::default().with_threads(false).with_known(Some(&info)).with_retry(true),
            ReadPlan::default().with_known(Some(&info)),
        ] {
            let (p, got) = read(plan);
            assert_eq!(got, regions);
            assert_eq!((p.rollup, p.streamed), (whole.rollup.clone(), whole.streamed.clone()));
        }
        let (p, got) = read(ReadPlan::default().with_rollup(false));
        assert_eq!(got, regions);
        assert_eq!(p.rollup, None);
        let summed = Sizes { footprint: p.footprint, ..Sizes::total(&regions) };
        assert_eq!(p.streamed.unwrap().totals, summed);
        let mut marks = Marks(0);
        let (_, marked) = read(ReadPlan::default().with_enrich(vec![&mut marks]));
        assert_eq!(marks.0, regions.len());
        for (i, (m, r)) in marked.iter().zip(&regions).enumerate() {
            assert_eq!(m.attributes.last(), Some(&("marked".into(), (i + 1).to_string())));
            assert_eq!(m.sizes, r.sizes);
        }
    }
}
