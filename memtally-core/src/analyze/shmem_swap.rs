//! Swap of shared memory, counted once. The kernel gives a shared
//! mapping of tmpfs, `/dev/shm`, memfd, SysV shm or shared anonymous
//! memory a `Swap` figure (the object's swapped pages in the mapped
//! range) but `SwapPss 0`, so those bytes vanish from every SwapPss sum.
//! Here each object (device + inode of the mapping) is counted once over
//! the processes of a selection: its swap is the most any of them sees
//! of it, split among them in proportion to what each sees (equal parts
//! when they map the same range, as a shared segment usually is).

use std::collections::BTreeMap;

use crate::analyze::category::is_shmem;
use crate::model::Region;

/// A shared-memory object: the device and inode of its mapping.
pub type Object = (String, u64);

/// One process's swapped shared memory, by object: the `Swap` of its
/// shmem mappings (its ranges of one object added up).
pub(crate) fn of_regions<'a>(
    regions: impl IntoIterator<Item = &'a Region>,
) -> BTreeMap<Object, u64> {
    let mut out: BTreeMap<Object, u64> = BTreeMap::new();
    for r in regions {
        add_region(&mut out, r);
    }
    out
}

/// Adds one region to a process's swapped shared memory by object (what
/// [`of_regions`] does for each): for a reader that keeps no region.
pub(crate) fn add_region(objects: &mut BTreeMap<Object, u64>, r: &Region) {
    let swap = r.sizes.swap.unwrap_or(0);
    if swap == 0 || !is_shmem(r) {
        return;
    }
    let key = (r.device.clone().unwrap_or_default(), r.inode.unwrap_or(0));
    let slot = objects.entry(key).or_default();
    *slot = slot.saturating_add(swap);
}

/// Each process's share of the selection's swapped shared memory, in the
/// order of `processes`: every object's swap counted once in all.
pub fn shares(processes: &[BTreeMap<Object, u64>]) -> Vec<u64> {
    let mut seen: BTreeMap<&Object, Vec<(usize, u64)>> = BTreeMap::new();
    for (i, p) in processes.iter().enumerate() {
        for (key, &bytes) in p {
            seen.entry(key).or_default().push((i, bytes));
        }
    }
    let mut out = vec![0u64; processes.len()];
    for holders in seen.values() {
        let whole = holders.iter().map(|&(_, b)| b).max().unwrap_or(0);
        let sum: u128 = holders.iter().map(|&(_, b)| u128::from(b)).sum();
        // Proportional parts, rounded down; the last holder takes what
        // rounding left, so the parts add up to `whole` exactly.
        let mut given = 0u64;
        for (n, &(i, bytes)) in holders.iter().enumerate() {
            let part = if n + 1 == holders.len() {
                whole - given
            } else {
                (u128::from(whole) * u128::from(bytes) / sum.max(1)) as u64
            };
            given += part;
            out[i] = out[i].saturating_add(part);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Backing;

    fn shm(dev: &str, inode: u64, swap: u64) -> Region {
        let mut r = Region::new(Backing::SharedMemory);
        r.perms = "rw-s".into();
        r.path = Some("/dev/shm/x".into());
        r.device = Some(dev.into());
        r.inode = Some(inode);
        r.sizes.swap = Some(swap);
        r
    }

    #[test]
    fn one_object_mapped_by_three_counts_once() {
        let a = of_regions(&[shm("00:1a", 7, 3 << 20)]);
        let mut private = shm("00:1a", 8, 1 << 20);
        private.perms = "rw-p".into();
        let b = of_regions(&[shm("00:1a", 7, 3 << 20), private]);
        let c = of_regions(&[shm("00:1a", 7, 3 << 20), shm("00:05", 9, 4096)]);
        let s = shares(&[a, b, c]);
        assert_eq!(s.iter().sum::<u64>(), (3 << 20) + 4096, "each object once");
        assert_eq!(s[0], 1 << 20);
        assert_eq!(s[1], 1 << 20, "a private mapping's swap has its SwapPss");
        assert_eq!(s[2], (1 << 20) + 4096);
        assert_eq!(shares(&[BTreeMap::new()]), vec![0]);
    }

    #[test]
    fn uneven_ranges_split_in_proportion_and_add_up_exactly() {
        let s = shares(&[of_regions(&[shm("0:1", 1, 3000)]), of_regions(&[shm("0:1", 1, 1000)])]);
        assert_eq!(s, vec![2250, 750]);
        assert_eq!(s.iter().sum::<u64>(), 3000);
    }
}
