//! Snapshots: everything `show` and `top` know about a selection at one
//! moment, as one document; and reading any document memtally can
//! compare (a snapshot, `show`/`vmmap` JSON, or saved vmmap text).

use std::collections::{HashMap, HashSet};
use std::path::Path;

use crate::analyze::select::Selection;
use crate::analyze::snapshot::{linux_snapshot, vmmap_snapshot, Moment};
use crate::analyze::wss::{WssProcess, WssReport};
use crate::error::{Error, PageFigure, Result, Uncomparable};
use crate::model::snap_pages::{ExactMethod, SnapExact, SnapWss};
use crate::model::snapshot::{Digest, Snapshot};
use crate::model::{Note, ProcInfo, Sizes};
use crate::source::json_frames::FrameError;
use crate::source::parse::{snapshot as snapshot_file, snapshot_html, vmmap};
use crate::source::users::UserNames;
use crate::source::{bounded, snapshot_digest, ProcRoot};
use crate::usecase::pages::{exact_figures, read_pages, FramesFor};
use crate::usecase::read::read_full;
use crate::usecase::Progress;

/// A snapshot taken, and what it leaves out. The document's own `notes`
/// are text for its readers: whoever writes it words these into them.
#[derive(Debug)]
#[non_exhaustive]
pub struct Taken {
    /// The document, its `notes` empty.
    pub snapshot: Snapshot,
    /// Processes that could not be read or exited meanwhile.
    pub notes: Vec<Note>,
}

impl Taken {
    /// A snapshot and what it leaves out, put together by another use case.
    pub(crate) fn new(snapshot: Snapshot, notes: Vec<Note>) -> Taken {
        Taken { snapshot, notes }
    }

    /// Whether some selected process is missing from the snapshot.
    pub fn partial(&self) -> bool {
        !self.notes.is_empty()
    }
}

/// Reads the selection in full and builds the snapshot.
pub fn take(root: &ProcRoot, sel: &Selection, progress: &dyn Progress) -> Result<Taken> {
    let (selected, read) = read_full(root, sel, progress)?;
    let mut snap = linux_snapshot(&read.processes, moment(root));
    // Who each process is (parent, owner), from the selection's listing.
    let users = UserNames::default();
    let infos: HashMap<u32, &ProcInfo> = selected.infos.iter().map(|i| (i.pid, i)).collect();
    for p in &mut snap.processes {
        if let Some(info) = p.pid.and_then(|pid| infos.get(&pid)) {
            p.ppid = Some(info.ppid);
            p.user = info.uid.map(|uid| users.name(Some(uid)));
        }
    }
    Ok(Taken { snapshot: snap, notes: read.notes() })
}

/// Adds to a snapshot just taken each process's exclusive figure and the
/// selection's (`snapshot --exact`), its pages read now, after the
/// regions. Live only ([`Error::LiveOnly`] for a recording); the frames'
/// map counts need CAP_SYS_ADMIN ([`Error::FramesHidden`] says so, and no
/// figure is made up). A process whose pages could not be read (it
/// exited meanwhile) keeps no figure, and a note says so.
pub fn add_exact(root: &ProcRoot, sel: &Selection, taken: &mut Taken) -> Result<()> {
    let snap = &mut taken.snapshot;
    let procs: Vec<(usize, (u32, String))> = snap
        .processes
        .iter()
        .enumerate()
        .filter_map(|(i, p)| p.pid.map(|pid| (i, (pid, p.comm.clone()))))
        .collect();
    let (at, procs): (Vec<usize>, Vec<(u32, String)>) = procs.into_iter().unzip();
    let read = read_pages(root, &procs, FramesFor::Shared, PageFigure::Exclusive)?;
    let when = moment(root);
    // One group per process, in the order read.
    let members: Vec<Vec<usize>> = (0..procs.len()).map(|i| vec![i]).collect();
    let figures = exact_figures(root, &read, &members, sel.is_everything());
    for (i, figure) in at.into_iter().zip(figures.groups) {
        snap.processes[i].exclusive = figure;
    }
    snap.exact = Some(SnapExact {
        method: ExactMethod::PagemapKpagecount,
        time: when.time,
        unix_time: when.unix_time,
        selection: figures.all,
    });
    taken.notes.extend(figures.notes);
    Ok(())
}

/// Adds a working-set measurement just read to a snapshot taken after it
/// (`snapshot --wss DURATION`): each measured process's totals and
/// categories get `touched`, `working_set` and `cold`, the snapshot its
/// method and interval. A process not measured (it exited, or was not
/// held) gets none; the measurement's notes join the snapshot's. Over
/// several processes the snapshot's own totals and categories leave the
/// three out (shared pages count in each process: `model::summable`).
pub fn add_working_set(taken: &mut Taken, report: &WssReport) {
    let by_pid: HashMap<u32, &WssProcess> = report.processes.iter().map(|p| (p.pid, p)).collect();
    let copy = |to: &mut Sizes, from: &Sizes| {
        to.touched = from.touched;
        to.working_set = from.working_set;
        to.cold = from.cold;
    };
    let snap = &mut taken.snapshot;
    for p in &mut snap.processes {
        let Some(w) = p.pid.and_then(|pid| by_pid.get(&pid)) else { continue };
        copy(&mut p.totals, &w.totals);
        for c in &mut p.categories {
            if let Some(wc) = w.categories.iter().find(|x| x.category.key() == c.key) {
                copy(&mut c.sizes, &wc.sizes);
            }
        }
    }
    let summed = Snapshot::of(std::mem::take(&mut snap.processes), snap.kind);
    snap.processes = summed.processes;
    snap.totals = summed.totals;
    snap.categories = summed.categories;
    snap.wss = Some(SnapWss { method: report.method, interval_s: report.interval_s });
    taken.notes.extend(report.notes.iter().cloned());
}

/// When and where: now, the host and kernel the /proc tree describes.
pub(crate) fn moment(root: &ProcRoot) -> Moment {
    let now = std::time::SystemTime::now();
    let read = |p: &str| {
        root.read_path(&root.path().join(p))
            .ok()
            .map(|b| String::from_utf8_lossy(&b).trim().to_string())
            .filter(|s| !s.is_empty())
    };
    Moment {
        time: Some(humantime::format_rfc3339_millis(now).to_string()),
        unix_time: now.duration_since(std::time::UNIX_EPOCH).ok().map(|d| d.as_secs_f64()),
        host: read("sys/kernel/hostname"),
        kernel: read("sys/kernel/osrelease"),
        proc_root: Some(root.path().display().to_string()),
        machine: root.meminfo().map(|m| m.fields),
    }
}

/// Loads any document memtally can compare: a `memtally snapshot` file,
/// the JSON of `show` or of `vmmap`, saved vmmap text, or a `memtally
/// report` page (the snapshot it embeds).
pub fn load(path: &Path) -> Result<Snapshot> {
    let bad = |message: String| Error::Parse { path: path.to_path_buf(), message };
    // A `memtally snapshot` file (its first key says so) is read straight
    // from the file into the snapshot: no copy of the text and no JSON
    // tree beside it (that was about 10 times the file's size in memory).
    if let Some(snap) = load_snapshot_streamed(path)? {
        return Ok(snap);
    }
    let bytes = bounded::read_input(path).map_err(|e| input_error(path, e))?;
    if snapshot_html::is_html(&bytes) {
        return snapshot_html::parse(&bytes).map_err(|e| bad(e.message));
    }
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| bad("not UTF-8 text: not a memtally snapshot or JSON output".into()))?;
    if !text.trim_start().starts_with('{') {
        return from_vmmap_text(path, text);
    }
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| bad(format!("not valid JSON: {e}")))?;
    if !snapshot_file::is_comparable(&value) {
        return Err(Error::NotComparable { path: path.to_path_buf(), input: Uncomparable::Json });
    }
    snapshot_file::from_json(value).map_err(|e| bad(e.message))
}

/// `Some` when `path` is a `memtally snapshot` document (it starts with
/// `{"memtally_snapshot":`), read with serde from the file.
fn load_snapshot_streamed(path: &Path) -> Result<Option<Snapshot>> {
    let Some(r) = open_snapshot(path)? else { return Ok(None) };
    let snap: Snapshot = serde_json::from_reader(r).map_err(|e| snapshot_error(path, e))?;
    check_version(path, snap.memtally_snapshot)?;
    Ok(Some(snap))
}

/// The file, buffered, when it starts as a `memtally snapshot` document.
fn open_snapshot(path: &Path) -> Result<Option<std::io::BufReader<bounded::Input>>> {
    use std::io::{BufRead, BufReader};
    let f = bounded::open_input(path).map_err(|e| input_error(path, e))?;
    let mut r = BufReader::with_capacity(64 << 10, f);
    let head = r.fill_buf().map_err(|e| input_error(path, e))?;
    let start: Vec<u8> =
        head.iter().copied().filter(|b| !b.is_ascii_whitespace()).take(24).collect();
    Ok(start.starts_with(b"{\"memtally_snapshot\":").then_some(r))
}

fn snapshot_error(path: &Path, e: serde_json::Error) -> Error {
    let bad = |message: String| Error::Parse { path: path.to_path_buf(), message };
    match e.classify() {
        serde_json::error::Category::Data => bad(format!("not a valid snapshot: {e}")),
        serde_json::error::Category::Io => input_error(path, e.into()),
        _ => bad(format!("not valid JSON: {e}")),
    }
}

/// A document that is not one (a device, larger than
/// [`bounded::MAX_INPUT`]) is bad input; other failures are I/O.
fn input_error(path: &Path, e: std::io::Error) -> Error {
    match e.kind() {
        std::io::ErrorKind::InvalidData => {
            Error::Parse { path: path.to_path_buf(), message: e.to_string() }
        }
        _ => Error::io(path, e),
    }
}

fn check_version(path: &Path, version: u32) -> Result<()> {
    if version != crate::model::snapshot::SNAPSHOT_VERSION {
        return Err(Error::Parse {
            path: path.to_path_buf(),
            message: format!(
                "snapshot format {version} is not the one this memtally reads ({})",
                crate::model::snapshot::SNAPSHOT_VERSION
            ),
        });
    }
    Ok(())
}

/// A document's digest, and whether it kept only the regions asked for.
#[derive(Debug)]
pub struct DigestRead {
    /// What was kept of the document.
    pub digest: Digest,
    /// A `memtally snapshot` in a regular file, streamed: it kept no
    /// region, only where each begins, for [`fetch_regions`].
    pub streamed: bool,
}

/// What `diff` reads of a document (see [`Digest`]). A `memtally
/// snapshot` in a regular file is streamed once, keeping no region but
/// where each begins in the file. Any other document (or one in a pipe,
/// which cannot be read twice) keeps every region.
pub fn load_digest(path: &Path) -> Result<DigestRead> {
    let regular = std::fs::metadata(path).map_err(|e| Error::io(path, e))?.is_file();
    match open_snapshot(path)? {
        Some(r) => {
            let d = snapshot_digest::read(r, !regular).map_err(|e| frame_error(path, e))?;
            check_version(path, d.snapshot.memtally_snapshot)?;
            Ok(DigestRead { digest: d, streamed: regular })
        }
        None => Ok(DigestRead { digest: Digest::of(load(path)?), streamed: false }),
    }
}

/// Adds to a digest [`load_digest`] streamed from `path` process `i`'s
/// regions named in `keep[i]`, each read where it begins (a few hundred
/// bytes apiece, not the file again).
pub fn fetch_regions(path: &Path, d: &mut Digest, keep: &[HashSet<u64>]) -> Result<()> {
    let r = bounded::open_input(path).map_err(|e| input_error(path, e))?;
    snapshot_digest::fetch_regions(r, d, keep).map_err(|e| match e {
        snapshot_digest::FetchError::Changed => Error::Parse {
            path: path.to_path_buf(),
            message: "changed while being compared; run again".into(),
        },
        snapshot_digest::FetchError::Frame(e) => frame_error(path, e),
    })
}

/// What `diff` reads of its later document, once: as [`load_digest`],
/// but a streamed `memtally snapshot` keeps every region `before` may
/// lack (see `snapshot_digest::read_against`), so it is never read
/// again. Any other document keeps every region.
pub fn load_digest_against(path: &Path, before: &Digest) -> Result<Digest> {
    match open_snapshot(path)? {
        Some(r) => {
            let d = snapshot_digest::read_against(r, before).map_err(|e| frame_error(path, e))?;
            check_version(path, d.snapshot.memtally_snapshot)?;
            Ok(d)
        }
        None => Ok(Digest::of(load(path)?)),
    }
}

/// A streamed snapshot's failure, worded with the byte where it happened.
fn frame_error(path: &Path, e: FrameError) -> Error {
    let bad = |message: String| Error::Parse { path: path.to_path_buf(), message };
    match e {
        FrameError::Io(e) => input_error(path, e),
        FrameError::Syntax { at, what } => {
            bad(format!("not valid JSON: expected {what} at byte {at}"))
        }
        FrameError::Shape { at, what } => {
            bad(format!("not a valid snapshot: expected {what} at byte {at}"))
        }
        FrameError::Value { at, error } => {
            // serde_json counts lines and columns within the value.
            let whole = error.to_string();
            let place = format!(" at line {} column {}", error.line(), error.column());
            let (message, at) = match whole.strip_suffix(&place) {
                Some(m) if error.line() == 1 => (m.to_string(), at + error.column() as u64 - 1),
                Some(m) => (m.to_string(), at),
                None => (whole, at),
            };
            match error.classify() {
                serde_json::error::Category::Data => {
                    bad(format!("not a valid snapshot: {message} at byte {at}"))
                }
                _ => bad(format!("not valid JSON: {message} at byte {at}")),
            }
        }
    }
}

/// Non-JSON input: a saved macOS vmmap report.
fn from_vmmap_text(path: &Path, text: &str) -> Result<Snapshot> {
    let (doc, regions) =
        vmmap::parse_all(text.as_bytes(), Default::default()).map_err(|e| Error::io(path, e))?;
    if doc.regions == 0 && doc.summary.is_empty() {
        return Err(Error::NotComparable { path: path.to_path_buf(), input: Uncomparable::Text });
    }
    Ok(vmmap_snapshot(&doc, &regions))
}
