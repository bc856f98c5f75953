//! What a group of processes gives back when it ends: the pages that no
//! process outside the group maps.
//!
//! The method: every resident page of the group's processes is known by
//! its frame number (pagemap). A frame's map count (kpagecount) is how
//! many page table entries map it, across the machine. Counting the
//! group's own entries of each frame, a frame whose map count equals that
//! number is mapped by the group alone: it goes when the group goes. Swap
//! slots have no map count the kernel shows, so a slot is the group's
//! alone when no other process read holds it (exact when every process is
//! read; otherwise outsiders that were not read are not seen, and a note
//! says so). Shared memory pages (tmpfs, memfd, SysV, `/dev/shm`) are
//! counted apart: their file keeps them after the processes end. The zero
//! page is no one's (RSS does not count it either); KSM pages count like
//! any other, with a note, since their map count joins processes that
//! share nothing else. A frame whose map count is below the group's own
//! count of it changed while being read (unmapped, or remapped): it is
//! left out and counted, for a note.

use std::collections::HashMap;

use crate::model::pages::{Exclusive, Frames, ProcPages, SwapSlot, PAGE};

/// How many processes read hold each swap slot.
pub(crate) fn swap_holders<'a>(
    pages: impl IntoIterator<Item = &'a ProcPages>,
) -> HashMap<SwapSlot, u32> {
    let mut holders = HashMap::new();
    for p in pages {
        for &(_, slot) in &p.swapped {
            *holders.entry(slot).or_insert(0) += 1;
        }
    }
    holders
}

/// The group's frames that need their map count looked at
/// ([`needs_frame`](crate::model::pages::Present::needs_frame)), sorted, each with how many of the group's
/// page table entries map it.
pub(crate) fn group_frames<'a>(
    members: impl IntoIterator<Item = &'a ProcPages>,
) -> Vec<(u64, u64)> {
    let mut pfns: Vec<u64> = Vec::new();
    for p in members {
        pfns.extend(p.present.iter().filter(|x| x.needs_frame()).map(|x| x.pfn));
    }
    pfns.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::new();
    for pfn in pfns {
        match out.last_mut() {
            Some((last, n)) if *last == pfn => *n += 1,
            _ => out.push((pfn, 1)),
        }
    }
    out
}

/// The exclusive figures of the group made of `members`.
pub fn exclusive(
    members: &[&ProcPages],
    frames: &Frames,
    holders: &HashMap<SwapSlot, u32>,
) -> Exclusive {
    let mut ex = Exclusive::default();
    // An anonymous page its one page table entry maps (pagemap's
    // exclusive bit) is its process's alone: the group's, and anonymous.
    let solo = members.iter().flat_map(|p| &p.present).filter(|x| !x.needs_frame()).count();
    ex.bytes += solo as u64 * PAGE;
    ex.anon += solo as u64 * PAGE;
    for (pfn, own) in group_frames(members.iter().copied()) {
        let Some(info) = frames.get(pfn) else { continue };
        let flags = info.flags;
        if flags.zero_page() {
            continue;
        }
        if info.mapcount < own || flags.nopage() {
            ex.changed += own * PAGE;
            continue;
        }
        if info.mapcount != own {
            continue; // an outsider maps it too
        }
        if flags.shmem() {
            ex.shmem += PAGE;
            continue;
        }
        ex.bytes += PAGE;
        if flags.anon() {
            ex.anon += PAGE;
        }
        if flags.ksm() {
            ex.ksm += PAGE;
        }
        if flags.large() && !flags.huge() {
            ex.large += PAGE;
        }
    }
    let mut own_slots: HashMap<SwapSlot, u32> = HashMap::new();
    for p in members {
        for &(_, slot) in &p.swapped {
            *own_slots.entry(slot).or_insert(0) += 1;
        }
    }
    for (slot, n) in own_slots {
        if holders.get(&slot).copied().unwrap_or(0) <= n {
            ex.swap += PAGE;
            ex.bytes += PAGE;
        }
    }
    ex
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::pages::{FrameInfo, PageFlags, Present};

    const ANON: PageFlags = PageFlags((1 << 12) | (1 << 14));

    fn proc(pid: u32, pfns: &[u64], slots: &[SwapSlot]) -> ProcPages {
        ProcPages {
            pid,
            present: pfns
                .iter()
                .enumerate()
                .map(|(i, &pfn)| Present { addr: i as u64 * PAGE, pfn, ..Present::default() })
                .collect(),
            swapped: slots.iter().map(|&s| (0, s)).collect(),
            ..ProcPages::default()
        }
    }

    fn frames(list: &[(u64, u64, PageFlags)]) -> Frames {
        let mut list = list.to_vec();
        list.sort_by_key(|f| f.0);
        Frames::new(
            list.iter().map(|f| f.0).collect(),
            list.iter().map(|&(_, mapcount, flags)| FrameInfo { mapcount, flags }).collect(),
        )
    }

    #[test]
    fn a_page_is_the_groups_when_every_mapping_of_it_is_inside() {
        // Frame 1: parent and child (mapcount 2). Frame 2: the child only.
        // Frame 3: the child and an outsider (mapcount 2). Frame 4: shmem.
        let parent = proc(1, &[1, 4], &[]);
        let child = proc(2, &[1, 2, 3], &[(0, 9)]);
        let fr =
            frames(&[(1, 2, ANON), (2, 1, ANON), (3, 2, PageFlags(0)), (4, 1, PageFlags(1 << 14))]);
        let holders = swap_holders([&parent, &child]);
        let both = exclusive(&[&parent, &child], &fr, &holders);
        assert_eq!(both.bytes, 3 * PAGE, "frames 1, 2 and the swap slot");
        assert_eq!((both.anon, both.swap, both.shmem), (2 * PAGE, PAGE, PAGE));
        let alone = exclusive(&[&child], &fr, &holders);
        assert_eq!(alone.bytes, 2 * PAGE, "frame 2 and the slot; frame 1 is the parent's too");
        assert_eq!(exclusive(&[&parent], &fr, &holders).shmem, PAGE);
    }

    #[test]
    fn zero_pages_are_no_ones_and_changed_frames_are_counted_apart() {
        let p = proc(1, &[5, 6, 6], &[]);
        let fr = frames(&[(5, 900, PageFlags(1 << 24)), (6, 1, ANON)]);
        let ex = exclusive(&[&p], &fr, &HashMap::new());
        assert_eq!(ex.bytes, 0);
        assert_eq!(ex.changed, 2 * PAGE, "mapped twice by the group, counted once by the kernel");
    }

    #[test]
    fn a_slot_another_process_holds_is_not_the_groups() {
        let a = proc(1, &[], &[(0, 1), (0, 2)]);
        let b = proc(2, &[], &[(0, 2)]);
        let holders = swap_holders([&a, &b]);
        assert_eq!(exclusive(&[&a], &Frames::default(), &holders).swap, PAGE);
    }
}
