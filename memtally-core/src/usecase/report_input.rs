//! The document `report --input` reads, kept to what its page can draw.
//! It is read once (`snapshot::read`, which tells what it is) to size
//! it. A vmmap report (saved text or the JSON of `vmmap`) is kept as it
//! comes: its regions whole while the page could embed them all, and
//! past that only those the page can draw (the treemap's largest boxes,
//! the detail table's largest mappings); the others are counted and
//! their treemap figures summed by category, as the page folds them.
//! Any other document is read again to the same end (`report_lines`).

use std::collections::{BinaryHeap, HashMap};
use std::path::Path;

use crate::analyze::report::{BoxesLeft, PageRoom, RegionsLeft, ReportBy};
use crate::analyze::vmmap::region_box;
use crate::error::Result;
use crate::model::snap_region_de::RegionRef;
use crate::model::snapshot::{SnapRegion, Snapshot};
use crate::model::{Figure, Group};
use crate::source::parse::snapshot_feed::{LinesFeed, RegionFeed};
use crate::usecase::report_lines::{read_again, Sizing};

/// The snapshot of the document `path` (its processes grouped `by` on
/// the page), and for a vmmap report or a snapshot whose regions the
/// page cannot embed, the regions left out of it, by process.
pub fn read(path: &Path, room: PageRoom, by: ReportBy) -> Result<(Snapshot, Vec<RegionsLeft>)> {
    let mut first = First { room, sizing: Sizing::default(), vmmap: None };
    let mut snapshot = crate::usecase::snapshot::read(path, &mut first)?;
    let Some(keep) = first.vmmap else {
        return read_again(path, snapshot, first.sizing, room, by);
    };
    let Some(p) = snapshot.processes.first_mut() else { return Ok((snapshot, Vec::new())) };
    let (regions, left) = keep.finish(&p.categories);
    p.regions = regions;
    Ok((snapshot, left.into_iter().collect()))
}

/// The first read: a vmmap report's regions kept, any other's sized.
struct First {
    room: PageRoom,
    sizing: Sizing,
    vmmap: Option<Keep>,
}

impl RegionFeed for First {
    fn region(&mut self, r: RegionRef<'_>) {
        match &mut self.vmmap {
            Some(keep) => keep.region(r),
            None => self.sizing.region(r),
        }
    }

    fn process(&mut self) {
        if self.vmmap.is_none() {
            self.sizing.process();
        }
    }

    fn vmmap(&mut self) {
        self.vmmap = Some(Keep::new(self.room));
    }
}

impl LinesFeed for First {
    fn dropped(&mut self) {
        self.sizing.dropped();
    }
}

/// A kept region's place in the treemap's order: the larger box first,
/// then (of equal boxes) the page's fold order (category as first seen,
/// then line). The heap's top is the one to drop first.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct BoxKey(std::cmp::Reverse<u64>, usize, usize);

/// A kept region's place in the detail table: the larger resident size
/// first (an unknown one last), then the earlier.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct LargestKey(std::cmp::Reverse<Option<u64>>, usize);

/// A region kept, and in how many of the two lists.
struct Kept {
    region: SnapRegion,
    rank: usize,
    lists: u8,
}

/// The regions read, kept as [`PageRoom`] says.
struct Keep {
    room: PageRoom,
    /// Each category's place in first-seen order.
    rank: HashMap<String, usize>,
    /// The regions kept, by their number in the report.
    kept: HashMap<usize, Kept>,
    /// `None` while every region is kept (their JSON within
    /// `room.embedded`); then the treemap's and the table's lists.
    lists: Option<(BinaryHeap<BoxKey>, BinaryHeap<LargestKey>)>,
    json: u64,
    line: Vec<u8>,
    read: usize,
    left: Vec<BoxesLeft>,
}

impl Keep {
    fn new(room: PageRoom) -> Keep {
        Keep {
            room,
            rank: HashMap::new(),
            kept: HashMap::new(),
            lists: None,
            json: 0,
            line: Vec::new(),
            read: 0,
            left: Vec::new(),
        }
    }

    /// Offers region `n` to the two lists; what neither keeps is left.
    fn offer(&mut self, n: usize) {
        let Some((boxes, largest)) = self.lists.as_mut() else { return };
        let k = &self.kept[&n];
        let (value, _) = box_of(&k.region);
        let rss = k.region.sizes.figure(Figure::Rss);
        let mut out = Vec::new();
        boxes.push(BoxKey(std::cmp::Reverse(value), k.rank, n));
        if boxes.len() > self.room.boxes {
            out.extend(boxes.pop().map(|k| k.2));
        }
        largest.push(LargestKey(std::cmp::Reverse(rss), n));
        if largest.len() > self.room.largest {
            out.extend(largest.pop().map(|k| k.1));
        }
        self.kept.get_mut(&n).expect("offered").lists = 2;
        for m in out {
            let k = self.kept.get_mut(&m).expect("listed");
            k.lists -= 1;
            if k.lists == 0 {
                let k = self.kept.remove(&m).expect("listed");
                let (value, dirty) = box_of(&k.region);
                self.left[k.rank].add(value, dirty);
            }
        }
    }

    /// The regions kept (in the report's order), and what was left out
    /// of the report's `categories` (in the order they were read).
    fn finish(self, categories: &[Group]) -> (Vec<SnapRegion>, Option<RegionsLeft>) {
        let mut kept: Vec<(usize, Kept)> = self.kept.into_iter().collect();
        kept.sort_unstable_by_key(|(n, _)| *n);
        let left = self.lists.map(|_| RegionsLeft {
            process: 0,
            regions: self.read,
            by_category: categories
                .iter()
                .map(|g| g.key.clone())
                .zip(self.left)
                .filter(|(_, b)| b.regions > 0)
                .collect(),
        });
        (kept.into_iter().map(|(_, k)| k.region).collect(), left)
    }
}

/// A region's treemap box (its footprint and the dirty part of it).
fn box_of(r: &SnapRegion) -> (u64, Option<u64>) {
    let ty = r.region_type.as_deref().unwrap_or(&r.category);
    region_box(ty, r.purge.unwrap_or_default(), &r.sizes)
}

impl Keep {
    fn region(&mut self, r: RegionRef<'_>) {
        let region = r.into_owned();
        let next = self.rank.len();
        let rank = *self.rank.entry(region.category.clone()).or_insert(next);
        if rank == self.left.len() {
            self.left.push(BoxesLeft::default());
        }
        let n = self.read;
        self.read += 1;
        if self.lists.is_none() {
            self.line.clear();
            // A region the serializer cannot write is written as the
            // page writes it: not at all (then it counts for nothing).
            if serde_json::to_writer(&mut self.line, &region).is_ok() {
                self.json += self.line.len() as u64 + 1;
            }
        }
        self.kept.insert(n, Kept { region, rank, lists: 0 });
        if self.lists.is_none() && self.json > self.room.embedded {
            // The page cannot embed them all: from here, only what it draws.
            self.lists = Some((BinaryHeap::new(), BinaryHeap::new()));
            let mut all: Vec<usize> = self.kept.keys().copied().collect();
            all.sort_unstable();
            for m in all {
                self.offer(m);
            }
        } else {
            self.offer(n);
        }
    }
}
