//! The regions `diff` lists (those one side lacks), at most
//! [`DiffOptions::regions`](crate::analyze::diff::DiffOptions::regions) of
//! them, largest first: the rest are counted and summed in one row. A
//! streamed diff keeps them through a `RegionCap` a side as it reads
//! them again, so two entirely different inputs cost the list, not the
//! regions.

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashMap};

use crate::model::snap_digest::Digest;
use crate::model::snapshot::{SnapProcess, SnapRegion};
use crate::model::{Purge, Sizes};

/// The regions that appeared or vanished past those listed: how many,
/// and their sizes summed.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct RegionsLeft {
    /// How many of them appeared.
    pub appeared: u64,
    /// How many of them vanished.
    pub vanished: u64,
    /// The vanished ones' sizes summed; `None` when none vanished.
    pub before: Option<Sizes>,
    /// The appeared ones' sizes summed; `None` when none appeared.
    pub after: Option<Sizes>,
}

impl RegionsLeft {
    /// How many regions were left out.
    pub fn count(&self) -> u64 {
        self.appeared + self.vanished
    }

    /// Counts and sums a region left out.
    pub(crate) fn add(&mut self, appeared: bool, sizes: &Sizes) {
        let (n, side) = match appeared {
            true => (&mut self.appeared, &mut self.after),
            false => (&mut self.vanished, &mut self.before),
        };
        *n += 1;
        side.get_or_insert_with(Sizes::default).add(sizes);
    }

    /// Adds `other`'s count and sums.
    pub(crate) fn merge(&mut self, other: RegionsLeft) {
        self.appeared += other.appeared;
        self.vanished += other.vanished;
        for (mine, theirs) in [(&mut self.before, other.before), (&mut self.after, other.after)] {
            if let Some(s) = theirs {
                mine.get_or_insert_with(Sizes::default).add(&s);
            }
        }
    }
}

/// Region identities ([`SnapRegion::id`]), sorted: of a process, those
/// [`unmatched`] names (8 bytes each).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RegionIds(Vec<u64>);

impl RegionIds {
    /// The identities `ids`, in any order and repeated or not.
    pub fn new(mut ids: Vec<u64>) -> RegionIds {
        ids.sort_unstable();
        ids.dedup();
        RegionIds(ids)
    }

    /// Whether `id` is one of them.
    pub fn contains(&self, id: &u64) -> bool {
        self.0.binary_search(id).is_ok()
    }

    /// How many.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Each, in order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.0.iter().copied()
    }
}

/// Pairs processes by PID (and name, so a reused PID is not taken for the
/// same process), as indices into `a` and `b`. Two single-process
/// snapshots (two vmmap runs of one app) pair whatever their PIDs.
pub(crate) fn match_processes(
    a: &[SnapProcess],
    b: &[SnapProcess],
) -> Vec<(Option<usize>, Option<usize>)> {
    if a.len() == 1 && b.len() == 1 {
        return vec![(Some(0), Some(0))];
    }
    let same = |x: &SnapProcess, y: &SnapProcess| {
        x.pid == y.pid && (x.comm.is_empty() || y.comm.is_empty() || x.comm == y.comm)
    };
    let mut out = Vec::new();
    let mut used = vec![false; b.len()];
    let by_pid: HashMap<Option<u32>, Vec<usize>> =
        b.iter().enumerate().fold(HashMap::new(), |mut m, (i, p)| {
            m.entry(p.pid).or_default().push(i);
            m
        });
    for (ia, pa) in a.iter().enumerate() {
        let hit = by_pid
            .get(&pa.pid)
            .and_then(|is| is.iter().copied().find(|&i| !used[i] && same(pa, &b[i])));
        if let Some(i) = hit {
            used[i] = true;
        }
        out.push((Some(ia), hit));
    }
    for (i, _) in b.iter().enumerate().filter(|(i, _)| !used[*i]) {
        out.push((None, Some(i)));
    }
    out
}

/// Of each process, the identities of its regions the other side lacks
/// (vanished from `a`, appeared in `b`), by process index: what a digest
/// must keep of its regions for
/// [`diff_digests`](crate::analyze::diff::diff_digests) to list them.
pub fn unmatched(a: &Digest, b: &Digest) -> (Vec<RegionIds>, Vec<RegionIds>) {
    let mut keep_a = vec![RegionIds::default(); a.ids.len()];
    let mut keep_b = vec![RegionIds::default(); b.ids.len()];
    for (ia, ib) in match_processes(&a.snapshot.processes, &b.snapshot.processes) {
        if let (Some(ia), Some(ib)) = (ia, ib) {
            let (ids_a, ids_b) = (&a.ids[ia], &b.ids[ib]);
            // Made exactly (both sides' whole, for two unrelated inputs).
            let only = |mine: &[u64], theirs: &[u64]| {
                let lacks = |id: &&u64| theirs.binary_search(id).is_err();
                let mut v = Vec::with_capacity(mine.iter().filter(lacks).count());
                v.extend(mine.iter().filter(lacks));
                v
            };
            let (mut only_a, mut only_b) = (only(ids_a, ids_b), only(ids_b, ids_a));
            // A region on both sides whose purge state changed (N -> V;
            // a region a digest has no state for is unmarked): kept on
            // both, to be listed with its before and after.
            let (purges_a, purges_b) = (&a.purges[ia], &b.purges[ib]);
            let state = |purges: &[(u64, Purge)], id: u64| {
                purges.binary_search_by_key(&id, |p| p.0).map_or(Purge::Unmarked, |i| purges[i].1)
            };
            for &(id, _) in purges_a.iter().chain(purges_b) {
                let both = ids_a.binary_search(&id).is_ok() && ids_b.binary_search(&id).is_ok();
                if both && state(purges_a, id) != state(purges_b, id) {
                    only_a.push(id);
                    only_b.push(id);
                }
            }
            keep_a[ia] = RegionIds::new(only_a);
            keep_b[ib] = RegionIds::new(only_b);
        }
    }
    (keep_a, keep_b)
}

/// For two digests that keep no region and what [`unmatched`] names of
/// them (`keep_a`, `keep_b`): a [`RegionCap`] a side, to keep those
/// regions as they are read again; `limits`: `diff`'s `--regions` and
/// `--min-delta`.
pub(crate) fn region_caps(
    a: &Digest,
    b: &Digest,
    (keep_a, keep_b): (&[RegionIds], &[RegionIds]),
    limits: (usize, u64),
) -> (RegionCap, RegionCap) {
    let pairs = match_processes(&a.snapshot.processes, &b.snapshot.processes);
    (
        RegionCap::new(a, b, &pairs, keep_a, false, limits),
        RegionCap::new(b, a, &pairs, keep_b, true, limits),
    )
}

/// Whether a region may be listed (`diff`'s `--min-delta` reads its
/// virtual size, else its resident one).
pub(crate) fn shown(r: &SnapRegion, min_delta: u64) -> bool {
    r.sizes.size.or(r.sizes.rss).unwrap_or(0) >= min_delta
}

/// Where a region comes in the list: largest virtual size first, then by
/// its process pair and its place in the file (the order the list's
/// stable sort leaves them in).
type Rank = (Reverse<Option<u64>>, usize, u64);

/// A region kept, ranked; the heap's greatest is listed last.
struct Ranked {
    rank: Rank,
    process: usize,
    region: SnapRegion,
}

impl PartialEq for Ranked {
    fn eq(&self, o: &Ranked) -> bool {
        self.rank == o.rank
    }
}
impl Eq for Ranked {}
impl PartialOrd for Ranked {
    fn partial_cmp(&self, o: &Ranked) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Ranked {
    fn cmp(&self, o: &Ranked) -> Ordering {
        self.rank.cmp(&o.rank)
    }
}

/// One side's regions read again for `diff` (those [`unmatched`] names),
/// kept as they come: a region whose purge state changed always (it is in
/// both), of those that appeared or vanished the `limit` that come first
/// in the list, the others counted and summed as they are pushed out.
pub(crate) struct RegionCap {
    limit: usize,
    min_delta: u64,
    /// True for the second side (its regions appeared).
    appeared: bool,
    /// Of each process of this side: its pair's place, and the regions
    /// named that the other side has too (their purge state changed).
    processes: Vec<(usize, RegionIds)>,
    heap: BinaryHeap<Ranked>,
    both: Vec<(u64, usize, SnapRegion)>,
    seq: u64,
    left: RegionsLeft,
}

impl RegionCap {
    /// A side's cap: `pairs` as [`diff`](crate::analyze::diff) pairs the
    /// processes of `d` (this side) and `other`, `keep` what [`unmatched`]
    /// names of this side.
    pub(crate) fn new(
        d: &Digest,
        other: &Digest,
        pairs: &[(Option<usize>, Option<usize>)],
        keep: &[RegionIds],
        appeared: bool,
        (limit, min_delta): (usize, u64),
    ) -> RegionCap {
        let mut processes = vec![(usize::MAX, RegionIds::default()); d.ids.len()];
        for (rank, &(ia, ib)) in pairs.iter().enumerate() {
            let (mine, theirs) = if appeared { (ib, ia) } else { (ia, ib) };
            let Some(i) = mine else { continue };
            let both = match (theirs, keep.get(i)) {
                (Some(j), Some(k)) => RegionIds(
                    k.iter().filter(|id| other.ids[j].binary_search(id).is_ok()).collect(),
                ),
                _ => RegionIds::default(),
            };
            processes[i] = (rank, both);
        }
        RegionCap {
            limit,
            min_delta,
            appeared,
            processes,
            heap: BinaryHeap::new(),
            both: Vec::new(),
            seq: 0,
            left: RegionsLeft::default(),
        }
    }

    /// A region of process `process` named to be kept, read again (in
    /// file order).
    pub(crate) fn offer(&mut self, process: usize, region: SnapRegion) {
        self.seq += 1;
        let Some((rank, both)) = self.processes.get(process) else { return };
        if both.contains(&region.id()) {
            self.both.push((self.seq, process, region));
            return;
        }
        if !shown(&region, self.min_delta) {
            return;
        }
        let rank = (Reverse(region.sizes.size), *rank, self.seq);
        self.heap.push(Ranked { rank, process, region });
        if self.heap.len() > self.limit {
            if let Some(out) = self.heap.pop() {
                self.left.add(self.appeared, &out.region.sizes);
            }
        }
    }

    /// Gives `d`'s processes the regions kept, in file order; what was
    /// left out.
    pub(crate) fn finish(self, d: &mut Digest) -> RegionsLeft {
        let listed = self.heap.into_iter().map(|r| (r.rank.2, r.process, r.region));
        let mut kept: Vec<(u64, usize, SnapRegion)> = listed.chain(self.both).collect();
        kept.sort_unstable_by_key(|k| k.0);
        for (_, i, region) in kept {
            d.snapshot.processes[i].regions.push(region);
        }
        self.left
    }
}
