//! Group-by over regions: one function for every key (category, path,
//! permissions, vmmap region type, purge state, ...), Linux and macOS alike.

use std::collections::HashMap;

use serde::Serialize;

use crate::model::{Process, Region, Sizes};

/// The sums of the regions that share one key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Group {
    pub key: String,
    /// How many regions were added up.
    pub regions: usize,
    pub sizes: Sizes,
}

/// Sums regions by `key`, keeping the order in which keys first appear.
pub fn group_by<'a, I, K>(regions: I, mut key: K) -> Vec<Group>
where
    I: IntoIterator<Item = &'a Region>,
    K: FnMut(&Region) -> String,
{
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut groups: Vec<Group> = Vec::new();
    for region in regions {
        let k = key(region);
        let i = match index.get(&k) {
            Some(&i) => i,
            None => {
                groups.push(Group { key: k.clone(), regions: 0, sizes: Sizes::default() });
                index.insert(k, groups.len() - 1);
                groups.len() - 1
            }
        };
        groups[i].regions += 1;
        add_region(&mut groups[i].sizes, region);
    }
    groups
}

/// Adds a region's sizes to a sum, taking the virtual size from its address
/// range when the source gave no `size`.
pub fn add_region(sum: &mut Sizes, region: &Region) {
    if region.sizes.size.is_none() {
        if let Some(v) = region.vsize() {
            sum.size = Some(sum.size.unwrap_or(0) + v);
        }
    }
    sum.add(&region.sizes);
}

/// The sum over every region.
pub fn total<'a>(regions: impl IntoIterator<Item = &'a Region>) -> Sizes {
    let mut sum = Sizes::default();
    for r in regions {
        add_region(&mut sum, r);
    }
    sum
}

/// PSS figures the kernel sums exactly in `smaps_rollup` but rounds down
/// per mapping in `smaps`.
const EXACT_IN_ROLLUP: &[&str] =
    &["pss", "pss_dirty", "pss_anon", "pss_file", "pss_shmem", "swap_pss"];

/// A process's totals: the sum of its regions, with the proportional
/// figures taken from the kernel's rollup when it was read at the same
/// instant (see [`Process::rollup`]).
pub fn process_total(process: &Process) -> Sizes {
    let mut sum = match &process.streamed {
        Some(s) => s.totals.clone(),
        None => total(&process.regions),
    };
    if let Some(rollup) = &process.rollup {
        for name in EXACT_IN_ROLLUP {
            if let Some(v) = rollup.get(name) {
                sum.set(name, v);
            }
        }
    }
    sum
}

/// Keeps the first `top` rows (all with `None`); returns how many were cut.
pub fn keep_first<T>(rows: &mut Vec<T>, top: Option<usize>) -> usize {
    match top {
        Some(n) if rows.len() > n => {
            let cut = rows.len() - n;
            rows.truncate(n);
            cut
        }
        _ => 0,
    }
}

/// Sorts groups by the named figures, largest first, ties by key. A group
/// that lacks a figure sorts below every group that has it.
pub fn sort_groups(groups: &mut [Group], fields: &[&str]) {
    groups.sort_by(|a, b| {
        for f in fields {
            let (x, y) = (a.sizes.figure(f), b.sizes.figure(f));
            match y.cmp(&x) {
                std::cmp::Ordering::Equal => continue,
                other => return other,
            }
        }
        a.key.cmp(&b.key)
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Backing;

    fn region(path: &str, rss: u64, dirty: u64) -> Region {
        let mut r = Region::new(Backing::File);
        r.path = Some(path.into());
        r.sizes.size = Some(rss * 2);
        r.sizes.rss = Some(rss);
        r.sizes.private_dirty = Some(dirty);
        r.sizes.shared_dirty = Some(0);
        r
    }

    #[test]
    fn groups_add_up_to_the_total() {
        let rs = vec![region("a", 10, 1), region("b", 20, 0), region("a", 5, 5)];
        let mut g = group_by(&rs, |r| r.path.clone().unwrap());
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].regions, 2);
        assert_eq!(g[0].sizes.rss, Some(15));
        let mut sum = Sizes::default();
        for x in &g {
            sum.add(&x.sizes);
        }
        assert_eq!(sum, total(&rs));
        sort_groups(&mut g, &["dirty", "rss"]);
        assert_eq!(g[0].key, "a");
        sort_groups(&mut g, &["rss"]);
        assert_eq!(g[0].key, "b");
    }

    #[test]
    fn missing_size_is_taken_from_the_range() {
        let mut r = Region::new(Backing::Anonymous);
        r.start = Some(0x1000);
        r.end = Some(0x3000);
        assert_eq!(total([&r]).size, Some(0x2000));
        assert_eq!(total([&r]).rss, None);
    }
}
