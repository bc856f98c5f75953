//! `diff`: two documents read back and compared.
//!
//! No document is held whole: each is read (`snapshot::read`, which tells
//! what it is) into a digest (per process: its regions summed by path, and
//! each region's identity; of a vmmap report, its figures by type for the
//! footprint table), then the few regions `diff` lists (those one side
//! lacks) are read again: in a `memtally snapshot` file, where their lines
//! begin (a few hundred bytes apiece); in any other document, the
//! document read through again. Memory is about 12 bytes a region and a
//! process's head, not the regions. A pipe, which cannot be read twice,
//! is first copied to a temporary file of memtally's own (`Spill`) and
//! read from there.

use std::io::{BufRead, BufReader};
use std::path::Path;

use crate::analyze::diff::{diff_digests_with, Diff, DiffOptions};
use crate::analyze::diff_regions::{region_caps, unmatched, RegionCap, RegionIds};
use crate::analyze::vmmap::TypeSides;
use crate::error::{Error, Result};
use crate::model::snap_digest::{Digest, RegionDigest};
use crate::model::snap_lines::SnapLine;
use crate::model::snap_region_de::RegionRef;
use crate::model::snapshot::{SnapProcess, Snapshot, SnapshotKind};
use crate::source::bounded;
use crate::source::parse::snapshot_feed::{LinesFeed, RegionFeed};
use crate::usecase::snapshot::{changed_meanwhile, input_error, read, Spill};

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
    let (mut a, a_again, sa) = digest(before)?;
    let (mut b, b_again, sb) = digest(after)?;
    let (ka, kb) = (a.snapshot.kind.name(), b.snapshot.kind.name());
    if ka != kb {
        return Err(Error::KindsDiffer {
            before: before.to_path_buf(),
            before_kind: ka,
            after: after.to_path_buf(),
            after_kind: kb,
        });
    }
    // The regions to list, read again, the largest kept as they come.
    let (keep_a, keep_b) = unmatched(&a, &b);
    let (mut cap_a, mut cap_b) =
        region_caps(&a, &b, (&keep_a, &keep_b), (opts.regions, opts.min_delta));
    again(before, &a, a_again, &keep_a, &mut cap_a)?;
    again(after, &b, b_again, &keep_b, &mut cap_b)?;
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

/// How the regions `diff` lists are read again.
enum Again {
    /// A snapshot file: each region's line read again where it begins.
    Lines,
    /// Any other document, read through again; the runs of regions it
    /// took back (a snapshot file a page embeds), by number.
    Through(Vec<usize>),
}

/// Hands `cap` the regions named in `keep` of `d` (read from `path` as
/// `how` says).
fn again(
    path: &Path,
    d: &Digest,
    how: Again,
    keep: &[RegionIds],
    cap: &mut RegionCap,
) -> Result<()> {
    if keep.iter().all(RegionIds::is_empty) {
        return Ok(());
    }
    match how {
        Again::Lines => fetch_regions(path, d, keep, cap),
        Again::Through(dropped) => {
            let mut sink = Keep::new(keep, cap, &dropped);
            read(path, &mut sink)?;
            sink.same(d).then_some(()).ok_or_else(|| changed_meanwhile(path))
        }
    }
}

/// What `diff` reads of a document (see [`Digest`]), how to read again
/// the regions it lists, and of a vmmap report its figures by type.
fn digest(path: &Path) -> Result<(Digest, Again, Option<TypeSides>)> {
    let mut sums = Sums::default();
    let snap = read(path, &mut sums)?;
    let how = if sums.offsets { Again::Lines } else { Again::Through(sums.dropped) };
    let mut d = sums.d;
    d.snapshot = snap;
    // A vmmap report without region lines: its summary rows' figures.
    let sides = sums.sides.map(|sides| match d.ids.first() {
        Some(ids) if !ids.is_empty() => sides,
        _ => d.snapshot.processes.first().map(TypeSides::of).unwrap_or_default(),
    });
    // Of several processes, `diff` prints the snapshot's categories.
    if d.snapshot.processes.len() > 1 {
        d.snapshot.processes.iter_mut().for_each(|p| p.categories = Vec::new());
    }
    Ok((d, how, sides))
}

// Where a region's line begins, in 32 bits: a document is at most
// `bounded::MAX_INPUT` long.
const _: () = assert!(bounded::MAX_INPUT <= u32::MAX as u64);

/// A document's regions added into its processes' digests as they are
/// read, no region kept; and, for a vmmap report, its figures by type.
struct Sums {
    d: Digest,
    /// The regions of the process being read.
    pending: RegionDigest,
    sides: Option<TypeSides>,
    /// Whether the regions came with their lines' offsets (a snapshot file).
    offsets: bool,
    /// Runs of regions (each a process's or taken back) read, and those
    /// taken back, by number.
    runs: usize,
    dropped: Vec<usize>,
    /// How many regions and paths the last process had (room made for as many).
    last: (usize, usize),
}

impl Default for Sums {
    fn default() -> Sums {
        let empty = Snapshot::of(Vec::new(), SnapshotKind::Linux);
        Sums {
            d: Digest::empty(empty),
            pending: RegionDigest::default(),
            sides: None,
            offsets: false,
            runs: 0,
            dropped: Vec::new(),
            last: (0, 0),
        }
    }
}

impl RegionFeed for Sums {
    fn region(&mut self, r: RegionRef<'_>) {
        self.pending.add_parts(r.path_key(), &r.sizes, r.id(), r.purge);
        if let Some(sides) = &mut self.sides {
            sides.add_region(&r.category, r.region_type.as_deref(), r.purge, &r.sizes);
        }
    }

    fn process(&mut self) {
        let (regions, paths) = (self.pending.regions(), self.pending.paths());
        // A snapshot file's processes are many and alike: room made for
        // the next as the last had. Other documents hold one, or a few.
        let room = match self.offsets {
            true => RegionDigest::with_capacity(regions, paths, true),
            false => RegionDigest::default(),
        };
        self.d.push(std::mem::replace(&mut self.pending, room));
        self.last = (regions, paths);
        self.runs += 1;
    }

    fn vmmap(&mut self) {
        self.sides = Some(TypeSides::default());
    }
}

impl LinesFeed for Sums {
    fn dropped(&mut self) {
        let (regions, paths) = self.last;
        self.pending = RegionDigest::with_capacity(regions, paths, self.offsets);
        self.dropped.push(self.runs);
        self.runs += 1;
    }

    fn at(&mut self, offset: u64) {
        self.offsets = true;
        self.pending.at(offset as u32);
    }

    fn line(&mut self, p: &mut SnapProcess) {
        // Of several processes, `diff` prints the snapshot's categories:
        // each process's (a `Sizes` a category) would be held to the end.
        if !self.d.ids.is_empty() {
            p.categories = Vec::new();
        }
    }
}

/// The regions `diff` lists (`keep[i]`: process `i`'s) handed to a cap
/// as a document digested before is read again.
struct Keep<'k> {
    keep: &'k [RegionIds],
    cap: &'k mut RegionCap,
    /// Per process read: how many of its regions were named, and how
    /// many it had.
    kept: Vec<(usize, usize)>,
    pending: (usize, usize),
    /// The runs of regions the first read saw taken back, by number; the
    /// run being read.
    dropped: &'k [usize],
    run: usize,
}

impl<'k> Keep<'k> {
    fn new(keep: &'k [RegionIds], cap: &'k mut RegionCap, dropped: &'k [usize]) -> Keep<'k> {
        Keep { keep, cap, kept: Vec::new(), pending: (0, 0), dropped, run: 0 }
    }

    /// Whether the document read again is the one `d` digests: as many
    /// processes, of as many regions, each named region found.
    fn same(self, d: &Digest) -> bool {
        self.kept.len() == d.ids.len()
            && self.kept.into_iter().enumerate().all(|(i, (found, seen))| {
                seen == d.ids[i].len() && found >= self.keep.get(i).map_or(0, RegionIds::len)
            })
    }
}

impl RegionFeed for Keep<'_> {
    fn region(&mut self, r: RegionRef<'_>) {
        if self.dropped.binary_search(&self.run).is_ok() {
            return;
        }
        self.pending.1 += 1;
        let i = self.kept.len();
        if self.keep.get(i).is_some_and(|k| k.contains(&r.id())) {
            self.pending.0 += 1;
            self.cap.offer(i, r.into_owned());
        }
    }

    fn process(&mut self) {
        self.kept.push(std::mem::take(&mut self.pending));
        self.run += 1;
    }
}

impl LinesFeed for Keep<'_> {
    fn dropped(&mut self) {
        self.run += 1;
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
