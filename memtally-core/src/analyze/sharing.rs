//! Who shares with whom: for each pair of groups (processes, programs,
//! users...) the resident bytes both map, and what those pages are of each
//! one's PSS (each page's size times the group's mappings of it, divided
//! by its map count: the kernel's own PSS rule).

use std::collections::HashMap;

use crate::analyze::top::TopBy;
use crate::model::pages::{Frames, ProcPages, PAGE};
use crate::model::Note;

/// A frame mapped by more groups than this is left out of the pairs (and
/// counted): pairs cost the square of the sharers, and a page every
/// process maps says nothing of who shares with whom. It bounds the work
/// by the pages times this squared.
const MANY: usize = 512;

/// Two groups and what they share.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pair {
    /// The first group (index into the groups given).
    pub a: usize,
    /// The second group.
    pub b: usize,
    /// Resident bytes both map.
    pub bytes: u64,
    /// Of the first one's PSS, bytes that are these pages.
    pub pss_a: u64,
    /// Of the second one's PSS, bytes that are these pages.
    pub pss_b: u64,
}

/// The pairs of `groups` (each a list of processes' pages) that share
/// resident pages, most bytes first; at most `top` of them. `skipped`
/// counts frames mapped by more than `MANY` groups (left out of pairs).
pub fn pairs(groups: &[Vec<&ProcPages>], frames: &Frames, top: usize) -> (Vec<Pair>, u64) {
    // (frame, group, the group's mappings of it), sorted by frame.
    let mut seen: Vec<(u64, u32, u32)> = Vec::new();
    for (g, members) in groups.iter().enumerate() {
        let mut own: Vec<u64> =
            // A page mapped once is no one else's: it pairs with nothing.
            members
                .iter()
                .flat_map(|p| p.present.iter().filter(|x| !x.solo).map(|x| x.pfn))
                .collect();
        own.sort_unstable();
        for pfn in own {
            match seen.last_mut() {
                Some((f, gg, n)) if *f == pfn && *gg == g as u32 => *n += 1,
                _ => seen.push((pfn, g as u32, 1)),
            }
        }
    }
    seen.sort_unstable();
    let mut acc: HashMap<(u32, u32), (u64, f64, f64)> = HashMap::new();
    let mut skipped = 0;
    let mut i = 0;
    while i < seen.len() {
        let pfn = seen[i].0;
        let mut j = i;
        while j < seen.len() && seen[j].0 == pfn {
            j += 1;
        }
        let sharers = &seen[i..j];
        i = j;
        if sharers.len() < 2 {
            continue;
        }
        let Some(info) = frames.get(pfn).filter(|f| !f.flags.zero_page() && f.mapcount > 0) else {
            continue;
        };
        if sharers.len() > MANY {
            skipped += 1;
            continue;
        }
        let share = |n: u32| PAGE as f64 * f64::from(n) / info.mapcount as f64;
        for (x, &(_, ga, na)) in sharers.iter().enumerate() {
            for &(_, gb, nb) in &sharers[x + 1..] {
                let e = acc.entry((ga, gb)).or_insert((0, 0.0, 0.0));
                e.0 += PAGE;
                e.1 += share(na);
                e.2 += share(nb);
            }
        }
    }
    let mut out: Vec<Pair> = acc
        .into_iter()
        .map(|((a, b), (bytes, pa, pb))| Pair {
            a: a as usize,
            b: b as usize,
            bytes,
            pss_a: pa.round() as u64,
            pss_b: pb.round() as u64,
        })
        .collect();
    out.sort_by(|x, y| y.bytes.cmp(&x.bytes).then(x.a.cmp(&y.a)).then(x.b.cmp(&y.b)));
    out.truncate(top);
    (out, skipped)
}

/// One side of a pair: a row of the grouping.
#[derive(Debug, Clone)]
pub struct Sharer {
    /// The row's key (PID, program, user, cgroup path).
    pub key: String,
    /// What to call it: the command of a process, else the key.
    pub label: String,
    /// How many processes it adds up.
    pub processes: usize,
    /// Its PSS, where known.
    pub pss: Option<u64>,
}

/// The view.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SharedView {
    /// How the processes are grouped.
    pub by: TopBy,
    /// The groups the pairs point into.
    pub sharers: Vec<Sharer>,
    /// The pairs, most shared bytes first.
    pub pairs: Vec<Pair>,
    /// What the figures leave out.
    pub notes: Vec<Note>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::pages::{FrameInfo, PageFlags, Present};

    fn proc(pfns: &[u64]) -> ProcPages {
        let present = pfns.iter().map(|&pfn| Present { pfn, ..Present::default() }).collect();
        ProcPages { present, ..ProcPages::default() }
    }

    #[test]
    fn pairs_count_each_shared_page_once_with_each_ones_pss_part() {
        let (a, b, c) = (proc(&[1, 2, 3]), proc(&[1, 2]), proc(&[2]));
        let info = |mapcount| FrameInfo { mapcount, flags: PageFlags(1 << 12) };
        let frames = Frames::new(vec![1, 2, 3], vec![info(2), info(3), info(1)]);
        let groups = vec![vec![&a], vec![&b], vec![&c]];
        let (pairs, _) = pairs(&groups, &frames, 10);
        assert_eq!(
            pairs[0],
            Pair {
                a: 0,
                b: 1,
                bytes: 2 * PAGE,
                pss_a: PAGE / 2 + PAGE / 3,
                pss_b: PAGE / 2 + PAGE / 3
            }
        );
        assert_eq!(pairs.len(), 3);
        assert!(pairs[1..].iter().all(|p| p.bytes == PAGE));
    }
}
