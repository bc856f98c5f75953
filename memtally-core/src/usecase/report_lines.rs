//! `report --input` of any document but a vmmap report (`report_input`
//! reads those), kept to what its page can draw. The page embeds the
//! regions of the largest processes whose JSON fits in half its budget
//! (cutting the others a tenth of the processes at a time, smallest
//! first), so the document is read twice: first each process and the
//! bytes its regions add to that JSON ([`Sizing`]), which decide the
//! processes embedded whole; then the regions again, keeping those
//! processes' all and of the others only what the page draws (the
//! treemap's largest boxes, each detail table's largest mappings); the
//! rest are counted and summed by category, as the page folds them.

use std::collections::{BinaryHeap, HashMap};
use std::path::Path;

use crate::analyze::report::{groups, BoxesLeft, PageRoom, RegionsLeft, ReportBy};
use crate::error::Result;
use crate::model::snap_region_de::RegionRef;
use crate::model::snapshot::{SnapProcess, SnapRegion, Snapshot};
use crate::model::{Figure, Sizes};
use crate::source::parse::snapshot_feed::{LinesFeed, RegionFeed};
use crate::usecase::snapshot::{changed_meanwhile, load, read};

/// The snapshot `path` read with `sizing` (its regions none), with only
/// the regions the page draws, and those left out by process; when the
/// page embeds every region, the document read whole.
pub(crate) fn read_again(
    path: &Path,
    snapshot: Snapshot,
    sizing: Sizing,
    room: PageRoom,
    by: ReportBy,
) -> Result<(Snapshot, Vec<RegionsLeft>)> {
    let Some(whole) = sizing.embedded_whole(&snapshot, room) else {
        return Ok((load(path)?, Vec::new()));
    };
    // The treemap's order: group by group, process by process, category
    // by category, region by region.
    let mut rank = vec![0; snapshot.processes.len()];
    let order = groups(&snapshot, &[], by, &HashMap::new());
    for (n, i) in order.iter().flat_map(|g| &g.processes).enumerate() {
        rank[*i] = n;
    }
    let mut keep = Keep::new(room, &snapshot.processes, whole, rank, sizing.segments);
    read(path, &mut keep)?;
    if keep.segment != keep.segments.len() {
        return Err(changed_meanwhile(path));
    }
    let (regions, left) = keep.finish();
    let mut snapshot = snapshot;
    for (p, regions) in snapshot.processes.iter_mut().zip(regions) {
        p.regions = regions;
    }
    Ok((snapshot, left))
}

/// The bytes `json` takes in the page: each `<` written `\u003c`.
fn page_bytes(json: &[u8]) -> u64 {
    json.len() as u64 + 5 * memchr::memchr_iter(b'<', json).count() as u64
}

/// The first read: the bytes each process's regions add to the page's
/// JSON of the snapshot.
#[derive(Default)]
pub(crate) struct Sizing {
    /// Of each run of regions, the process it is of (`None`: dropped).
    segments: Vec<Option<usize>>,
    /// Of each process, the bytes its regions add.
    json: Vec<u64>,
    /// How many regions the processes have.
    regions: usize,
    pending: (u64, usize),
    line: Vec<u8>,
    /// A region the serializer cannot write: the page embeds `{}`.
    unwritable: bool,
}

impl Sizing {
    /// Which processes' regions the page embeds (as `embedded` in the
    /// page's renderer decides); `None` when it embeds them all, or could
    /// draw them all (then they are kept as a whole read keeps them).
    fn embedded_whole(&self, snapshot: &Snapshot, room: PageRoom) -> Option<Vec<bool>> {
        if self.unwritable || self.regions <= room.boxes {
            return None;
        }
        let half = room.embedded;
        let base = page_bytes(&serde_json::to_vec(snapshot).ok()?);
        let mut size = base + self.json.iter().sum::<u64>();
        if size <= half {
            return None;
        }
        let ps = &snapshot.processes;
        let mut order: Vec<usize> = (0..ps.len()).collect();
        order.sort_by_key(|&i| ps[i].totals.pss.or(ps[i].totals.rss).unwrap_or(0));
        let mut whole = vec![true; ps.len()];
        let step = (order.len() / 10).max(1);
        for chunk in order.chunks(step) {
            for &i in chunk {
                whole[i] = false;
                size -= self.json[i];
            }
            if size <= half {
                break;
            }
        }
        Some(whole)
    }
}

impl LinesFeed for Sizing {
    fn dropped(&mut self) {
        self.segments.push(None);
        self.pending = (0, 0);
    }
}

impl RegionFeed for Sizing {
    fn region(&mut self, r: RegionRef<'_>) {
        self.line.clear();
        match serde_json::to_writer(&mut self.line, &r.into_owned()) {
            Ok(()) => self.pending.0 += page_bytes(&self.line),
            Err(_) => self.unwritable = true,
        }
        self.pending.1 += 1;
    }

    fn process(&mut self) {
        self.segments.push(Some(self.json.len()));
        // `[a,b]`: the regions and the commas between them.
        let (bytes, n) = std::mem::take(&mut self.pending);
        self.regions += n;
        self.json.push(bytes + n.saturating_sub(1) as u64);
    }
}

/// A region's box in the treemap's order: the larger first, then the
/// one the fold reaches first (process, category, region; then the
/// process's index). The heap's top is the one to drop first.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct BoxKey(std::cmp::Reverse<u64>, usize, usize, usize, usize);

/// A region's place in its process's detail table: the larger PSS first
/// (an unknown one last), then the earlier.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct LargestKey(std::cmp::Reverse<Option<u64>>, usize);

/// The second read: the regions kept.
struct Keep {
    room: PageRoom,
    whole: Vec<bool>,
    rank: Vec<usize>,
    /// Each process's categories, by key: their place.
    categories: Vec<HashMap<String, usize>>,
    segments: Vec<Option<usize>>,
    segment: usize,
    /// The regions of the run being read, kept or offered.
    read: usize,
    /// Kept regions by (process, number), and in how many lists.
    kept: HashMap<(usize, usize), (SnapRegion, u8)>,
    boxes: BinaryHeap<BoxKey>,
    largest: Vec<BinaryHeap<LargestKey>>,
    left: Vec<RegionsLeft>,
}

impl Keep {
    fn new(
        room: PageRoom,
        processes: &[SnapProcess],
        whole: Vec<bool>,
        rank: Vec<usize>,
        segments: Vec<Option<usize>>,
    ) -> Keep {
        let categories = processes
            .iter()
            .map(|p| p.categories.iter().enumerate().map(|(n, c)| (c.key.clone(), n)).collect())
            .collect();
        let left = (0..processes.len())
            .filter(|&i| !whole[i])
            .map(|i| RegionsLeft { process: i, regions: 0, by_category: Vec::new() })
            .collect();
        Keep {
            room,
            whole,
            rank,
            categories,
            segments,
            segment: 0,
            read: 0,
            kept: HashMap::new(),
            boxes: BinaryHeap::new(),
            largest: processes.iter().map(|_| BinaryHeap::new()).collect(),
            left,
        }
    }

    /// Takes one list off region `(i, n)`; on none, it is left out.
    fn unlist(&mut self, i: usize, n: usize) {
        let Some(k) = self.kept.get_mut(&(i, n)) else { return };
        k.1 -= 1;
        if k.1 > 0 {
            return;
        }
        let (r, _) = self.kept.remove(&(i, n)).expect("listed");
        let left = self.left.iter_mut().find(|l| l.process == i).expect("cut");
        let (value, dirty) = box_of(&r.sizes);
        match left.by_category.iter_mut().find(|(k, _)| *k == r.category) {
            Some((_, b)) => b.add(value, dirty),
            None => {
                let mut b = BoxesLeft::default();
                b.add(value, dirty);
                left.by_category.push((r.category, b));
            }
        }
    }

    /// The kept regions of each process in file order, and those left.
    fn finish(mut self) -> (Vec<Vec<SnapRegion>>, Vec<RegionsLeft>) {
        // Moved one by one: the regions are never in memory twice.
        let mut at: Vec<(usize, usize)> = self.kept.keys().copied().collect();
        at.sort_unstable();
        let mut regions: Vec<Vec<SnapRegion>> = self.whole.iter().map(|_| Vec::new()).collect();
        for (i, n) in at {
            regions[i].push(self.kept.remove(&(i, n)).expect("kept").0);
        }
        (regions, self.left)
    }
}

/// A Linux region's treemap box: its PSS and the dirty part of it.
fn box_of(s: &Sizes) -> (u64, Option<u64>) {
    (s.figure(Figure::Pss).unwrap_or(0), s.pss_dirty.or(s.private_dirty))
}

impl RegionFeed for Keep {
    fn region(&mut self, r: RegionRef<'_>) {
        let n = self.read;
        self.read += 1;
        let Some(Some(i)) = self.segments.get(self.segment).copied() else { return };
        let region = r.into_owned();
        if self.whole[i] {
            self.kept.insert((i, n), (region, 1));
            return;
        }
        if let Some(l) = self.left.iter_mut().find(|l| l.process == i) {
            l.regions += 1;
        }
        let (value, _) = box_of(&region.sizes);
        let pss = region.sizes.figure(Figure::Pss);
        let mut lists = 1;
        let mut out = Vec::new();
        // A region of no category the process lists is in no box.
        if let Some(&c) = self.categories[i].get(&region.category) {
            lists += 1;
            self.boxes.push(BoxKey(std::cmp::Reverse(value), self.rank[i], c, n, i));
            if self.boxes.len() > self.room.boxes {
                out.extend(self.boxes.pop().map(|k| (k.4, k.3)));
            }
        }
        let largest = &mut self.largest[i];
        largest.push(LargestKey(std::cmp::Reverse(pss), n));
        if largest.len() > self.room.largest {
            out.extend(largest.pop().map(|k| (i, k.1)));
        }
        self.kept.insert((i, n), (region, lists));
        for (j, m) in out {
            self.unlist(j, m);
        }
    }

    fn process(&mut self) {
        self.segment += 1;
        self.read = 0;
    }
}

impl LinesFeed for Keep {
    fn dropped(&mut self) {
        self.segment += 1;
        self.read = 0;
    }
}
