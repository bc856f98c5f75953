//! `diff` of a one-object JSON document in a regular file (a snapshot of
//! format 1, the JSON of `show`, or a report page, which embeds a snapshot
//! of format 1): read twice, never held. The first read adds each region
//! into its process's digest as serde reads it (`snapshot_feed`); the
//! second keeps the regions `diff` lists. A document that does not read
//! so is read whole ([`load`](crate::usecase::snapshot::load)), which
//! says what is wrong with it.

use std::io::{BufRead, BufReader};
use std::path::Path;

use crate::analyze::diff_regions::{RegionCap, RegionIds};
use crate::analyze::vmmap::TypeSides;
use crate::error::Result;
use crate::model::snap_digest::{Digest, RegionDigest};
use crate::model::snap_region_de::RegionRef;
use crate::model::snapshot::{Snapshot, SnapshotKind};
use crate::source::bounded;
use crate::source::parse::snapshot::{check_document, Start};
use crate::source::parse::snapshot_feed::{self, FeedShape, RegionFeed};
use crate::source::parse::{snapshot_html, ParseError};
use crate::usecase::snapshot::{changed_meanwhile, input_error, starts_json};

/// Where a document's regions are, for reading them as they come.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Streamed {
    /// The file is the document, of this shape.
    File(FeedShape),
    /// The file is a report page; the snapshot it embeds.
    Page,
}

/// How a document of start `start` and first bytes `head` is read as it
/// comes; `None` for one read whole (and one read so that is not
/// `show`'s JSON, a snapshot of format 1 or a page of one).
pub(crate) fn streamed(start: Start, head: &[u8]) -> Option<Streamed> {
    match start {
        Start::Document => Some(Streamed::File(FeedShape::Snapshot)),
        Start::Other if snapshot_html::is_html(head) => Some(Streamed::Page),
        Start::Other if starts_json(head) => Some(Streamed::File(FeedShape::Show)),
        Start::Other | Start::Lines | Start::Unknown(_) => None,
    }
}

/// The document `path` read `how`, its regions handed to `feed`; `None`
/// where it does not read so.
pub(crate) fn read(path: &Path, how: Streamed, feed: &mut impl RegionFeed) -> Option<Snapshot> {
    let f = bounded::open_input(path).ok()?;
    let r = BufReader::with_capacity(64 << 10, f);
    let snap = match how {
        Streamed::File(shape) => snapshot_feed::read(r, shape, feed).ok()?,
        Streamed::Page => snapshot_html::with_element(r, |json: &mut dyn BufRead, start| {
            let no = || ParseError::at(0, "read whole");
            match start {
                Start::Document => {
                    snapshot_feed::read(json, FeedShape::Snapshot, feed).map_err(|_| no())
                }
                _ => Err(no()),
            }
        })
        .ok()?,
    };
    // A snapshot of another format is read whole, which says so.
    if matches!(how, Streamed::Page | Streamed::File(FeedShape::Snapshot)) {
        check_document(snap.memtally_snapshot).ok()?;
    }
    Some(snap)
}

/// A document's regions added into its processes' digests as they are
/// read (see [`Digest`]), no region kept; and, for a vmmap report, its
/// figures by type for `diff`'s footprint table.
pub(crate) struct Sums {
    d: Digest,
    pending: RegionDigest,
    sides: Option<TypeSides>,
}

impl Sums {
    /// Sums, by type too where `sides`.
    pub(crate) fn new(sides: bool) -> Sums {
        let empty = Snapshot::of(Vec::new(), SnapshotKind::Linux);
        let sides = sides.then(TypeSides::default);
        Sums { d: Digest::empty(empty), pending: RegionDigest::default(), sides }
    }

    /// The digest of `snap`, read with these sums; `None` where a
    /// process was not summed.
    pub(crate) fn digest(mut self, snap: Snapshot) -> Option<Digest> {
        (snap.processes.len() == self.d.ids.len()).then_some(())?;
        self.d.snapshot = snap;
        Some(self.d)
    }

    /// [`digest`](Sums::digest) of a vmmap report of `regions` region
    /// lines, and its figures by type: without region lines, its summary
    /// rows'.
    pub(crate) fn vmmap(mut self, snap: Snapshot, regions: u64) -> (Digest, TypeSides) {
        let sides = match regions {
            0 => snap.processes.first().map(TypeSides::of).unwrap_or_default(),
            _ => self.sides.take().unwrap_or_default(),
        };
        self.d.snapshot = snap;
        (self.d, sides)
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
        self.d.push(std::mem::take(&mut self.pending));
    }
}

/// The digest of the document `path` read `how`, no region kept; `None`
/// where it does not read so.
pub(crate) fn digest(path: &Path, how: Streamed) -> Option<Digest> {
    let mut sums = Sums::new(false);
    let snap = read(path, how, &mut sums)?;
    sums.digest(snap)
}

/// The regions `diff` lists (`keep[i]`: process `i`'s) handed to a cap
/// as a document digested before is read again.
pub(crate) struct Keep<'k> {
    keep: &'k [RegionIds],
    cap: &'k mut RegionCap,
    /// Per process read: how many of its regions were named, and how
    /// many it had.
    kept: Vec<(usize, usize)>,
    pending: (usize, usize),
}

impl<'k> Keep<'k> {
    pub(crate) fn new(keep: &'k [RegionIds], cap: &'k mut RegionCap) -> Keep<'k> {
        Keep { keep, cap, kept: Vec::new(), pending: (0, 0) }
    }

    /// Whether the document read again is the one `d` digests: as many
    /// processes, of as many regions, each named region found.
    pub(crate) fn same(self, d: &Digest) -> bool {
        self.kept.len() == d.ids.len()
            && self.kept.into_iter().enumerate().all(|(i, (found, seen))| {
                seen == d.ids[i].len() && found >= self.keep.get(i).map_or(0, RegionIds::len)
            })
    }
}

impl RegionFeed for Keep<'_> {
    fn region(&mut self, r: RegionRef<'_>) {
        self.pending.1 += 1;
        let i = self.kept.len();
        if self.keep.get(i).is_some_and(|k| k.contains(&r.id())) {
            self.pending.0 += 1;
            self.cap.offer(i, r.into_owned());
        }
    }
    fn process(&mut self) {
        self.kept.push(std::mem::take(&mut self.pending));
    }
}

/// Hands `cap` process `i`'s regions named in `keep[i]` of a [`digest`]
/// of `path`, the document read again (in its order).
pub(crate) fn fetch_regions(
    path: &Path,
    how: Streamed,
    d: &Digest,
    keep: &[RegionIds],
    cap: &mut RegionCap,
) -> Result<()> {
    if keep.iter().all(RegionIds::is_empty) {
        return Ok(());
    }
    let changed = || changed_meanwhile(path);
    let mut sink = Keep::new(keep, cap);
    // A file that no longer opens says why.
    bounded::open_input(path).map_err(|e| input_error(path, e))?;
    read(path, how, &mut sink).ok_or_else(changed)?;
    sink.same(d).then_some(()).ok_or_else(changed)
}
