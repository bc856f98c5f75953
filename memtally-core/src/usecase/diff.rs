//! `diff`: two documents read back and compared.
//!
//! A `memtally snapshot` file is never held whole: it is read a line at a
//! time into a digest (per process: its regions summed by path, and each
//! region's identity and where its line begins). The few regions `diff`
//! lists (those one side lacks) are then read again where their lines
//! begin. Memory is about 12 bytes a region and a process's head, not the
//! regions. Saved vmmap text is folded likewise (`diff_vmmap`), and so
//! are a snapshot of format 1, `show`'s JSON and a report page, each
//! region as serde reads it (`diff_json`), and so is the JSON of `vmmap`
//! (`diff_vmmap`). A pipe, which cannot be read twice, is first copied
//! to a temporary file of memtally's own (`Spill`) and read from there.

use std::io::{BufRead, BufReader};
use std::path::Path;

use crate::analyze::diff::{diff_digests_with, Diff, DiffOptions};
use crate::analyze::diff_regions::{region_caps, unmatched, RegionCap, RegionIds};
use crate::analyze::vmmap::TypeSides;
use crate::error::{Error, Result};
use crate::model::snap_digest::{Digest, RegionDigest};
use crate::model::snap_lines::{SnapEnd, SnapHead, SnapLine, SnapProcessLine};
use crate::model::snap_region_de::RegionRef;
use crate::model::snapshot::{SnapRegion, Snapshot, SnapshotKind};
use crate::source::bounded;
use crate::source::parse::snapshot::Start;
use crate::source::parse::snapshot_lines::{self, Records};
use crate::usecase::snapshot::{
    changed_meanwhile, input_error, is_vmmap_text, lines_error, load_opened, open, starts_json,
    Spill,
};
use crate::usecase::{diff_json, diff_vmmap};

/// What changed from `before` to `after` (any documents
/// [`load`](crate::usecase::snapshot::load) reads, both of one kind: two
/// Linux snapshots or two vmmap reports).
pub fn diff_files(before: &Path, after: &Path, opts: &DiffOptions) -> Result<Diff> {
    let (spill_a, spill_b) = (Spill::of(before)?, Spill::of(after)?);
    let a = spill_a.as_ref().map_or(before, Spill::path);
    let b = spill_b.as_ref().map_or(after, Spill::path);
    diff_regular(a, b, opts).map_err(|e| {
        let e = Spill::named(spill_a.as_ref(), e, before);
        Spill::named(spill_b.as_ref(), e, after)
    })
}

/// [`diff_files`] of two documents each in a regular file.
fn diff_regular(before: &Path, after: &Path, opts: &DiffOptions) -> Result<Diff> {
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
    // The regions to list, read again (a side that kept every region has
    // them), the largest kept as they come.
    let (keep_a, keep_b) = unmatched(&a, &b);
    let (mut cap_a, mut cap_b) =
        region_caps(&a, &b, (&keep_a, &keep_b), (opts.regions, opts.min_delta));
    let sa = again(before, &mut a, a_again, &keep_a, &mut cap_a)?;
    let sb = again(after, &mut b, b_again, &keep_b, &mut cap_b)?;
    let mut left = cap_a.finish(&mut a);
    left.merge(cap_b.finish(&mut b));
    // Two vmmap reports, one or both folded as read: each one's figures by type.
    let whole = |d: &Digest| d.snapshot.processes.first().map(TypeSides::of).unwrap_or_default();
    let sides = match (sa, sb) {
        (None, None) => None,
        (sa, sb) => Some((sa.unwrap_or_else(|| whole(&a)), sb.unwrap_or_else(|| whole(&b)))),
    };
    Ok(diff_digests_with(&a, &b, opts, sides.as_ref().map(|(x, y)| (x, y)), left))
}

/// How a document's digest was read: whole (every region kept), or
/// keeping none, to be read again for those `diff` lists.
enum Again {
    /// Every region kept.
    No,
    /// A snapshot file: each region's line read again where it begins.
    Lines,
    /// A vmmap report (text or JSON), read through again; its figures by type.
    Vmmap(diff_vmmap::Form, TypeSides),
    /// A one-object JSON document or a report page, read through again.
    Json(diff_json::Streamed),
}

/// Hands `cap` the regions named in `keep` of `d` (read from `path` as
/// `how` says); a vmmap report's figures by type when it was folded as read.
fn again(
    path: &Path,
    d: &mut Digest,
    how: Again,
    keep: &[RegionIds],
    cap: &mut RegionCap,
) -> Result<Option<TypeSides>> {
    match how {
        Again::No => Ok(None),
        Again::Lines => fetch_regions(path, d, keep, cap).map(|()| None),
        Again::Json(how) => diff_json::fetch_regions(path, how, d, keep, cap).map(|()| None),
        Again::Vmmap(form, sides) => {
            let none = RegionIds::default();
            diff_vmmap::fetch_regions(path, form, d, keep.first().unwrap_or(&none), cap)?;
            Ok(Some(sides))
        }
    }
}

/// What `diff` reads of a document (see [`Digest`]), and how to read
/// again the regions it lists: a snapshot file or saved vmmap text in a
/// regular file keeps none.
fn digest(path: &Path) -> Result<(Digest, Again)> {
    let regular = std::fs::metadata(path).map_err(|e| Error::io(path, e))?.is_file();
    let (mut r, start) = open(path)?;
    if regular && start != Start::Lines {
        let head = r.fill_buf().map_err(|e| input_error(path, e))?;
        if start == Start::Other && is_vmmap_text(head) {
            let (d, sides) = diff_vmmap::digest(path, r)?;
            return Ok((d, Again::Vmmap(diff_vmmap::Form::Text, sides)));
        }
        // The JSON of `vmmap` first: it refuses `show`'s at its first key.
        if start == Start::Other && starts_json(head) {
            if let Some((d, sides)) = diff_vmmap::digest_json(path) {
                return Ok((d, Again::Vmmap(diff_vmmap::Form::Json, sides)));
            }
        }
        // Read as it comes; one that does not read so is read whole below,
        // which says what is wrong with it.
        if let Some(how) = diff_json::streamed(start, head) {
            if let Some(d) = diff_json::digest(path, how) {
                return Ok((d, Again::Json(how)));
            }
        }
    }
    if start != Start::Lines {
        return Ok((Digest::of(load_opened(path, r, start)?), Again::No));
    }
    let mut records = DigestRecords::new(!regular);
    let (head, end) = snapshot_lines::read(r, &mut records).map_err(|e| lines_error(path, e))?;
    let digest = records.finish(head, end).ok_or_else(|| Error::Parse {
        path: path.to_path_buf(),
        message: "not a valid snapshot: the end line has no figure for each process line".into(),
    })?;
    Ok((digest, if regular { Again::Lines } else { Again::No }))
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

/// Hands `cap` process `i`'s regions named in `keep[i]` of a digest
/// [`digest`] read from `path`, each read where its line begins (a few
/// hundred bytes apiece, not the file again), in file order.
fn fetch_regions(path: &Path, d: &Digest, keep: &[RegionIds], cap: &mut RegionCap) -> Result<()> {
    let changed = || changed_meanwhile(path);
    let mut wanted: Vec<(u32, usize, u64)> = Vec::new();
    for (i, k) in keep.iter().enumerate() {
        let (ids, offsets) = (&d.ids[i], &d.offsets[i]);
        for id in k.iter() {
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
            Ok(SnapLine::Region(region)) if region.id() == id => cap.offer(i, region.into_owned()),
            _ => return Err(changed()),
        }
    }
    Ok(())
}
