//! Group-by over regions, by any key, Linux and macOS alike: every view
//! adds up through the model's `Grouper` (categories, paths, permissions, vmmap
//! region types and purge states, snapshot categories, diff paths); here
//! are the ways to sort and cut the groups, and a process's totals.

use crate::model::sizes::ROUNDED_PER_MAPPING;
use crate::model::{Figure, Group, Process, Sizes};

/// A process's totals: the sum of its regions, with the proportional
/// figures taken from the kernel's rollup when it was read at the same
/// instant (see [`Process::rollup`]).
pub fn process_total(process: &Process) -> Sizes {
    let mut sum = match &process.streamed {
        Some(s) => s.totals.clone(),
        None => Sizes::total(&process.regions),
    };
    if let Some(rollup) = &process.rollup {
        // The kernel sums these exactly in the rollup and rounds them
        // down per mapping in smaps.
        for &figure in ROUNDED_PER_MAPPING {
            if let (Some(v), Some(slot)) = (rollup.field(figure), sum.field_mut(figure)) {
                *slot = Some(v);
            }
        }
    }
    // status's, whichever file the rest came from (see Process::footprint).
    sum.footprint = process.footprint.or(sum.footprint);
    sum
}

/// Keeps the first `top` rows (all with `None`); returns how many were cut.
pub(crate) fn keep_first<T>(rows: &mut Vec<T>, top: Option<usize>) -> usize {
    match top {
        Some(n) if rows.len() > n => {
            let cut = rows.len() - n;
            rows.truncate(n);
            cut
        }
        _ => 0,
    }
}

/// What groups sort by: a figure, or how many regions a group adds up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupSort {
    /// A figure, largest first; a group that lacks it sorts below every
    /// group that has it.
    Figure(Figure),
    /// The number of regions, most first.
    Regions,
}

// The sort orders the show view offers: `dirty` is shared + private dirty.
crate::model::named::named!(GroupSort = [
    GroupSort::Figure(Figure::Dirty),
    GroupSort::Figure(Figure::PssDirty),
    GroupSort::Figure(Figure::PrivateDirty),
    GroupSort::Figure(Figure::SharedDirty),
    GroupSort::Figure(Figure::Rss),
    GroupSort::Figure(Figure::Pss),
    GroupSort::Figure(Figure::Uss),
    GroupSort::Figure(Figure::Clean),
    GroupSort::Figure(Figure::Swap),
    GroupSort::Figure(Figure::SwapPss),
    GroupSort::Figure(Figure::Size),
    GroupSort::Regions,
    GroupSort::Figure(Figure::Anonymous),
    GroupSort::Figure(Figure::Locked),
] {
    Regions => "regions", "how many regions a row adds up";
});

/// Sorts groups by the fields, largest first, ties by key.
pub(crate) fn sort_groups(groups: &mut [Group], fields: &[GroupSort]) {
    sort_by_figures(groups, fields, |g| (&g.key, g.regions, &g.sizes));
}

/// Sorts any rows as [`sort_groups`] sorts groups; `parts` gives a row's
/// key, region count and sizes.
pub(crate) fn sort_by_figures<T>(
    items: &mut [T],
    fields: &[GroupSort],
    parts: impl Fn(&T) -> (&str, usize, &Sizes),
) {
    items.sort_by(|a, b| {
        let ((ka, ra, sa), (kb, rb, sb)) = (parts(a), parts(b));
        for &f in fields {
            let ord = match f {
                GroupSort::Regions => rb.cmp(&ra),
                GroupSort::Figure(f) => sb.figure(f).cmp(&sa.figure(f)),
            };
            if ord != std::cmp::Ordering::Equal {
                return ord;
            }
        }
        ka.cmp(kb)
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Backing, Grouper, Region};

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
        let mut g = Grouper::new();
        for r in &rs {
            g.add_region(r.path.as_deref().unwrap(), r);
        }
        let mut g = g.into_groups();
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].regions, 2);
        assert_eq!(g[0].sizes.rss, Some(15));
        let mut sum = Sizes::default();
        for x in &g {
            sum.add(&x.sizes);
        }
        assert_eq!(sum, Sizes::total(&rs));
        sort_groups(&mut g, &[GroupSort::Figure(Figure::Dirty), GroupSort::Figure(Figure::Rss)]);
        assert_eq!(g[0].key, "a");
        sort_groups(&mut g, &[GroupSort::Figure(Figure::Rss)]);
        assert_eq!(g[0].key, "b");
        sort_groups(&mut g, &[GroupSort::Regions]);
        assert_eq!(g[0].key, "a");
    }

    #[test]
    fn keys_keep_their_first_order_and_groups_add_by_key() {
        let mut g = Grouper::new();
        g.add_region("z", &region("p", 1, 0));
        g.add_region("new", &region("p", 2, 0));
        g.add_region("z", &region("p", 4, 0));
        let all = g.clone().into_groups();
        let keys: Vec<&str> = all.iter().map(|g| g.key.as_str()).collect();
        assert_eq!(keys, ["z", "new"]);
        let mut merged = Grouper::new();
        for group in all.iter().chain(all.iter()) {
            merged.add_group(group);
        }
        let merged = merged.into_groups();
        assert_eq!(merged[0].regions, 4);
        assert_eq!(merged[0].sizes.rss, Some(10));
    }

    #[test]
    fn missing_size_is_taken_from_the_range() {
        let mut r = Region::new(Backing::Anonymous);
        r.start = Some(0x1000);
        r.end = Some(0x3000);
        assert_eq!(Sizes::total([&r]).size, Some(0x2000));
        assert_eq!(Sizes::total([&r]).rss, None);
    }
}
