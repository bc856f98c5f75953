//! Builds snapshots of Linux processes read in full (pure: the caller
//! reads); a macOS vmmap report's is the model's own (`Snapshot::of_vmmap_folded`).

use crate::analyze::category::{categorize, CategorySums};
use crate::analyze::group::process_total;
use crate::model::snapshot::{Moment, SnapProcess, SnapRegion, Snapshot, SnapshotKind};
use crate::model::{Group, Process, Region, Sizes};

/// The categories of some regions, in table order, only those present.
pub(crate) fn categories<'a>(regions: impl IntoIterator<Item = &'a Region>) -> Vec<Group> {
    let mut sums = CategorySums::default();
    for r in regions {
        sums.add(categorize(r), r);
    }
    sums.into_groups().into_iter().map(|(_, g)| g).collect()
}

/// A Linux region as a snapshot region (`snapshot`'s writer writes the
/// same bytes without making one: `model::region_json`).
pub(crate) fn linux_region(r: &Region) -> SnapRegion {
    SnapRegion {
        start: r.start,
        end: r.end,
        perms: r.perms.clone(),
        path: r.path.clone(),
        category: categorize(r).key().to_string(),
        region_type: r.region_type.clone(),
        purge: None,
        offset: r.offset,
        inode: r.inode,
        sizes: Sizes { kernel_page_size: None, mmu_page_size: None, ..r.sizes.clone() },
    }
}

/// A snapshot of Linux processes.
/// Its `notes` are left empty: they are worded by whoever writes the
/// document (the `take` use case hands them out beside it).
pub fn linux_snapshot(processes: &[Process], moment: Moment) -> Snapshot {
    // Swapped shared memory, each object once across the snapshot.
    let objects: Vec<_> =
        processes.iter().map(|p| crate::analyze::shmem_swap::of_regions(&p.regions)).collect();
    let shmem_swap = crate::analyze::shmem_swap::shares(&objects);
    let procs: Vec<SnapProcess> =
        processes.iter().zip(shmem_swap).map(|(p, share)| linux_process(p, share)).collect();
    let mut snap = Snapshot::of(procs, SnapshotKind::Linux);
    moment.stamp(&mut snap);
    snap
}

/// One Linux process of a snapshot, `shmem_swap` its share of the
/// selection's swapped shared memory.
pub(crate) fn linux_process(p: &Process, shmem_swap: u64) -> SnapProcess {
    SnapProcess {
        regions: p.regions.iter().map(linux_region).collect(),
        ..linux_head(p, categories(&p.regions), shmem_swap)
    }
}

/// [`linux_process`] without its regions: for a process whose regions
/// were handed out as they were read (its totals in `streamed`), their
/// `categories` added up by whoever took them.
pub(crate) fn linux_head(p: &Process, categories: Vec<Group>, shmem_swap: u64) -> SnapProcess {
    SnapProcess {
        pid: Some(p.pid),
        ppid: None,
        user: None,
        comm: p.comm.clone(),
        command: p.command(),
        source: p.source,
        totals: Sizes {
            // smaps has the swap to share; maps alone has none.
            shmem_swap: (p.source == crate::model::SizeSource::Smaps).then_some(shmem_swap),
            ..process_total(p)
        },
        categories,
        regions: Vec::new(),
        purgeable: Vec::new(),
        physical_footprint: None,
        exclusive: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::category::Category;
    use crate::model::Backing;

    fn region(backing: Backing, path: Option<&str>, rss: u64) -> Region {
        let mut r = Region::new(backing);
        r.perms = "rw-p".into();
        r.path = path.map(str::to_string);
        r.sizes.rss = Some(rss);
        r
    }

    /// Only the categories present, in table order whatever order the
    /// regions come in, each with its regions counted and sizes added.
    #[test]
    fn categories_are_those_present_in_table_order() {
        let regions = [
            region(Backing::Anonymous, Some("[stack]"), 1),
            region(Backing::Anonymous, None, 2),
            region(Backing::Anonymous, Some("[stack]"), 4),
        ];
        let groups = categories(&regions);
        let keys: Vec<&str> = groups.iter().map(|g| g.key.as_str()).collect();
        let mut expected: Vec<&str> = regions.iter().map(|r| categorize(r).key()).collect();
        expected.sort_by_key(|k| Category::ALL.iter().position(|c| c.key() == *k));
        expected.dedup();
        assert_eq!(keys, expected);
        assert_eq!(keys.len(), 2, "{keys:?}");
        let stack = categorize(&regions[0]).key();
        let g = groups.iter().find(|g| g.key == stack).unwrap();
        assert_eq!((g.regions, g.sizes.rss), (2, Some(5)));
        assert_eq!(groups.iter().map(|g| g.regions).sum::<usize>(), 3);
    }
}
