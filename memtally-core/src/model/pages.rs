//! Page-level figures: what the page frames under a process's mappings
//! say (pagemap frame numbers, kpagecount, kpageflags), as plain data for
//! the analyses. The readers are in `source::pages`; the decoder of
//! pagemap entries in `source::parse::pagemap`, the flags below.

use serde::{Deserialize, Serialize};

/// The base page size the kernel's page files count in.
pub const PAGE: u64 = 4096;

/// The flags of one page frame (`/proc/kpageflags`), by their kernel names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PageFlags(pub u64);

macro_rules! flag_bits {
    ($($name:ident = $bit:expr, $doc:expr;)*) => {
        impl PageFlags {
            $(
                #[doc = $doc]
                pub fn $name(self) -> bool {
                    self.0 & (1 << $bit) != 0
                }
            )*
        }
    };
}

flag_bits! {
    locked = 0, "Locked for I/O (KPF_LOCKED).";
    referenced = 2, "Referenced since last scanned (KPF_REFERENCED).";
    dirty = 4, "Dirty (KPF_DIRTY).";
    lru = 5, "On an LRU list (KPF_LRU).";
    active = 6, "On the active LRU list (KPF_ACTIVE).";
    writeback = 8, "Being written back (KPF_WRITEBACK).";
    anon = 12, "Anonymous memory (KPF_ANON).";
    swapcache = 13, "In the swap cache (KPF_SWAPCACHE).";
    swapbacked = 14, "Backed by swap: anonymous or shared memory (KPF_SWAPBACKED).";
    compound_head = 15, "First page of a compound page (KPF_COMPOUND_HEAD).";
    compound_tail = 16, "Later page of a compound page (KPF_COMPOUND_TAIL).";
    huge = 17, "A hugetlbfs page (KPF_HUGE).";
    unevictable = 18, "On the unevictable list: mlocked, ramfs (KPF_UNEVICTABLE).";
    nopage = 20, "No frame at this number (KPF_NOPAGE).";
    ksm = 21, "Merged by KSM (KPF_KSM).";
    thp = 22, "Part of a transparent huge page (KPF_THP).";
    zero_page = 24, "The shared zero page, or the huge zero page (KPF_ZERO_PAGE).";
    idle = 25, "Idle since marked (KPF_IDLE).";
}

impl PageFlags {
    /// A tmpfs / shared memory page (memfd, SysV, /dev/shm, shared
    /// anonymous): backed by swap, not anonymous. It outlives the
    /// processes that map it while its file does.
    pub fn shmem(self) -> bool {
        self.swapbacked() && !self.anon()
    }

    /// A page in a folio of more than one page (THP, hugetlb, a large
    /// file folio).
    pub fn large(self) -> bool {
        self.compound_head() || self.compound_tail()
    }
}

/// One frame as the kernel's page files describe it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FrameInfo {
    /// Page table entries mapping the frame (`/proc/kpagecount`).
    pub mapcount: u64,
    /// Its flags (`/proc/kpageflags`).
    pub flags: PageFlags,
}

/// The frames of the pages read, sorted by frame number: the one place
/// an analysis looks a frame up.
#[derive(Debug, Clone, Default)]
pub struct Frames {
    pfns: Vec<u64>,
    info: Vec<FrameInfo>,
}

impl Frames {
    /// From frame numbers (sorted, without repeats) and what was read of each.
    pub fn new(pfns: Vec<u64>, info: Vec<FrameInfo>) -> Frames {
        debug_assert_eq!(pfns.len(), info.len());
        Frames { pfns, info }
    }

    /// What was read of frame `pfn`, if it was read.
    pub fn get(&self, pfn: u64) -> Option<FrameInfo> {
        self.pfns.binary_search(&pfn).ok().map(|i| self.info[i])
    }

    /// Takes `n` mappings off frame `pfn`'s map count (a reader's own
    /// mappings of it, which are no one's that matters).
    pub(crate) fn discount(&mut self, pfn: u64, n: u64) {
        if let Ok(i) = self.pfns.binary_search(&pfn) {
            self.info[i].mapcount = self.info[i].mapcount.saturating_sub(n);
        }
    }

    /// Every frame read with what was read of it, in frame order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, FrameInfo)> + '_ {
        self.pfns.iter().copied().zip(self.info.iter().copied())
    }

    /// How many frames.
    pub fn len(&self) -> usize {
        self.pfns.len()
    }

    /// Whether no frame was read.
    pub fn is_empty(&self) -> bool {
        self.pfns.is_empty()
    }
}

/// What a page-level read cost: the kernel's entries read from each file
/// (8 bytes each), for the benchmark and the tests of bounded cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ReadCost {
    /// Entries of `/proc/PID/pagemap` read, every process together.
    pub pagemap_entries: u64,
    /// Entries of `/proc/kpageflags` read.
    pub kpageflags_entries: u64,
    /// Entries of `/proc/kpagecount` read.
    pub kpagecount_entries: u64,
}

/// A swap slot: the swap area and the slot in it.
pub(crate) type SwapSlot = (u8, u64);

/// What pagemap says of one process's resident and swapped pages (only
/// the pages that are there: holes and untouched reservations cost
/// nothing).
#[derive(Debug, Clone, Default)]
pub struct ProcPages {
    /// The process.
    pub pid: u32,
    /// Resident pages, in address order.
    pub present: Vec<Present>,
    /// Swapped pages: (virtual address, slot).
    pub swapped: Vec<(u64, SwapSlot)>,
    /// Whether frame numbers were hidden (no CAP_SYS_ADMIN).
    pub frames_hidden: bool,
    /// The ranges `PAGEMAP_SCAN` gave, with their states (empty where the
    /// kernel has no `PAGEMAP_SCAN`: before 6.7).
    pub runs: Vec<ScanRun>,
    /// Whether `PAGEMAP_SCAN` ran (so `runs` is the whole answer).
    pub scanned: bool,
    /// The frames of each huge page mapped whole (a THP mapped by one
    /// page-middle entry, a hugetlb page): first frame and how many, one
    /// folio each. Their pagemap was read one entry per huge page, and
    /// page states read one flags word for each.
    pub huge_frames: Vec<(u64, u64)>,
    /// Pagemap entries read (what the read cost the kernel).
    pub pagemap_entries: u64,
}

/// One resident page, as pagemap tells it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Present {
    /// Its virtual address.
    pub addr: u64,
    /// Its frame number; 0 when the reader may not see frame numbers.
    pub pfn: u64,
    /// Mapped by this one page table entry alone (pagemap's "exclusively
    /// mapped" bit: a map count of 1).
    pub solo: bool,
    /// A page of a file or of shared memory (not private anonymous).
    pub file: bool,
}

impl Present {
    /// Whether an analysis of who maps it needs the frame's count and
    /// flags: not for an anonymous page mapped once (it is its process's
    /// alone, and anonymous: pagemap said all there is to say).
    pub fn needs_frame(&self) -> bool {
        !self.solo || self.file
    }
}

/// Pages `start..end` in the same states, as `PAGEMAP_SCAN` tells any
/// reader that may open the process's pagemap.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScanRun {
    /// First address.
    pub start: u64,
    /// Address after the last.
    pub end: u64,
    /// Resident.
    pub present: bool,
    /// In swap.
    pub swapped: bool,
    /// Of a file or shared memory.
    pub file: bool,
    /// The zero page.
    pub zero: bool,
    /// Of a transparent huge page or hugetlb page.
    pub huge: bool,
}

impl ScanRun {
    /// Bytes the run covers.
    pub fn bytes(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }
}

/// What a group of processes gives back when it ends: the pages no process
/// outside it maps.
// Read back from snapshots (`snapshot --exact`): every field is written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Exclusive {
    /// Resident pages (not shared memory) no outsider maps, plus swap
    /// slots no outsider holds: `exclusive`.
    pub bytes: u64,
    /// Of `bytes`, anonymous resident pages (freed at once; file pages
    /// stay in the page cache, clean and reclaimable).
    pub anon: u64,
    /// Of `bytes`, swap slots.
    pub swap: u64,
    /// Shared memory / tmpfs pages no outsider maps: counted apart, for
    /// they outlive the processes while their file does.
    pub shmem: u64,
    /// KSM pages in `bytes` (their map count joins unrelated processes).
    pub ksm: u64,
    /// Pages whose map count fell below the group's own mappings of them
    /// while being read (the group changed during the read): left out.
    pub changed: u64,
    /// Pages of large folios in `bytes`, where the kernel may count an
    /// average map count.
    pub large: u64,
}

/// Page states of one category of a process: bytes of resident pages in
/// each state. From kpageflags where memtally may read it; else only the
/// figures `PAGEMAP_SCAN` gives any reader.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PageStates {
    /// Resident pages (the zero page included: it is mapped, not owned).
    pub present: u64,
    /// Pages in swap.
    pub swapped: u64,
    /// Resident pages of files or shared memory.
    pub file: u64,
    /// Resident pages of huge pages (THP or hugetlb).
    pub huge: u64,
    /// Mappings of the shared zero page (reads of untouched memory).
    pub zero_page: u64,
    /// On the active LRU list (kpageflags only).
    pub active: Option<u64>,
    /// On the inactive LRU list (kpageflags only).
    pub inactive: Option<u64>,
    /// Referenced since the kernel last looked (kpageflags only).
    pub referenced: Option<u64>,
    /// Merged by KSM (kpageflags only).
    pub ksm: Option<u64>,
    /// In the swap cache (kpageflags only).
    pub swapcache: Option<u64>,
    /// Unevictable (mlocked, ramfs; kpageflags only).
    pub unevictable: Option<u64>,
    /// Locked for I/O at the moment of the read (kpageflags only).
    pub locked: Option<u64>,
    /// Dirty (kpageflags only).
    pub dirty: Option<u64>,
    /// Under writeback (kpageflags only).
    pub writeback: Option<u64>,
}

impl PageStates {
    /// Adds `other` to these (a state either lacks stays unknown only
    /// where both lack it).
    pub fn add(&mut self, other: &PageStates) {
        self.present += other.present;
        self.swapped += other.swapped;
        self.file += other.file;
        self.huge += other.huge;
        self.zero_page += other.zero_page;
        for (a, b) in [
            (&mut self.active, other.active),
            (&mut self.inactive, other.inactive),
            (&mut self.referenced, other.referenced),
            (&mut self.ksm, other.ksm),
            (&mut self.swapcache, other.swapcache),
            (&mut self.unevictable, other.unevictable),
            (&mut self.locked, other.locked),
            (&mut self.dirty, other.dirty),
            (&mut self.writeback, other.writeback),
        ] {
            if let Some(b) = b {
                *a = Some(a.unwrap_or(0) + b);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_by_their_kernel_bit_numbers() {
        let f = PageFlags((1 << 12) | (1 << 14) | (1 << 22) | (1 << 6) | (1 << 5));
        assert!(f.anon() && f.swapbacked() && f.thp() && f.active() && f.lru());
        assert!(!f.shmem() && !f.ksm() && !f.zero_page());
        assert!(PageFlags(1 << 14).shmem());
        assert!(PageFlags(1 << 24).zero_page());
    }
}
