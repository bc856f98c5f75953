//! Reads a `memtally snapshot` document into a [`Digest`] as it streams
//! by: each region is parsed (from its own bytes, see [`json_frames`]),
//! counted into its process's path sums, identities and offsets, and
//! dropped unless asked for. Memory grows by about 12 bytes a region (its
//! identity, and where it begins when it is not kept), not by the region.
//!
//! Of each process's head, its categories are kept only in a snapshot of
//! one process (a vmmap report, whose footprint `diff` compares type by
//! type): of several, `diff` prints the snapshot's categories, and each
//! process's were a `Group` (a `Sizes`) per category held to the end.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Read, Seek};

use serde::de::Error as _;
use serde_json::{Map, Value};

use super::json_frames::{FrameError, Frames};
use super::parse;
use crate::model::snapshot::{Digest, RegionDigest, SnapProcess, SnapRegion, Snapshot};

/// Reads a snapshot from `r`, keeping every region when `all`, none
/// otherwise (their offsets are kept: see [`fetch_regions`]).
pub fn read(r: impl BufRead, all: bool) -> Result<Digest, FrameError> {
    read_keeping(r, if all { Keep::All } else { Keep::None })
}

/// Reads the later snapshot of a `diff` from `r`, keeping (at least) every
/// region that `before` may not have: so it is read once, where keeping
/// none and reading again for the ones that appeared read it twice.
/// Kept: a region absent from some process of `before` with the region's
/// process's pid (from `before`'s one process when it has one; every
/// region of a process whose `pid` key comes after its regions), and any
/// region with a purge state. A process no process of `before` can match
/// keeps none.
pub fn read_against(r: impl BufRead, before: &Digest) -> Result<Digest, FrameError> {
    let mut by_pid: HashMap<Option<u32>, Vec<&[u64]>> = HashMap::new();
    for (p, ids) in before.snapshot.processes.iter().zip(&before.ids) {
        by_pid.entry(p.pid).or_default().push(ids);
    }
    let only = match before.ids.as_slice() {
        [one] => Some(one.as_slice()),
        _ => None,
    };
    read_keeping(r, Keep::Missing(&Against { by_pid, only }))
}

/// Adds to `d` (read from `r` by [`read`], keeping none) the regions of
/// process `i` whose identities are in `keep[i]`, in file order: each
/// read from where it begins, the rest of the file skipped. A region
/// whose bytes no longer have its identity means the file changed.
pub fn fetch_regions<S: Read + Seek>(
    r: S,
    d: &mut Digest,
    keep: &[HashSet<u64>],
) -> Result<(), FetchError> {
    let mut wanted: Vec<(u64, usize, u64)> = Vec::new();
    for (i, k) in keep.iter().enumerate() {
        let (ids, offsets) = (&d.ids[i], &d.offsets[i]);
        for &id in k {
            let at = ids.binary_search(&id).ok().and_then(|j| offsets.get(j));
            wanted.push((u64::from(*at.ok_or(FetchError::Changed)?), i, id));
        }
    }
    wanted.sort_unstable();
    // Small reads: the regions wanted are a few hundred bytes each.
    let mut f = Frames::new(BufReader::with_capacity(16 << 10, r), 0);
    for (at, i, id) in wanted {
        f.skip_to(at)?;
        let (at, bytes) = f.value()?;
        let r: SnapRegion = parse(at, bytes)?;
        if r.id() != id {
            return Err(FetchError::Changed);
        }
        d.snapshot.processes[i].regions.push(r);
    }
    Ok(())
}

/// Why [`fetch_regions`] failed.
#[derive(Debug)]
pub enum FetchError {
    /// The file does not hold what it held when it was read.
    Changed,
    /// Reading or parsing a region failed.
    Frame(FrameError),
}

impl From<FrameError> for FetchError {
    fn from(e: FrameError) -> FetchError {
        FetchError::Frame(e)
    }
}

impl From<std::io::Error> for FetchError {
    fn from(e: std::io::Error) -> FetchError {
        FetchError::Frame(FrameError::Io(e))
    }
}

/// The value at byte `at`, typed.
fn parse<'a, T: serde::Deserialize<'a>>(at: u64, bytes: &'a [u8]) -> Result<T, FrameError> {
    serde_json::from_slice(bytes).map_err(|error| FrameError::Value { at, error })
}

fn missing(at: u64, field: &'static str) -> FrameError {
    FrameError::Value { at, error: serde_json::Error::missing_field(field) }
}

fn read_keeping(r: impl BufRead, keep: Keep<'_>) -> Result<Digest, FrameError> {
    let mut f = Frames::new(r, 0);
    // Everything but the processes is small: kept as JSON, then typed.
    let mut head = Map::new();
    let mut processes = None;
    if !f.open(b'{', b'}', "a memtally snapshot object")? {
        loop {
            let key = f.key()?;
            if key == "processes" {
                processes = Some(read_processes(&mut f, keep)?);
            } else {
                let (at, bytes) = f.value()?;
                head.insert(key, parse(at, bytes)?);
            }
            if !f.more(b'}', "',' or '}' in the snapshot object")? {
                break;
            }
        }
    }
    if f.peek()?.is_some() {
        return Err(FrameError::Syntax { at: f.pos(), what: "the end after the snapshot" });
    }
    let processes = processes.ok_or_else(|| missing(0, "processes"))?;
    head.insert("processes".into(), Value::Array(Vec::new()));
    let snapshot: Snapshot = serde_json::from_value(Value::Object(head))
        .map_err(|error| FrameError::Value { at: 0, error })?;
    let mut d = Digest::empty(snapshot);
    // Exact: lists held to the end, of a few hundred bytes a process, that
    // grown by doubling were up to half again as large.
    d.reserve_exact(processes.len());
    for (p, regions) in processes {
        d.snapshot.processes.push(p);
        d.push(regions);
    }
    Ok(d)
}

/// The sorted region identities of the earlier snapshot, by pid.
struct Against<'a> {
    by_pid: HashMap<Option<u32>, Vec<&'a [u64]>>,
    /// Its only process's, when it has one (matched whatever its pid).
    only: Option<&'a [u64]>,
}

/// Which regions a read keeps.
#[derive(Clone, Copy)]
enum Keep<'a> {
    All,
    None,
    /// Those an earlier snapshot may lack (see [`read_against`]).
    Missing(&'a Against<'a>),
}

/// Which regions one process keeps.
#[derive(Clone, Copy)]
enum KeepHere<'a> {
    All,
    None,
    /// Those missing from any of these sorted identity lists.
    MissingFrom(&'a [&'a [u64]], Option<&'a [u64]>),
    /// Not yet known (the pid is not read yet): every region, to be safe.
    Unknown(&'a Against<'a>),
}

impl KeepHere<'_> {
    /// Whether the regions' offsets are kept: only when no region is, to
    /// come back for some (see [`fetch_regions`]).
    fn offsets(&self) -> bool {
        matches!(self, KeepHere::None)
    }

    /// Whether a region of identity `id` (with a purge state or not) is kept.
    fn keeps(&self, id: u64, purge: bool) -> bool {
        match *self {
            KeepHere::All | KeepHere::Unknown(_) => true,
            KeepHere::None => false,
            KeepHere::MissingFrom(lists, only) => {
                purge
                    || lists.iter().chain(only.as_ref()).any(|ids| ids.binary_search(&id).is_err())
            }
        }
    }
}

type ProcessDigest = (SnapProcess, RegionDigest);

fn read_processes<R: BufRead>(
    f: &mut Frames<R>,
    keep: Keep<'_>,
) -> Result<Vec<ProcessDigest>, FrameError> {
    let mut out = Vec::new();
    if f.open(b'[', b']', "a list of processes")? {
        return Ok(out);
    }
    let mut head = Head::default();
    let mut like = LastRegions::default();
    loop {
        let here = match keep {
            Keep::All => KeepHere::All,
            Keep::None => KeepHere::None,
            Keep::Missing(a) => KeepHere::Unknown(a),
        };
        // A process after the first is one of several: its categories
        // would be dropped below, so they are not typed (see `Head::typed`).
        let categories = if out.is_empty() { Categories::Typed } else { Categories::Skipped };
        out.push(read_process(f, here, &mut head, categories, &mut like)?);
        if out.len() == 2 {
            out[0].0.categories = Vec::new();
        }
        if out.len() >= 2 {
            out.last_mut().expect("just pushed").0.categories = Vec::new();
        }
        if !f.more(b']', "',' or ']' in the list of processes")? {
            return Ok(out);
        }
    }
}

/// Whether a process's categories are typed and kept, or only framed:
/// of a snapshot of several processes none is kept (see the module's
/// notes), and typing each process's (a `Group` of 31 figures per
/// category) was a tenth of `diff`'s time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Categories {
    Typed,
    Skipped,
}

/// A process's keys but its regions, as their raw bytes, kept in buffers
/// reused from one process to the next: typed in one pass from a JSON
/// object put together of them. (Read as a map of JSON values, each
/// process's head cost dozens of allocations, and at 50,000 processes
/// the allocator's bookkeeping of them grew faster than the processes.)
#[derive(Default)]
struct Head {
    /// Each key (unescaped), where its value begins in the file, and its
    /// bytes in `values`.
    keys: Vec<(String, u64, std::ops::Range<usize>)>,
    values: Vec<u8>,
    /// The object put together.
    doc: Vec<u8>,
}

impl Head {
    fn clear(&mut self) {
        self.keys.clear();
        self.values.clear();
    }

    fn push(&mut self, key: String, at: u64, bytes: &[u8]) {
        let from = self.values.len();
        self.values.extend_from_slice(bytes);
        self.keys.push((key, at, from..self.values.len()));
    }

    /// The process: its keys (the last of each name, as a map has it) and
    /// an empty list of regions, typed. Where that fails, each value is
    /// read as it came, so an error names the value (and place) it did
    /// when values were read one by one.
    /// Skipped categories are typed as an empty list: still required, as
    /// any key of the process is, but their value only has to be JSON
    /// (which framing it checked).
    fn typed(&mut self, start: u64, categories: Categories) -> Result<SnapProcess, FrameError> {
        let skipped = |key: &str| categories == Categories::Skipped && key == "categories";
        self.doc.clear();
        self.doc.push(b'{');
        for (i, (key, _, range)) in self.keys.iter().enumerate() {
            if key == "regions" || self.keys[i + 1..].iter().any(|(later, _, _)| later == key) {
                continue;
            }
            serde_json::to_writer(&mut self.doc, key).expect("a string serializes");
            self.doc.push(b':');
            match skipped(key) {
                true => self.doc.extend_from_slice(b"[]"),
                false => self.doc.extend_from_slice(&self.values[range.clone()]),
            }
            self.doc.push(b',');
        }
        self.doc.extend_from_slice(b"\"regions\":[]}");
        if let Ok(mut p) = serde_json::from_slice::<SnapProcess>(&self.doc) {
            // A list read from text grows by doubling; one read from a
            // JSON value had its length. Held for every process.
            p.categories.shrink_to_fit();
            return Ok(p);
        }
        let mut head = Map::new();
        for (key, at, range) in &self.keys {
            let value = match skipped(key) {
                true => Value::Array(Vec::new()),
                false => parse(*at, &self.values[range.clone()])?,
            };
            head.insert(key.clone(), value);
        }
        head.insert("regions".into(), Value::Array(Vec::new()));
        serde_json::from_value(Value::Object(head))
            .map_err(|error| FrameError::Value { at: start, error })
    }
}

fn read_process<R: BufRead>(
    f: &mut Frames<R>,
    mut keep: KeepHere<'_>,
    head: &mut Head,
    categories: Categories,
    like: &mut LastRegions,
) -> Result<ProcessDigest, FrameError> {
    let start = f.pos();
    head.clear();
    let mut regions = None;
    if !f.open(b'{', b'}', "a snapshot process object")? {
        loop {
            let key = f.key()?;
            if key == "regions" {
                regions = Some(read_regions(f, keep, like)?);
            } else {
                let (at, bytes) = f.value()?;
                if let (KeepHere::Unknown(a), "pid") = (keep, key.as_str()) {
                    // As `Value::as_u64` read it: an integer, else none.
                    let pid = serde_json::from_slice::<u64>(bytes)
                        .ok()
                        .and_then(|p| u32::try_from(p).ok());
                    keep = match a.by_pid.get(&pid) {
                        Some(lists) => KeepHere::MissingFrom(lists, a.only),
                        None => KeepHere::MissingFrom(&[], a.only),
                    };
                }
                head.push(key, at, bytes);
            }
            if !f.more(b'}', "',' or '}' in a process object")? {
                break;
            }
        }
    }
    let (kept, digest) = regions.ok_or_else(|| missing(start, "regions"))?;
    let mut p = head.typed(start, categories)?;
    p.regions = kept;
    Ok((p, digest))
}

/// What the last process's regions were like, for the next one's read:
/// the order of their keys, and how many regions and paths there were
/// (room made for as many: the copies of a growing list of figures, each
/// a `Sizes` by path, were a few percent of `diff`'s time).
#[derive(Default)]
struct LastRegions {
    keys: parse::snapshot_region::KeyHint,
    regions: usize,
    paths: usize,
}

fn read_regions<R: BufRead>(
    f: &mut Frames<R>,
    keep: KeepHere<'_>,
    like: &mut LastRegions,
) -> Result<(Vec<SnapRegion>, RegionDigest), FrameError> {
    let mut digest = RegionDigest::with_capacity(like.regions, like.paths, keep.offsets());
    let mut kept = Vec::new();
    let hint = &mut like.keys;
    if f.open(b'[', b']', "a list of regions")? {
        return Ok((kept, digest));
    }
    loop {
        f.peek()?;
        let at = f.pos();
        // Most regions are read where they lie in the buffer; any other
        // (cut by the buffer's end, or not as memtally writes them) is
        // framed and read by serde.
        let in_place = parse::snapshot_region::region(f.buffered()?, hint).map(|(r, n)| {
            let id = r.id();
            digest.add_parts(r.path_key(), &r.sizes, id, r.purge);
            if keep.keeps(id, r.purge.is_some()) {
                kept.push(r.to_region());
            }
            n
        });
        match in_place {
            Some(n) => f.consume(n),
            None => {
                let (at, bytes) = f.value()?;
                let r: SnapRegion = parse(at, bytes)?;
                digest.add(&r);
                if keep.keeps(r.id(), r.purge.is_some()) {
                    kept.push(r);
                }
            }
        }
        if keep.offsets() {
            // A document is at most `bounded::MAX_INPUT` (256 MiB) long.
            let at = u32::try_from(at)
                .map_err(|_| FrameError::Syntax { at, what: "a document under 4 GiB" })?;
            digest.at(at);
        }
        if !f.more(b']', "',' or ']' in a list of regions")? {
            (like.regions, like.paths) = (digest.regions(), digest.paths());
            return Ok((kept, digest));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::snapshot::SnapshotKind;
    use crate::model::{Group, SizeSource, Sizes};

    /// A snapshot of `n` processes with a category each, as JSON.
    fn snapshot_of(n: u32) -> Value {
        let process = |pid| SnapProcess {
            pid: Some(pid),
            ppid: None,
            user: None,
            comm: "p".into(),
            command: "p".into(),
            source: SizeSource::Smaps,
            totals: Sizes { rss: Some(4096), ..Default::default() },
            categories: vec![Group {
                key: "heap".into(),
                regions: 1,
                sizes: Sizes { rss: Some(4096), ..Default::default() },
            }],
            regions: Vec::new(),
            purgeable: Vec::new(),
            physical_footprint: None,
            exclusive: None,
        };
        let snap = Snapshot::of((1..=n).map(process).collect(), SnapshotKind::Linux);
        serde_json::to_value(snap).unwrap()
    }

    fn read_json(v: &Value) -> Result<Digest, FrameError> {
        read(serde_json::to_vec(v).unwrap().as_slice(), false)
    }

    #[test]
    fn of_one_process_its_categories_are_kept() {
        let d = read_json(&snapshot_of(1)).unwrap();
        assert_eq!(d.snapshot.processes[0].categories.len(), 1);
    }

    #[test]
    fn of_several_no_category_is_kept_and_only_the_first_process_s_is_typed() {
        let mut v = snapshot_of(3);
        let d = read_json(&v).unwrap();
        assert!(d.snapshot.processes.iter().all(|p| p.categories.is_empty()));
        // A later process's categories are only framed: any JSON reads.
        v["processes"][2]["categories"] = serde_json::json!({"not": "a list"});
        let d = read_json(&v).unwrap();
        assert_eq!(d.snapshot.processes.len(), 3);
        // Still a key every process must have.
        v["processes"][2].as_object_mut().unwrap().remove("categories");
        assert!(read_json(&v).is_err());
        // The first process's are typed (it may be the only one).
        let mut v = snapshot_of(3);
        v["processes"][0]["categories"] = serde_json::json!({"not": "a list"});
        assert!(read_json(&v).is_err());
    }
}
