//! Snapshots: everything `show` and `top` know about a selection at one
//! moment, built whole in memory (a report page's; a file is written as it
//! is read, `snapshot_stream`); and reading back any document memtally can
//! compare (a snapshot file, `show`/`vmmap` JSON, a report page, or saved
//! vmmap text).

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use crate::analyze::select::Selection;
use crate::analyze::snapshot::linux_snapshot;
use crate::error::{Error, PageFigure, Result, Uncomparable};
use crate::model::pages::Exclusive;
use crate::model::snap_pages::{ExactMethod, SnapExact};
use crate::model::snapshot::{Moment, Snapshot};
use crate::model::{Note, ProcInfo};
use crate::source::parse::snapshot::{self as snapshot_file, ReadError, Start};
use crate::source::parse::snapshot_feed::{self, FeedShape, Kept, LinesFeed, VmmapFeed};
use crate::source::parse::snapshot_lines::{self, LinesError};
use crate::source::parse::{snapshot_html, vmmap};
use crate::source::users::UserNames;
use crate::source::{bounded, ProcRoot};
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
/// selection's (`report --exact`; `snapshot --exact` adds them to its end
/// line, `snapshot_stream`), its pages read now, after the regions. Live only ([`Error::LiveOnly`] for a recording); the frames'
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
    let figures = exact_figures_of(root, sel, &procs)?;
    for (i, figure) in at.into_iter().zip(figures.processes) {
        snap.processes[i].exclusive = figure;
    }
    snap.exact = Some(figures.exact);
    taken.notes.extend(figures.notes);
    Ok(())
}

/// The exclusive figures of a snapshot's processes (`snapshot --exact`).
pub(crate) struct ExactFigures {
    /// Each process's, in the order asked; `None` where its pages were not read.
    pub processes: Vec<Option<Exclusive>>,
    /// How and when, and the selection's own.
    pub exact: SnapExact,
    /// What the figures leave out.
    pub notes: Vec<Note>,
}

/// The exclusive figure of each of `procs` (PID, short name) and of the
/// selection, their pages read now (see [`add_exact`]).
pub(crate) fn exact_figures_of(
    root: &ProcRoot,
    sel: &Selection,
    procs: &[(u32, String)],
) -> Result<ExactFigures> {
    let read = read_pages(root, procs, FramesFor::Shared, PageFigure::Exclusive)?;
    let when = moment(root);
    // One group per process, in the order read.
    let members: Vec<Vec<usize>> = (0..procs.len()).map(|i| vec![i]).collect();
    let figures = exact_figures(root, &read, &members, sel.is_everything());
    Ok(ExactFigures {
        processes: figures.groups,
        exact: SnapExact {
            method: ExactMethod::PagemapKpagecount,
            time: when.time,
            unix_time: when.unix_time,
            selection: figures.all,
        },
        notes: figures.notes,
    })
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
    // A pipe is copied to a file first: some JSON is read twice.
    let spill = Spill::of(path)?;
    let mut kept = Kept::default();
    let snap = read(spill.as_ref().map_or(path, Spill::path), &mut kept)
        .map_err(|e| Spill::named(spill.as_ref(), e, path))?;
    Ok(kept.into_snapshot(snap))
}

/// What [`load`] reads of the document in the regular file `path`, its
/// regions handed to `feed` as they are read: the snapshot returned has
/// none, and memory holds what `feed` keeps of them. The one place that
/// tells what a document is and reads it so.
pub(crate) fn read(path: &Path, feed: &mut impl LinesFeed) -> Result<Snapshot> {
    let f = bounded::open_input(path).map_err(|e| input_error(path, e))?;
    let mut r = BufReader::with_capacity(64 << 10, f);
    let head = r.fill_buf().map_err(|e| input_error(path, e))?;
    let start = snapshot_file::start_of(head);
    let bad = |message: String| Error::Parse { path: path.to_path_buf(), message };
    let failed = |e: ReadError| match e {
        ReadError::Io(e) => input_error(path, e),
        ReadError::Parse(e) => bad(e.message),
    };
    match start {
        // A snapshot file is read a line at a time, never held as text.
        Start::Lines => {
            return snapshot_lines::read_feeding(r, feed, true).map_err(|e| lines_error(path, e))
        }
        // Format 1, one object: read with serde straight from the file.
        Start::Document => {
            let snap = snapshot_feed::read(r, FeedShape::Snapshot, feed)
                .map_err(|e| snapshot_error(path, e))?;
            snapshot_file::check_document(snap.memtally_snapshot).map_err(bad)?;
            return Ok(snap);
        }
        Start::Unknown(v) => return Err(bad(snapshot_file::unknown_format(v))),
        Start::Other => {}
    }
    // What the document is, from its first bytes (up to 64 KiB).
    let head = r.fill_buf().map_err(|e| input_error(path, e))?;
    if snapshot_html::is_html(head) {
        return snapshot_html::read_feeding(r, feed).map_err(failed);
    }
    if !utf8_head(head) {
        return Err(bad(NOT_UTF8.into()));
    }
    if !starts_json(head) {
        return from_vmmap_text(path, r, feed);
    }
    drop(r);
    let reopen = || {
        let f = bounded::open_input(path)?;
        Ok(BufReader::with_capacity(64 << 10, Utf8 { r: f, tail: Vec::new() }))
    };
    match snapshot_file::document(reopen, feed).map_err(failed)? {
        Some(snap) => Ok(snap),
        None => Err(Error::NotComparable { path: path.to_path_buf(), input: Uncomparable::Json }),
    }
}

/// Not UTF-8: what a document that is neither text nor JSON is told.
const NOT_UTF8: &str = "not UTF-8 text: not a memtally snapshot or JSON output";

/// `r`, its bytes checked to be UTF-8 as they are read (JSON's strings
/// passed over are not checked by serde): the first that is not is an
/// error of kind `InvalidData`, [`NOT_UTF8`].
struct Utf8<R> {
    r: R,
    /// The start of a character cut at the end of the last read.
    tail: Vec<u8>,
}

impl<R: std::io::Read> std::io::Read for Utf8<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let bad = || std::io::Error::new(std::io::ErrorKind::InvalidData, NOT_UTF8);
        let n = self.r.read(buf)?;
        if n == 0 {
            return if self.tail.is_empty() { Ok(0) } else { Err(bad()) };
        }
        let mut rest = &buf[..n];
        // A character cut at the end of the last read, completed a byte
        // at a time (at most three), checked where it lies: no copy.
        while !self.tail.is_empty() {
            let Some((&b, more)) = rest.split_first() else { return Ok(n) };
            self.tail.push(b);
            rest = more;
            match std::str::from_utf8(&self.tail) {
                Ok(_) => self.tail.clear(),
                Err(e) if e.error_len().is_none() => {}
                Err(_) => return Err(bad()),
            }
        }
        match std::str::from_utf8(rest) {
            Ok(_) => {}
            Err(e) if e.error_len().is_none() => {
                self.tail.extend_from_slice(&rest[e.valid_up_to()..]);
            }
            Err(_) => return Err(bad()),
        }
        Ok(n)
    }
}

/// Whether `head` is UTF-8, but for a character cut at its end.
fn utf8_head(head: &[u8]) -> bool {
    match std::str::from_utf8(head) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none() && head.len() >= 4,
    }
}

/// Whether the first byte of `head` but white space is `{`.
fn starts_json(head: &[u8]) -> bool {
    head.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
}

fn snapshot_error(path: &Path, e: serde_json::Error) -> Error {
    let bad = |message: String| Error::Parse { path: path.to_path_buf(), message };
    match e.classify() {
        serde_json::error::Category::Data => bad(format!("not a valid snapshot: {e}")),
        serde_json::error::Category::Io => input_error(path, e.into()),
        _ => bad(format!("not valid JSON: {e}")),
    }
}

/// A snapshot file's failure: I/O as [`input_error`], the rest at its line.
fn lines_error(path: &Path, e: LinesError) -> Error {
    match e {
        LinesError::Io(e) => input_error(path, e),
        e => Error::Parse {
            path: path.to_path_buf(),
            message: snapshot_file::lines_error(e).to_string(),
        },
    }
}

/// A document that is not one (a device, larger than
/// [`bounded::MAX_INPUT`]) is bad input; other failures are I/O.
pub(crate) fn input_error(path: &Path, e: std::io::Error) -> Error {
    match e.kind() {
        std::io::ErrorKind::InvalidData => {
            Error::Parse { path: path.to_path_buf(), message: e.to_string() }
        }
        _ => Error::io(path, e),
    }
}

/// A document read twice (the sums, then the regions listed) that was
/// not the same the second time.
pub(crate) fn changed_meanwhile(path: &Path) -> Error {
    Error::Parse {
        path: path.to_path_buf(),
        message: "changed while being compared; run again".into(),
    }
}

/// Non-JSON input: a saved macOS vmmap report, read a line at a time,
/// each region handed on as a snapshot region.
fn from_vmmap_text(path: &Path, r: impl BufRead, feed: &mut impl LinesFeed) -> Result<Snapshot> {
    let mut vmmap = VmmapFeed::new(feed);
    let doc = vmmap::parse(r, Default::default(), &mut vmmap).map_err(|e| input_error(path, e))?;
    if doc.regions == 0 && doc.summary.is_empty() {
        return Err(Error::NotComparable { path: path.to_path_buf(), input: Uncomparable::Text });
    }
    Ok(vmmap.finish(&doc))
}

/// A piped document that is read more than once (`diff`, `report
/// --input`), copied to a temporary file (created afresh, readable
/// by its owner alone, removed on drop), so that it can be read twice in
/// bounded memory like a named file; at most the input bound (256 MiB).
pub struct Spill(tempfile::NamedTempFile);

impl Spill {
    /// `None` for a regular file (read where it is).
    pub fn of(path: &Path) -> Result<Option<Spill>> {
        if std::fs::metadata(path).map_err(|e| Error::io(path, e))?.is_file() {
            return Ok(None);
        }
        let mut from = bounded::open_input(path).map_err(|e| input_error(path, e))?;
        let mut to = tempfile::NamedTempFile::new()
            .map_err(|e| Error::io(Path::new("a temporary file"), e))?;
        std::io::copy(&mut from, to.as_file_mut()).map_err(|e| input_error(path, e))?;
        Ok(Some(Spill(to)))
    }

    /// Where the copy is.
    pub fn path(&self) -> &Path {
        self.0.path()
    }

    /// `e` naming the document as the user did (`named`), not its copy.
    pub fn named(spill: Option<&Spill>, e: Error, named: &Path) -> Error {
        let Some(copy) = spill.map(Spill::path) else { return e };
        let name = |p: PathBuf| if p == copy { named.to_path_buf() } else { p };
        match e {
            Error::Parse { path, message } => Error::Parse { path: name(path), message },
            Error::Io { path, source } => Error::Io { path: name(path), source },
            Error::UnreadableLines { path, count, samples } => {
                Error::UnreadableLines { path: name(path), count, samples }
            }
            Error::NotComparable { path, input } => {
                Error::NotComparable { path: name(path), input }
            }
            Error::KindsDiffer { before, before_kind, after, after_kind } => Error::KindsDiffer {
                before: name(before),
                before_kind,
                after: name(after),
                after_kind,
            },
            e => e,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `show` JSON of one region whose passed-over key `x` holds `x`.
    fn show_with(x: &[u8]) -> Vec<u8> {
        let mut doc = br#"{"pid":1,"comm":"a","x":""#.to_vec();
        doc.extend_from_slice(x);
        doc.extend_from_slice(
            br#"","regions":[{"start":1,"end":2,"perms":"r--p","path":null,"category":"heap","rss":4096}]}"#,
        );
        doc
    }

    #[test]
    fn json_not_utf8_past_its_head_is_refused_and_characters_across_reads_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("doc.json");
        // A byte that is not UTF-8 past the first 64 KiB, in a value passed over.
        let mut late = vec![b'a'; 70_000];
        late.push(0xff);
        std::fs::write(&path, show_with(&late)).unwrap();
        let e = load(&path).unwrap_err().to_string();
        assert!(e.contains("not UTF-8 text: not a memtally snapshot or JSON output"), "{e}");
        // Three- and four-byte characters across the 64 KiB reads, at each offset.
        for (c, pad) in ["€", "𝄞"].into_iter().flat_map(|c| (0..4).map(move |pad| (c, pad))) {
            let text = format!("{}{}", " ".repeat(pad), c.repeat(30_000));
            std::fs::write(&path, show_with(text.as_bytes())).unwrap();
            let snap = load(&path).unwrap();
            assert_eq!(snap.processes[0].regions.len(), 1, "{c} pad {pad}");
        }
        // A character cut and not completed, across a read.
        let mut cut = vec![b'a'; 65_536 - 27];
        cut.extend_from_slice(&[0xe2, 0x82, b'a']);
        std::fs::write(&path, show_with(&cut)).unwrap();
        assert!(load(&path).unwrap_err().to_string().contains("not UTF-8"));
    }
}
