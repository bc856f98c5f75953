//! Page states per category of one process: what the kernel's page flags
//! say of the pages under each category's mappings (active or inactive
//! LRU, referenced, huge, KSM, zero page, swap cache, unevictable, dirty,
//! writeback), or, where memtally may not read the flags, what
//! `PAGEMAP_SCAN` tells any reader (present, swapped, file, huge, zero).

use crate::analyze::category::{categorize, Category};
use crate::model::pages::{Frames, PageStates, ProcPages, PAGE};
use crate::model::Region;

/// The page states of each category that has pages, in table order.
/// With `frames` the kpageflags states are filled in; without, only
/// those of the scan runs (then `pages.scanned` must hold).
pub fn page_states(
    regions: &[Region],
    pages: &ProcPages,
    frames: Option<&Frames>,
) -> Vec<(Category, PageStates)> {
    let mut spans: Vec<(u64, u64, Category)> =
        regions.iter().filter_map(|r| Some((r.start?, r.end?, categorize(r)))).collect();
    spans.sort_by_key(|s| s.0);
    // Each category's states, by its place in `Category::ALL`.
    let mut by: [Option<PageStates>; Category::ALL.len()] = [None; Category::ALL.len()];
    let which = |addr: u64| -> Option<usize> {
        let i = spans.partition_point(|s| s.0 <= addr).checked_sub(1)?;
        let (_, end, cat) = spans[i];
        (addr < end).then(|| Category::ALL.iter().position(|&c| c == cat)).flatten()
    };
    for &(addr, _) in &pages.swapped {
        if let Some(s) = slot(&mut by, which(addr)) {
            s.swapped += PAGE;
        }
    }
    match frames {
        Some(frames) => {
            let mut near = 0;
            for p in &pages.present {
                let f = frames.get_near(p.pfn, &mut near);
                let (Some(s), Some(f)) = (slot(&mut by, which(p.addr)), f) else {
                    continue;
                };
                let f = f.flags;
                s.present += PAGE;
                let add = |v: &mut Option<u64>, yes: bool| {
                    *v = Some(v.unwrap_or(0) + if yes { PAGE } else { 0 });
                };
                if !f.anon() {
                    s.file += PAGE;
                }
                if f.thp() || f.huge() {
                    s.huge += PAGE;
                }
                if f.zero_page() {
                    s.zero_page += PAGE;
                }
                add(&mut s.active, f.lru() && f.active());
                add(&mut s.inactive, f.lru() && !f.active());
                add(&mut s.referenced, f.referenced());
                add(&mut s.ksm, f.ksm());
                add(&mut s.swapcache, f.swapcache());
                add(&mut s.unevictable, f.unevictable());
                add(&mut s.locked, f.locked());
                add(&mut s.dirty, f.dirty());
                add(&mut s.writeback, f.writeback());
            }
        }
        None => {
            // Runs may span mappings: each page goes to its own.
            for r in pages.runs.iter().filter(|r| r.present) {
                let mut addr = r.start;
                while addr < r.end {
                    if let Some(s) = slot(&mut by, which(addr)) {
                        s.present += PAGE;
                        s.file += if r.file { PAGE } else { 0 };
                        s.huge += if r.huge { PAGE } else { 0 };
                        s.zero_page += if r.zero { PAGE } else { 0 };
                    }
                    addr += PAGE;
                }
            }
        }
    }
    Category::ALL.iter().zip(by).filter_map(|(&c, s)| Some((c, s?))).collect()
}

/// The states of category `k`, made on first use.
fn slot(by: &mut [Option<PageStates>], k: Option<usize>) -> Option<&mut PageStates> {
    Some(by[k?].get_or_insert_with(PageStates::default))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::pages::{FrameInfo, PageFlags, Present, ScanRun};
    use crate::model::Backing;

    fn region(start: u64, end: u64, path: Option<&str>, perms: &str) -> Region {
        let mut r = Region::new(Backing::Anonymous);
        r.start = Some(start);
        r.end = Some(end);
        r.path = path.map(String::from);
        r.perms = perms.into();
        r
    }

    #[test]
    fn pages_go_to_the_category_of_their_mapping() {
        let regions = vec![
            region(0x1000, 0x3000, Some("[heap]"), "rw-p"),
            region(0x3000, 0x4000, Some("[stack]"), "rw-p"),
        ];
        let pages = ProcPages {
            present: [(0x1000, 7), (0x2000, 8), (0x3000, 9)]
                .map(|(addr, pfn)| Present { addr, pfn, ..Present::default() })
                .to_vec(),
            swapped: vec![(0x3000, (0, 1))],
            runs: vec![ScanRun {
                start: 0x1000,
                end: 0x4000,
                present: true,
                zero: false,
                ..ScanRun::default()
            }],
            scanned: true,
            ..ProcPages::default()
        };
        let unpriv = page_states(&regions, &pages, None);
        assert_eq!(unpriv[0].0, Category::Heap);
        assert_eq!(unpriv[0].1.present, 2 * PAGE);
        assert_eq!(unpriv[1].1.swapped, PAGE);
        assert_eq!(unpriv[0].1.active, None, "no flags without kpageflags");
        let active = PageFlags((1 << 12) | (1 << 5) | (1 << 6));
        let frames = Frames::new(
            vec![7, 8, 9],
            vec![
                FrameInfo { mapcount: 1, flags: active },
                FrameInfo { mapcount: 1, flags: PageFlags((1 << 12) | (1 << 5) | (1 << 22)) },
                FrameInfo { mapcount: 1, flags: PageFlags(1 << 24) },
            ],
        );
        let states = page_states(&regions, &pages, Some(&frames));
        let heap = states[0].1;
        assert_eq!((heap.active, heap.inactive, heap.huge), (Some(PAGE), Some(PAGE), PAGE));
        assert_eq!(states[1].1.zero_page, PAGE);
    }
}
