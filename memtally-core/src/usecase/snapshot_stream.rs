//! `snapshot` written as it is read, as a file of JSON Lines (format 2,
//! `model::snap_lines`): the head line; each process read on this thread
//! (starting none), its regions written a line each as they are parsed
//! (`snapshot_regions`), then its process line (its totals and categories,
//! known once its regions are read); the end line last, with the sums over
//! every process and what is known only once every process is read: each
//! process's share of swapped shared memory (each object's swap split
//! among its holders) and, with `--exact`, the exclusive figures, read
//! after the regions. A few figures a process are kept, nothing else, so
//! memory stays flat in processes and in mappings.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;

use crate::analyze::select::Selection;
use crate::analyze::shmem_swap::{shares, Object};
use crate::analyze::snapshot::linux_head;
use crate::analyze::wss::{WssProcess, WssReport};
use crate::error::{Error, Result};
use crate::model::snap_lines::{SnapEnd, SnapHead, SnapLine, SnapProcessLine, LINES_VERSION};
use crate::model::snap_pages::SnapWss;
use crate::model::snapshot::Moment;
use crate::model::snapshot::{SnapProcess, SnapRegion, SnapshotKind, Summing};
use crate::model::{Group, Needs, Note, ProcInfo, Process, SizeSource, Sizes};
use crate::source::users::UserNames;
use crate::source::ProcRoot;
use crate::usecase::read::ReadProcesses;
use crate::usecase::select::select;
use crate::usecase::snapshot::{exact_figures_of, moment, ExactFigures};
use crate::usecase::snapshot_regions::{read_process, RegionLines};
use crate::usecase::Progress;

/// Where a streamed snapshot goes, and how its notes and write errors are
/// worded (by the caller: the library words neither).
pub struct Output<'a> {
    /// The file is written here (buffer it: it is written in pieces).
    pub out: &'a mut dyn Write,
    /// A note as the file's `notes` hold it.
    pub word: &'a dyn Fn(&Note) -> String,
    /// A failed write as an error (it names the file written).
    pub error: &'a dyn Fn(std::io::Error) -> Error,
}

/// What a snapshot holds beside the regions and their sums.
#[derive(Debug, Default, Clone, Copy)]
#[non_exhaustive]
pub struct Extras<'a> {
    /// A working-set measurement made just before (`snapshot --wss`): its
    /// figures join each measured process's totals and categories.
    pub working_set: Option<&'a WssReport>,
    /// Each process's exclusive figure and the selection's, their pages
    /// read after every region (`snapshot --exact`; live only, needs
    /// CAP_SYS_ADMIN).
    pub exact: bool,
}

impl<'a> Extras<'a> {
    /// With a working-set measurement's figures.
    pub fn with_working_set(mut self, report: Option<&'a WssReport>) -> Extras<'a> {
        self.working_set = report;
        self
    }

    /// With the exclusive figures, or without.
    pub fn with_exact(mut self, exact: bool) -> Extras<'a> {
        self.exact = exact;
        self
    }
}

/// Reads the selection and writes its snapshot to `output` as it reads;
/// returns what the snapshot leaves out (also worded into its `notes`).
/// Nothing is written when nothing could be read, or when `--exact`'s
/// figures cannot be (the error says why); a read that fails later leaves
/// a file without its end line, which no reader takes for whole.
pub fn take_into(
    root: &ProcRoot,
    sel: &Selection,
    progress: &dyn Progress,
    extras: Extras<'_>,
    output: Output<'_>,
) -> Result<Vec<Note>> {
    if extras.exact {
        crate::usecase::pages::check_frames(root, crate::error::PageFigure::Exclusive)?;
    }
    let selected = select(root, sel, Needs::default())?;
    selected.require_any(root, sel)?;
    let mut read = ReadProcesses { vanished: selected.vanished, ..Default::default() };
    let mut doc = Writer::new(moment(root), extras.working_set, output.out)?;
    let users = UserNames::default();
    progress.start("reading processes", selected.infos.len());
    for info in &selected.infos {
        let mut sink = RegionLines::new(&mut *doc.out, &mut doc.head);
        let result = read_process(root, info, &mut sink);
        if result.is_err() {
            sink.drop_written();
        }
        let (categories, objects) = sink.finish().map_err(output.error)?;
        match result {
            Ok(p) => doc.process(&p, info, &users, categories, objects).map_err(output.error)?,
            Err(e) => read.missed(e),
        }
        progress.step();
    }
    progress.finish();
    if doc.late.is_empty() {
        // No process line was written: the reason instead (with no
        // process read, `require_some` always gives one).
        return Err(match read.require_some() {
            Err(e) => e,
            Ok(_) => Error::NotFound("no selected process could be read".into()),
        });
    }
    let mut notes = read.notes();
    if let Some(report) = extras.working_set {
        notes.extend(report.notes.iter().cloned());
    }
    let exact = if extras.exact {
        let procs: Vec<(u32, String)> = doc.late.iter().map(|l| (l.pid, l.comm.clone())).collect();
        let figures = exact_figures_of(root, sel, &procs)?;
        notes.extend(figures.notes.iter().cloned());
        Some(figures)
    } else {
        None
    };
    doc.finish(notes.iter().map(output.word).collect(), exact).map_err(output.error)?;
    Ok(notes)
}

/// The file as far as it is written.
struct Writer<'a> {
    out: &'a mut dyn Write,
    /// The first line, until a line after it is written.
    head: Option<Vec<u8>>,
    /// The working set measured, by pid.
    working_set: HashMap<u32, &'a WssProcess>,
    sums: Summing,
    /// Each process written, what the end line needs of it.
    late: Vec<Late>,
    line: Vec<u8>,
}

/// What the end line needs of a process written.
struct Late {
    pid: u32,
    comm: String,
    /// Its swapped shared memory, by object.
    objects: BTreeMap<Object, u64>,
    /// Read from smaps (a process read from maps has no swap to share).
    smaps: bool,
}

impl<'a> Writer<'a> {
    fn new(
        moment: Moment,
        working_set: Option<&'a WssReport>,
        out: &'a mut dyn Write,
    ) -> Result<Writer<'a>> {
        let head = SnapHead {
            memtally_snapshot: LINES_VERSION,
            kind: SnapshotKind::Linux,
            moment,
            wss: working_set.map(|r| SnapWss { method: r.method, interval_s: r.interval_s }),
        };
        let mut bytes = serde_json::to_vec(&head).map_err(|e| Error::Usage(e.to_string()))?;
        bytes.push(b'\n');
        let working_set = working_set
            .map(|r| r.processes.iter().map(|p| (p.pid, p)).collect())
            .unwrap_or_default();
        Ok(Writer {
            out,
            head: Some(bytes),
            working_set,
            sums: Summing::default(),
            late: Vec::new(),
            line: Vec::new(),
        })
    }

    /// Writes `line` as one line of the file (the head first, if not yet).
    fn write(&mut self, line: &SnapLine<SnapRegion>) -> std::io::Result<()> {
        if let Some(head) = self.head.take() {
            self.out.write_all(&head)?;
        }
        self.line.clear();
        serde_json::to_writer(&mut self.line, line)?;
        self.line.push(b'\n');
        self.out.write_all(&self.line)
    }

    /// Writes the line of process `p`, whose regions went before it.
    fn process(
        &mut self,
        p: &Process,
        info: &ProcInfo,
        users: &UserNames,
        categories: Vec<Group>,
        objects: BTreeMap<Object, u64>,
    ) -> std::io::Result<()> {
        let mut snap = linux_head(p, categories, 0);
        snap.ppid = Some(info.ppid);
        snap.user = info.uid.map(|uid| users.name(Some(uid)));
        if let Some(w) = self.working_set.get(&p.pid) {
            add_wss(&mut snap, w);
        }
        self.sums.add(&snap);
        self.late.push(Late {
            pid: p.pid,
            comm: snap.comm.clone(),
            objects,
            smaps: p.source == SizeSource::Smaps,
        });
        let (line, _, _) = SnapProcessLine::of(snap);
        self.write(&SnapLine::Process(line))
    }

    /// The end line: the sums over every process, each one's share of
    /// swapped shared memory, the exclusive figures.
    fn finish(mut self, notes: Vec<String>, exact: Option<ExactFigures>) -> std::io::Result<()> {
        let objects: Vec<_> =
            self.late.iter_mut().map(|l| std::mem::take(&mut l.objects)).collect();
        let shares = shares(&objects);
        let swapped: u64 = shares.iter().sum();
        if swapped > 0 {
            self.sums.add_shmem_swap(swapped);
        }
        let shmem_swap = self.late.iter().zip(shares).map(|(l, s)| l.smaps.then_some(s)).collect();
        let sums = std::mem::take(&mut self.sums).into_snapshot(SnapshotKind::Linux);
        let (exact, exclusive) = match exact {
            Some(f) => (Some(f.exact), f.processes),
            None => (None, Vec::new()),
        };
        let end = SnapEnd {
            processes: self.late.len() as u64,
            totals: sums.totals,
            categories: sums.categories,
            notes,
            shmem_swap,
            exact,
            exclusive,
        };
        self.write(&SnapLine::End(end))
    }
}

/// Adds a working-set measurement's figures of process `p` (`touched`,
/// `working_set` and `cold`) to its totals and categories.
fn add_wss(p: &mut SnapProcess, w: &WssProcess) {
    let copy = |to: &mut Sizes, from: &Sizes| {
        to.touched = from.touched;
        to.working_set = from.working_set;
        to.cold = from.cold;
    };
    copy(&mut p.totals, &w.totals);
    for c in &mut p.categories {
        if let Some(wc) = w.categories.iter().find(|x| x.category.key() == c.key) {
            copy(&mut c.sizes, &wc.sizes);
        }
    }
}
