//! `snapshot` written as it is read: each process is read (on this
//! thread, starting none), its regions written as they are parsed
//! (`snapshot_regions`), its head once they are all read, so memory stays
//! flat whatever the number of processes and of their mappings. The
//! bytes are those of the [`Snapshot`] document serialized whole (its
//! `processes` come before the keys summed over them: `totals`,
//! `categories`, `notes`).
//!
//! One figure of a process is known only once every process is read: its
//! share of swapped shared memory (`shmem_swap`, each object's swap split
//! among its holders). A process holding none has a share of 0 and is
//! written at once; from the first one holding some, processes go to a
//! spill file (unnamed, in the temporary directory; in memory where none
//! can be made) with their share's place marked, and are copied out with
//! the shares filled in at the end.

use std::collections::BTreeMap;
use std::io::{Seek, SeekFrom, Write};

use crate::analyze::select::Selection;
use crate::analyze::shmem_swap::shares;
use crate::analyze::snapshot::{linux_head, Moment};
use crate::error::{Error, Result};
use crate::model::snapshot::{SnapProcess, Snapshot, SnapshotKind, Summing};
use crate::model::{Needs, Note, ProcInfo, Process, SizeSource};
use crate::source::users::UserNames;
use crate::source::{ProcRoot, ReadPlan};
use crate::usecase::read::ReadProcesses;
use crate::usecase::select::select;
use crate::usecase::snapshot::moment;
use crate::usecase::snapshot_regions::RegionsJson;
use crate::usecase::spill::{copy, spill_file, ReadWriteSeek};
use crate::usecase::Progress;

/// Where a streamed snapshot goes, and how its notes and write errors are
/// worded (by the caller: the library words neither).
pub struct Output<'a> {
    /// The document is written here (buffer it: it is written in pieces).
    pub out: &'a mut dyn Write,
    /// A note as the document's `notes` hold it.
    pub word: &'a dyn Fn(&Note) -> String,
    /// A failed write as an error (it names the file written).
    pub error: &'a dyn Fn(std::io::Error) -> Error,
}

/// Reads the selection and writes its snapshot to `output` as it reads;
/// returns what the snapshot leaves out (also worded into its `notes`).
/// Nothing is written when nothing could be read (the error says why).
pub fn take_into(
    root: &ProcRoot,
    sel: &Selection,
    progress: &dyn Progress,
    output: Output<'_>,
) -> Result<Vec<Note>> {
    let selected = select(root, sel, Needs::default())?;
    selected.require_any(root, sel)?;
    let mut read = ReadProcesses { vanished: selected.vanished, ..Default::default() };
    let mut doc = Writer::new(moment(root), output.out);
    let users = UserNames::default();
    let mut regions = RegionsJson::default();
    progress.start("reading processes", selected.infos.len());
    for info in &selected.infos {
        // One process after another on this thread: no helper threads
        // (each would cost more than it saves), what the selection read
        // of it not read again.
        let plan = ReadPlan::default().with_threads(false).with_known(Some(info)).with_retry(true);
        regions.restart();
        match root.process(info.pid, plan, &mut regions) {
            Ok(p) => match regions.take_failure() {
                Some(e) => return Err((output.error)(e)),
                None => doc.process(&p, info, &users, &mut regions).map_err(output.error)?,
            },
            Err(Error::NoSuchProcess { .. } | Error::Exited { .. }) => read.vanished += 1,
            Err(Error::KernelThread { .. }) => read.kernel_threads += 1,
            Err(e) => read.failed.push(e),
        }
        progress.step();
    }
    progress.finish();
    if doc.written == 0 {
        // Nothing was written: the reason instead (with no process read,
        // `require_some` always gives one).
        return Err(match read.require_some() {
            Err(e) => e,
            Ok(_) => Error::NotFound("no selected process could be read".into()),
        });
    }
    let notes = read.notes();
    doc.finish(notes.iter().map(output.word).collect()).map_err(output.error)?;
    Ok(notes)
}

/// The document as far as it is written.
struct Writer<'a> {
    out: &'a mut dyn Write,
    moment: Moment,
    sums: Summing,
    written: usize,
    /// The process being written, serialized without its regions.
    head: Vec<u8>,
    /// From the first process holding swapped shared memory on.
    spill: Option<Spill>,
}

/// Processes written aside until every share is known.
struct Spill {
    file: Box<dyn ReadWriteSeek>,
    /// Each held process's swapped shared memory objects, and where in
    /// `file` its share goes (`None`: it has no such figure, maps only).
    held: Vec<(BTreeMap<crate::analyze::shmem_swap::Object, u64>, Option<u64>)>,
}

/// The key that opens the process list in the serialized document.
const PROCESSES: &[u8] = b"\"processes\":[";
/// A process's region list, as serialized with no regions.
const NO_REGIONS: &[u8] = b"\"regions\":[]";
/// A share not yet known, as serialized (no byte count comes near it).
const UNKNOWN_SHARE: u64 = u64::MAX;

impl<'a> Writer<'a> {
    fn new(moment: Moment, out: &'a mut dyn Write) -> Writer<'a> {
        Writer { out, moment, sums: Summing::default(), written: 0, head: Vec::new(), spill: None }
    }

    /// The document with no processes, and where its process list is.
    fn frame(&self, sums: Summing, notes: Vec<String>) -> std::io::Result<(Vec<u8>, usize)> {
        let mut snap: Snapshot = sums.into_snapshot(SnapshotKind::Linux);
        self.moment.clone().stamp(&mut snap);
        snap.notes = notes;
        let bytes = serde_json::to_vec(&snap)?;
        // Its first `"processes":[` is the key: a string's quotes are escaped.
        let at = find(&bytes, PROCESSES).ok_or_else(|| std::io::Error::other("no process list"))?;
        Ok((bytes, at + PROCESSES.len()))
    }

    /// Writes process `p`, its regions those `regions` took as it was read.
    fn process(
        &mut self,
        p: &Process,
        info: &ProcInfo,
        users: &UserNames,
        regions: &mut RegionsJson,
    ) -> std::io::Result<()> {
        if self.written == 0 {
            let (head, at) = self.frame(Summing::default(), Vec::new())?;
            self.out.write_all(&head[..at])?;
        }
        let objects = regions.take_objects();
        let mut snap: SnapProcess = linux_head(p, regions.take_categories(), 0);
        snap.ppid = Some(info.ppid);
        snap.user = info.uid.map(|uid| users.name(Some(uid)));
        self.sums.add(&snap);
        let comma: &[u8] = if self.written == 0 { b"" } else { b"," };
        self.written += 1;
        if objects.is_empty() && self.spill.is_none() {
            self.out.write_all(comma)?;
            self.head.clear();
            serde_json::to_writer(&mut self.head, &snap)?;
            return spliced(&mut *self.out, &self.head, regions);
        }
        let spill = match &mut self.spill {
            Some(s) => s,
            None => self.spill.insert(Spill { file: spill_file(), held: Vec::new() }),
        };
        let smaps = p.source == SizeSource::Smaps;
        if smaps {
            snap.totals.shmem_swap = Some(UNKNOWN_SHARE);
        }
        let mut bytes = comma.to_vec();
        serde_json::to_writer(&mut bytes, &snap)?;
        let mark = format!("\"shmem_swap\":{UNKNOWN_SHARE}");
        let start = spill.file.stream_position()?;
        // The mark is in the process's totals, before its regions.
        let cut = match find(&bytes, mark.as_bytes()).filter(|_| smaps) {
            Some(at) => {
                let number = at + mark.len() - UNKNOWN_SHARE.to_string().len();
                spill.file.write_all(&bytes[..number])?;
                spliced(&mut *spill.file, &bytes[at + mark.len()..], regions)?;
                Some(start + number as u64)
            }
            None => {
                spliced(&mut *spill.file, &bytes, regions)?;
                None
            }
        };
        spill.held.push((objects, cut));
        Ok(())
    }

    /// The held processes with their shares, then the keys summed over
    /// every process.
    fn finish(mut self, notes: Vec<String>) -> std::io::Result<()> {
        if let Some(mut spill) = self.spill.take() {
            let objects: Vec<_> = spill.held.iter().map(|(o, _)| o.clone()).collect();
            let shares = shares(&objects);
            self.sums.add_shmem_swap(shares.iter().sum());
            let end = spill.file.stream_position()?;
            spill.file.seek(SeekFrom::Start(0))?;
            let mut at = 0;
            for ((_, cut), share) in spill.held.iter().zip(shares) {
                let Some(cut) = *cut else { continue };
                copy(&mut spill.file, &mut *self.out, cut - at)?;
                write!(self.out, "{share}")?;
                at = cut;
            }
            copy(&mut spill.file, &mut *self.out, end - at)?;
        }
        let sums = std::mem::take(&mut self.sums);
        let (tail, at) = self.frame(sums, notes)?;
        self.out.write_all(&tail[at..])?;
        self.out.write_all(b"\n")
    }
}

/// Writes `head`, (the rest of) a process serialized with no regions, with
/// the objects of `regions` in its empty list.
fn spliced(to: &mut dyn Write, head: &[u8], regions: &mut RegionsJson) -> std::io::Result<()> {
    // The last such key is the process's own: a string's quotes are escaped.
    let list = head
        .windows(NO_REGIONS.len())
        .rposition(|w| w == NO_REGIONS)
        .ok_or_else(|| std::io::Error::other("no region list"))?;
    let inside = list + NO_REGIONS.len() - 1;
    to.write_all(&head[..inside])?;
    regions.write_to(to)?;
    to.write_all(&head[inside..])
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
