//! `diff`: two documents read back and compared.
//!
//! A `memtally snapshot` file is never held whole: it is read a line at a
//! time into a digest (per process: its regions summed by path, and each
//! region's identity and where its line begins). The few regions `diff`
//! lists (those one side lacks) are then read again where their lines
//! begin. Memory is about 12 bytes a region and a process's head, not the
//! regions. A file that cannot be read twice (a pipe) keeps every region,
//! as does any other document (read whole, typed).

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::path::Path;

use crate::analyze::diff::{diff_digests, unmatched, Diff, DiffOptions};
use crate::error::{Error, Result};
use crate::model::snap_digest::{Digest, RegionDigest};
use crate::model::snap_lines::{SnapEnd, SnapHead, SnapLine, SnapProcessLine};
use crate::model::snap_region_de::RegionRef;
use crate::model::snapshot::{SnapRegion, Snapshot, SnapshotKind};
use crate::source::bounded;
use crate::source::parse::snapshot::Start;
use crate::source::parse::snapshot_lines::{self, Records};
use crate::usecase::snapshot::{input_error, lines_error, load_opened, open};

/// What changed from `before` to `after` (any documents
/// [`load`](crate::usecase::snapshot::load) reads, both of one kind: two
/// Linux snapshots or two vmmap reports).
pub fn diff_files(before: &Path, after: &Path, opts: &DiffOptions) -> Result<Diff> {
    let (mut a, a_again) = digest(before)?;
    let (mut b, b_again) = digest(after)?;
    let (ka, kb) = (a.snapshot.kind.name(), b.snapshot.kind.name());
    if ka != kb {
        return Err(Error::KindsDiffer {
            before: before.to_path_buf(),
            before_kind: ka,
            after: after.to_path_buf(),
            after_kind: kb,
        });
    }
    // The regions to list, read where their lines begin (a side that kept
    // every region has them).
    let (keep_a, keep_b) = unmatched(&a, &b);
    if a_again {
        fetch_regions(before, &mut a, &keep_a)?;
    }
    if b_again {
        fetch_regions(after, &mut b, &keep_b)?;
    }
    Ok(diff_digests(&a, &b, opts))
}

/// What `diff` reads of a document (see [`Digest`]), and whether it kept
/// no region but where each line begins (a snapshot file in a regular
/// file), to be read again for the ones listed.
fn digest(path: &Path) -> Result<(Digest, bool)> {
    let regular = std::fs::metadata(path).map_err(|e| Error::io(path, e))?.is_file();
    let (r, start) = open(path)?;
    if start != Start::Lines {
        return Ok((Digest::of(load_opened(path, r, start)?), false));
    }
    let mut records = DigestRecords::new(!regular);
    let (head, end) = snapshot_lines::read(r, &mut records).map_err(|e| lines_error(path, e))?;
    let digest = records.finish(head, end).ok_or_else(|| Error::Parse {
        path: path.to_path_buf(),
        message: "not a valid snapshot: the end line has no figure for each process line".into(),
    })?;
    Ok((digest, regular))
}

// Where a region's line begins, in 32 bits: a document is at most
// `bounded::MAX_INPUT` long.
const _: () = assert!(bounded::MAX_INPUT <= u32::MAX as u64);

/// A snapshot file's records, kept as a digest.
struct DigestRecords {
    d: Digest,
    /// The regions of the process whose line comes next.
    pending: RegionDigest,
    /// Those regions themselves, when every region is kept.
    kept: Vec<SnapRegion>,
    keep_all: bool,
    /// How many regions and paths the last process had (room made for as many).
    last: (usize, usize),
}

impl DigestRecords {
    fn new(keep_all: bool) -> DigestRecords {
        let empty = Snapshot::of(Vec::new(), SnapshotKind::Linux);
        DigestRecords {
            d: Digest::empty(empty),
            pending: RegionDigest::with_capacity(0, 0, !keep_all),
            kept: Vec::new(),
            keep_all,
            last: (0, 0),
        }
    }

    fn finish(mut self, head: SnapHead, end: SnapEnd) -> Option<Digest> {
        let processes = std::mem::take(&mut self.d.snapshot.processes);
        self.d.snapshot = end.snapshot(head, processes)?;
        Some(self.d)
    }
}

impl Records for DigestRecords {
    fn region(&mut self, r: RegionRef<'_>, at: u64) {
        let id = r.id();
        self.pending.add_parts(r.path_key(), &r.sizes, id, r.purge);
        if self.keep_all {
            self.kept.push(r.into_owned());
        } else {
            self.pending.at(at as u32);
        }
    }

    fn dropped(&mut self) {
        let (regions, paths) = self.last;
        self.pending = RegionDigest::with_capacity(regions, paths, !self.keep_all);
        self.kept.clear();
    }

    fn process(&mut self, line: SnapProcessLine) {
        let (regions, paths) = (self.pending.regions(), self.pending.paths());
        let mut p = line.into_process(std::mem::take(&mut self.kept));
        // Of several processes, `diff` prints the snapshot's categories:
        // each process's (a `Sizes` a category) would be held to the end.
        let processes = &mut self.d.snapshot.processes;
        if !processes.is_empty() {
            p.categories = Vec::new();
            if let [first] = processes.as_mut_slice() {
                first.categories = Vec::new();
            }
        }
        processes.push(p);
        let one = std::mem::replace(
            &mut self.pending,
            RegionDigest::with_capacity(regions, paths, !self.keep_all),
        );
        self.d.push(one);
        self.last = (regions, paths);
    }
}

/// Adds to a digest [`digest`] read from `path` process `i`'s regions
/// named in `keep[i]`, each read where its line begins (a few hundred
/// bytes apiece, not the file again), in file order.
fn fetch_regions(path: &Path, d: &mut Digest, keep: &[HashSet<u64>]) -> Result<()> {
    let changed = || Error::Parse {
        path: path.to_path_buf(),
        message: "changed while being compared; run again".into(),
    };
    let mut wanted: Vec<(u32, usize, u64)> = Vec::new();
    for (i, k) in keep.iter().enumerate() {
        let (ids, offsets) = (&d.ids[i], &d.offsets[i]);
        for &id in k {
            let at = ids.binary_search(&id).ok().and_then(|j| offsets.get(j));
            wanted.push((*at.ok_or_else(changed)?, i, id));
        }
    }
    if wanted.is_empty() {
        return Ok(());
    }
    wanted.sort_unstable();
    let f = bounded::open_input(path).map_err(|e| input_error(path, e))?;
    // Small reads: the lines wanted are a few hundred bytes each.
    let mut r = BufReader::with_capacity(16 << 10, f);
    let (mut pos, mut line) = (0u64, Vec::new());
    for (at, i, id) in wanted {
        r.seek_relative(i64::from(at) - pos as i64).map_err(|e| input_error(path, e))?;
        line.clear();
        let n = r.read_until(b'\n', &mut line).map_err(|e| input_error(path, e))?;
        pos = u64::from(at) + n as u64;
        match serde_json::from_slice::<SnapLine<RegionRef<'_>>>(&line) {
            Ok(SnapLine::Region(region)) if region.id() == id => {
                d.snapshot.processes[i].regions.push(region.into_owned());
            }
            _ => return Err(changed()),
        }
    }
    Ok(())
}
