//! What `diff` keeps of a snapshot read: the snapshot with only the
//! regions it lists, and per process its regions' sums and identities
//! (and where each region's line begins in a snapshot file, to read the
//! few listed again).

use super::group::{Group, Grouper};
use super::region::Purge;
use super::sizes::Sizes;
use super::snapshot::{SnapRegion, Snapshot};

/// What `diff` needs of a snapshot, without every region: the snapshot
/// with each process's regions cut to the ones kept (all, or only those
/// missing from the other side), and per process (in the same order) its
/// regions added up by path and the sorted identities of all of them.
/// About 8 bytes a region, where the regions themselves took hundreds.
#[derive(Debug, Clone)]
pub struct Digest {
    /// The snapshot; `processes[i].regions` holds only the kept regions.
    pub snapshot: Snapshot,
    /// Every region of every process added up by path (else region type,
    /// else `[anonymous]`), in file order: the only per-path figures
    /// `diff` prints. Kept for the side, not per process: a process's
    /// groups were a `String` and a `Sizes` each, most of what a digest
    /// held a process (at 50,000 processes, hundreds of MB).
    path_sums: Grouper,
    /// Per process: its regions' sizes added up (path by path, in
    /// first-seen order) and how many there were; `None` for a process
    /// without regions. What `diff` checks the stored totals against.
    pub region_sums: Vec<Option<RegionSum>>,
    /// Per process: [`SnapRegion::id`] of every region, sorted.
    pub ids: Vec<Vec<u64>>,
    /// Per process: the purge state of every region marked one (vmmap's
    /// `PURGE=`; none on Linux), by [`SnapRegion::id`], sorted: so a
    /// region whose state changed is kept on both sides for `diff` to
    /// list. A region without one here is unmarked (most are: 16 bytes
    /// a region, kept only for those).
    pub purges: Vec<Vec<(u64, Purge)>>,
    /// Per process, beside `ids`: where each region's JSON begins in the
    /// file it was streamed from (empty when it was not), so `diff` can
    /// come back for the few regions it lists without reading it again.
    pub offsets: Vec<Vec<u32>>,
}

impl Digest {
    /// The digest of a snapshot read whole, keeping every region.
    pub fn of(snapshot: Snapshot) -> Digest {
        let mut d = Digest::empty(snapshot);
        let digests: Vec<RegionDigest> = d
            .snapshot
            .processes
            .iter()
            .map(|p| {
                let mut one = RegionDigest::default();
                for r in &p.regions {
                    one.add(r);
                }
                one
            })
            .collect();
        for one in digests {
            d.push(one);
        }
        d
    }

    /// A digest of `snapshot`'s head, its processes' figures to be pushed.
    pub fn empty(snapshot: Snapshot) -> Digest {
        Digest {
            snapshot,
            path_sums: Grouper::new(),
            region_sums: Vec::new(),
            ids: Vec::new(),
            purges: Vec::new(),
            offsets: Vec::new(),
        }
    }

    /// Adds the next process's region figures (in `snapshot.processes` order).
    pub fn push(&mut self, one: RegionDigest) {
        let mut ids = one.ids;
        let mut offsets = Vec::new();
        if one.offsets.len() == ids.len() && !ids.is_empty() {
            // The offsets follow their identities into sorted order, by a
            // permutation: 8 bytes a region beside them, not a copy of both.
            let mut order: Vec<u32> = (0..ids.len() as u32).collect();
            order.sort_unstable_by_key(|&k| ids[k as usize]);
            offsets = order.iter().map(|&k| one.offsets[k as usize]).collect();
        }
        ids.sort_unstable();
        // Held to the end: made with room for the last process's regions.
        ids.shrink_to_fit();
        self.offsets.push(offsets);
        let mut purges = one.purges;
        purges.sort_unstable();
        purges.shrink_to_fit();
        let groups = one.paths.into_groups();
        // Summed group by group, as the groups were when each process
        // kept them: the same figures, unknown keys in the same order.
        let sum = (!groups.is_empty()).then(|| {
            let mut sum = RegionSum { sizes: Sizes::default(), regions: 0 };
            for g in &groups {
                sum.sizes.add(&g.sizes);
                sum.regions = sum.regions.saturating_add(g.regions as u64);
            }
            sum
        });
        for g in &groups {
            self.path_sums.add_group(g);
        }
        self.region_sums.push(sum);
        self.ids.push(ids);
        self.purges.push(purges);
    }
}

impl Digest {
    /// Every process's regions added up by path, in first-seen order.
    pub(crate) fn path_sums(&self) -> &[Group] {
        self.path_sums.groups()
    }
}

/// One process's regions added up (see [`Digest::region_sums`]).
#[derive(Debug, Clone)]
pub struct RegionSum {
    /// Their sizes added up.
    pub sizes: Sizes,
    /// How many regions.
    pub regions: u64,
}

/// One process's regions summed up as they go by (see [`Digest`]).
#[derive(Debug, Default)]
pub struct RegionDigest {
    paths: Grouper,
    ids: Vec<u64>,
    purges: Vec<(u64, Purge)>,
    /// Beside `ids`, when every region came with its offset.
    offsets: Vec<u32>,
}

impl RegionDigest {
    /// A digest with room for `regions` regions of `paths` paths (and
    /// their offsets, when `offsets`).
    pub(crate) fn with_capacity(regions: usize, paths: usize, offsets: bool) -> RegionDigest {
        RegionDigest {
            paths: Grouper::with_capacity(paths),
            ids: Vec::with_capacity(regions),
            purges: Vec::new(),
            offsets: Vec::with_capacity(if offsets { regions } else { 0 }),
        }
    }

    /// How many regions were counted in.
    pub(crate) fn regions(&self) -> usize {
        self.ids.len()
    }

    /// How many paths they had.
    pub(crate) fn paths(&self) -> usize {
        self.paths.groups().len()
    }

    /// Counts one region in.
    pub fn add(&mut self, r: &SnapRegion) {
        self.add_parts(r.path_key(), &r.sizes, r.id(), r.purge);
    }

    /// Counts in a region of this path key, sizes, identity and purge state.
    pub(crate) fn add_parts(
        &mut self,
        path_key: &str,
        sizes: &Sizes,
        id: u64,
        purge: Option<Purge>,
    ) {
        self.paths.add_sizes(path_key, 1, sizes);
        self.ids.push(id);
        if let Some(purge) = purge.filter(|&p| p != Purge::Unmarked) {
            self.purges.push((id, purge));
        }
    }

    /// Notes where the region counted in last begins in its file.
    pub(crate) fn at(&mut self, offset: u32) {
        self.offsets.push(offset);
    }
}
