//! Page states per category of one process: what the kernel's page flags
//! say of the pages under each category's mappings (active or inactive
//! LRU, referenced, huge, KSM, zero page, swap cache, unevictable, dirty,
//! writeback), or, where memtally may not read the flags, what
//! `PAGEMAP_SCAN` tells any reader (present, swapped, file, huge, zero).

use crate::analyze::category::{categorize, Category};
use crate::model::pages::ReadCost;
use crate::model::pages::{Frames, PageStates, ProcPages, PAGE};
use crate::model::{Note, Region};

/// The page states of each category that has pages, in table order.
/// With `frames` the kpageflags states are filled in; without, only
/// those of the scan runs (then `pages.scanned` must hold).
pub fn page_states(
    regions: &[Region],
    pages: &ProcPages,
    frames: Option<&Frames>,
) -> Vec<(Category, PageStates)> {
    let mut spans: Vec<Span> = regions
        .iter()
        .filter_map(|r| {
            let cat = categorize(r);
            let k = Category::ALL.iter().position(|&c| c == cat)?;
            Some(Span { start: r.start?, end: r.end?, k })
        })
        .collect();
    spans.sort_by_key(|s| s.start);
    // Each category's states, by its place in `Category::ALL`.
    let mut by: [Option<PageStates>; Category::ALL.len()] = [None; Category::ALL.len()];
    let mut near = Near::default();
    let mut which = |addr: u64| near.find(&spans, addr);
    for &(addr, _) in &pages.swapped {
        if let Some(s) = slot(&mut by, which(addr)) {
            s.swapped += PAGE;
        }
    }
    match frames {
        Some(frames) => {
            // Each page as its frame and category, in frame order, walked
            // beside the frames (sorted too): no lookup per page (a search
            // in the frames for each page was a third of `show --pages`).
            let mut keys: Vec<u64> = Vec::with_capacity(pages.present.len());
            keys.extend(
                pages
                    .present
                    .iter()
                    .filter_map(|p| Some((p.pfn << CATEGORY_BITS) | which(p.addr)? as u64)),
            );
            keys.sort_unstable();
            let mut walk = frames.iter().peekable();
            for key in keys {
                let (pfn, k) = (key >> CATEGORY_BITS, (key & CATEGORY_MASK) as usize);
                while walk.next_if(|&(f, _)| f < pfn).is_some() {}
                let Some(&(_, f)) = walk.peek().filter(|&&(f, _)| f == pfn) else { continue };
                let Some(s) = slot(&mut by, Some(k)) else { continue };
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

/// A page's category goes in the low bits of its frame number's key (a
/// frame number has at most 55 bits).
const CATEGORY_BITS: u32 = 5;
const CATEGORY_MASK: u64 = (1 << CATEGORY_BITS) - 1;
const _: () = assert!(Category::ALL.len() <= 1 << CATEGORY_BITS);

/// A mapping's span and its category's place in `Category::ALL`.
struct Span {
    start: u64,
    end: u64,
    k: usize,
}

/// Finds the span of an address, trying the last one found first: the
/// pages come in address order, most of them in the span of the one
/// before (a search per page was a sixth of `show --pages`).
#[derive(Default)]
struct Near {
    at: usize,
}

impl Near {
    fn find(&mut self, spans: &[Span], addr: u64) -> Option<usize> {
        let hit = |s: &Span| s.start <= addr && addr < s.end;
        if let Some(s) = spans.get(self.at).filter(|s| hit(s)) {
            return Some(s.k);
        }
        if let Some(s) = spans.get(self.at + 1).filter(|s| hit(s)) {
            self.at += 1;
            return Some(s.k);
        }
        let i = spans.partition_point(|s| s.start <= addr).checked_sub(1)?;
        self.at = i;
        hit(&spans[i]).then_some(spans[i].k)
    }
}

/// The states of category `k`, made on first use.
fn slot(by: &mut [Option<PageStates>], k: Option<usize>) -> Option<&mut PageStates> {
    Some(by[k?].get_or_insert_with(PageStates::default))
}

/// `show PID --pages`: the page states of each category of one process.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PageView {
    /// The process.
    pub pid: u32,
    /// Its short name.
    pub comm: String,
    /// Its command line.
    pub cmdline: String,
    /// Whether the page flags were read (else only `PAGEMAP_SCAN`'s states).
    pub flags: bool,
    /// Each category that has pages, in table order.
    pub categories: Vec<(crate::analyze::Category, crate::model::pages::PageStates)>,
    /// Every category added up.
    pub totals: crate::model::pages::PageStates,
    /// What the figures leave out.
    pub notes: Vec<Note>,
    /// What the read cost: entries of each file read.
    pub cost: ReadCost,
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
