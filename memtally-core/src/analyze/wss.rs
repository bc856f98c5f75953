//! The working set of processes, from the smaps read at the end of an
//! interval that began with their referenced bits reset: per mapping, the
//! bytes touched during the interval (`Referenced`), the 2004 mail's
//! working set (every dirty byte plus the clean file bytes touched) and
//! the cold bytes (resident, not touched); then summed by category and
//! per process, as `show` sums its figures.

use crate::analyze::category::{categorize, Category};
use crate::analyze::trend::{Sample, Scope};
use crate::model::wss::{IdleTracking, WssMethod};
use crate::model::{Backing, Figure, Flow, Note, Region, RegionSink, Sizes};

/// One process's working set.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct WssProcess {
    /// The process.
    pub pid: u32,
    /// Its short name.
    pub comm: String,
    /// Its command line (`[comm]` when it has none).
    pub command: String,
    /// Seconds the figures cover: from the middle of the reset to the
    /// middle of the read (a reset and a read take time, and pages touched
    /// while they run count too; wss.pl estimates its duration so).
    pub measured_s: f64,
    /// Every mapping added up.
    pub totals: Sizes,
    /// By category, in table order, only those with mappings.
    pub categories: Vec<WssCategory>,
}

/// One category's mappings of one or more processes, added up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WssCategory {
    /// The category.
    pub category: Category,
    /// How many mappings.
    pub regions: usize,
    /// Their figures added up, `touched`, `working_set` and `cold` with them.
    pub sizes: Sizes,
}

/// A working-set measurement of a selection.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct WssReport {
    /// How touched pages were found.
    pub method: WssMethod,
    /// Whether the kernel offers idle page tracking.
    pub idle_tracking: IdleTracking,
    /// The interval asked for, in seconds.
    pub interval_s: f64,
    /// The processes measured.
    pub processes: Vec<WssProcess>,
    /// Every process's categories added up, in table order; over several
    /// processes only the summable figures (model::summable: PSS,
    /// Pss_Dirty, the private ones), as `show --tree` sums them.
    pub categories: Vec<WssCategory>,
    /// Every process added up, as `categories` are.
    pub totals: Sizes,
    /// What the figures leave out: processes that exited during the
    /// interval, the spread of the working set, processes not read.
    pub notes: Vec<Note>,
}

impl WssProcess {
    /// One process measured: its figures as `fold` summed its mappings.
    pub fn new(pid: u32, comm: String, command: String, measured_s: f64, fold: &WssFold) -> Self {
        WssProcess {
            pid,
            comm,
            command,
            measured_s,
            totals: fold.totals.clone(),
            categories: fold.categories(),
        }
    }
}

impl WssReport {
    /// The report of `processes`: their sums by category and in total,
    /// which over several processes keep only what adds up (RSS, DIRTY,
    /// TOUCHED, WORKING SET and COLD count a page shared by N processes
    /// N times: they stand per process). A note says when transparent huge
    /// pages were touched (one referenced bit per huge page).
    pub fn new(
        method: WssMethod,
        idle_tracking: IdleTracking,
        interval_s: f64,
        processes: Vec<WssProcess>,
        mut notes: Vec<Note>,
    ) -> Self {
        let mut totals = Sizes::default();
        for p in &processes {
            totals.add(&p.totals);
        }
        if let Some(bytes) = totals.figure(Figure::Thp).filter(|&b| b > 0) {
            notes.push(Note::TouchedHugePages { bytes });
        }
        WssReport {
            method,
            idle_tracking,
            interval_s,
            categories: sum_categories(&processes),
            totals: totals.over_processes(processes.len()),
            processes,
            notes,
        }
    }

    /// Whether the figures leave something out (every note says what).
    pub fn partial(&self) -> bool {
        !self.notes.is_empty()
    }
}

/// The clean bytes of `r` that belong to a file (page cache pages that can
/// be dropped and read back): none for anonymous and shared memory,
/// whose clean pages are not "backed by a file" in the mail's sense.
fn clean_file(r: &Region) -> u64 {
    match r.backing {
        Backing::File => r.sizes.clean().unwrap_or(0),
        _ => 0,
    }
}

/// Sets `touched`, `working_set` and `cold` of one mapping's sizes read
/// after the reset, whose clean file bytes are `file`, and returns how many
/// bytes the working set may be short by.
///
/// smaps gives per mapping how much is dirty, clean and referenced, not
/// which pages are which: the clean touched bytes are at least
/// `referenced - dirty` and at most `min(referenced, clean)`. The two
/// agree where a mapping is all clean (code, read-only data: the common
/// case), all dirty, or all touched; elsewhere the lower bound is taken
/// and the difference returned, for a note.
fn figure(s: &mut Sizes, file: u64) -> u64 {
    let (Some(rss), Some(referenced)) = (s.rss, s.referenced) else { return 0 };
    let referenced = referenced.min(rss);
    let dirty = s.dirty().unwrap_or(0);
    let low = referenced.saturating_sub(dirty).min(file);
    let high = referenced.min(file);
    s.touched = Some(referenced);
    s.working_set = Some(dirty.saturating_add(low));
    s.cold = Some(rss - referenced);
    high - low
}

/// Sums one process's mappings as its smaps is read (none kept): every
/// mapping figured (`figure`), by category and in total.
#[derive(Debug, Clone, Default)]
pub struct WssFold {
    /// Every mapping added up.
    pub totals: Sizes,
    categories: Vec<WssCategory>,
    /// Bytes the working set may be short by, and in how many mappings.
    pub spread: (u64, usize),
}

impl WssFold {
    /// The categories with mappings, in table order.
    pub fn categories(&self) -> Vec<WssCategory> {
        let mut out = self.categories.clone();
        out.sort_by_key(|c| Category::ALL.iter().position(|&k| k == c.category));
        out
    }
}

impl WssFold {
    /// Adds one mapping, its `Referenced` replaced by `referenced` where
    /// idle page tracking counted the pages touched.
    pub fn add(&mut self, region: &Region, referenced: Option<u64>) {
        let mut sizes = region.sizes.clone();
        sizes.referenced = referenced.or(sizes.referenced);
        sizes.size = sizes.size.or(region.vsize());
        let spread = figure(&mut sizes, clean_file(region));
        if spread > 0 {
            self.spread.0 += spread;
            self.spread.1 += 1;
        }
        let category = categorize(region);
        let at = match self.categories.iter().position(|c| c.category == category) {
            Some(at) => at,
            None => {
                self.categories.push(WssCategory { category, regions: 0, sizes: Sizes::default() });
                self.categories.len() - 1
            }
        };
        self.categories[at].regions += 1;
        self.categories[at].sizes.add(&sizes);
        self.totals.add(&sizes);
    }
}

impl RegionSink for WssFold {
    fn region(&mut self, _line: usize, region: &Region) -> Flow {
        self.add(region, None);
        Flow::Continue
    }
}

/// Adds a report's `touched`, `working_set` and `cold` to a watch's
/// sample (`watch --wss`): to each process, each category and the total
/// the sample has; a category the sample lacks (categories not sampled)
/// gets the three figures alone.
pub fn add_to_sample(report: &WssReport, sample: &mut Sample) {
    fn set(to: &mut Sizes, from: &Sizes) {
        to.touched = from.touched;
        to.working_set = from.working_set;
        to.cold = from.cold;
    }
    for p in &report.processes {
        if let Some((_, s)) = sample.get_mut(&(Scope::Process, p.pid.to_string())) {
            set(s, &p.totals);
        }
    }
    for c in &report.categories {
        let key = (Scope::Category, c.category.key().to_string());
        let (_, s) =
            sample.entry(key).or_insert_with(|| (c.category.label().into(), Sizes::default()));
        set(s, &c.sizes);
    }
    if let Some((_, s)) = sample.get_mut(&(Scope::Total, "total".to_string())) {
        set(s, &report.totals);
    }
}

/// Every process's categories added up, in table order; over several
/// processes, the summable figures only.
fn sum_categories(processes: &[WssProcess]) -> Vec<WssCategory> {
    let mut out: Vec<WssCategory> = Vec::new();
    for c in processes.iter().flat_map(|p| &p.categories) {
        match out.iter_mut().find(|o| o.category == c.category) {
            Some(o) => {
                o.regions += c.regions;
                o.sizes.add(&c.sizes);
            }
            None => out.push(c.clone()),
        }
    }
    out.sort_by_key(|c| Category::ALL.iter().position(|&k| k == c.category));
    for c in &mut out {
        c.sizes = std::mem::take(&mut c.sizes).over_processes(processes.len());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::region::Region;

    fn figure_region(r: &Region) -> (Sizes, u64) {
        let mut sizes = r.sizes.clone();
        let spread = figure(&mut sizes, clean_file(r));
        (sizes, spread)
    }

    fn region(backing: Backing, rss: u64, referenced: u64, dirty: u64) -> Region {
        let mut r = Region::new(backing);
        r.sizes.rss = Some(rss);
        r.sizes.referenced = Some(referenced);
        r.sizes.private_dirty = Some(dirty);
        r.sizes.shared_dirty = Some(0);
        r.sizes.private_clean = Some(rss - dirty);
        r.sizes.shared_clean = Some(0);
        r
    }

    #[test]
    fn clean_file_pages_count_when_touched_and_dirty_ones_always() {
        // Code: 8 MiB resident, 3 touched: the working set is the 3.
        let (code, spread) = figure_region(&region(Backing::File, 8 << 20, 3 << 20, 0));
        assert_eq!(spread, 0);
        assert_eq!(code.touched, Some(3 << 20));
        assert_eq!(code.working_set, Some(3 << 20));
        assert_eq!(code.cold, Some(5 << 20));
        // Heap: 64 MiB dirty, 16 touched: all 64 are in the working set.
        let (heap, spread) =
            figure_region(&region(Backing::Anonymous, 64 << 20, 16 << 20, 64 << 20));
        assert_eq!(spread, 0);
        assert_eq!(heap.working_set, Some(64 << 20));
        assert_eq!(heap.cold, Some(48 << 20));
        // Clean anonymous pages (the zero page, read only) are not file pages.
        let (zero, _) = figure_region(&region(Backing::Anonymous, 4 << 20, 4 << 20, 0));
        assert_eq!(zero.working_set, Some(0));
    }

    #[test]
    fn a_mixed_mapping_takes_the_lower_bound_and_says_by_how_much() {
        // 10 resident: 4 dirty, 6 clean file pages; 5 touched. At least 1
        // of the touched is clean (5 - 4), at most 5.
        let (data, spread) = figure_region(&region(Backing::File, 10 << 20, 5 << 20, 4 << 20));
        assert_eq!(spread, 4 << 20);
        assert_eq!(data.working_set, Some(5 << 20));
        assert_eq!(data.touched, Some(5 << 20));
    }

    #[test]
    fn no_referenced_figure_leaves_the_figures_unknown() {
        let mut r = region(Backing::File, 4096, 0, 0);
        r.sizes.referenced = None;
        let (s, spread) = figure_region(&r);
        assert_eq!(spread, 0);
        assert_eq!((s.touched, s.working_set, s.cold), (None, None, None));
    }

    /// Over several processes the sums keep what adds up: a library page
    /// both map counts once in PSS, twice in RSS, so RSS, DIRTY, TOUCHED,
    /// WORKING SET and COLD are left out of the sums (`-`); one process
    /// keeps them all.
    #[test]
    fn sums_over_several_processes_keep_the_proportional_figures_only() {
        let mut lib = region(Backing::File, 8 << 20, 2 << 20, 0);
        lib.sizes.shared_clean = lib.sizes.private_clean.take();
        lib.sizes.private_clean = Some(0);
        lib.sizes.pss = Some(4 << 20);
        lib.sizes.pss_dirty = Some(0);
        let mut heap = region(Backing::Anonymous, 4 << 20, 1 << 20, 4 << 20);
        heap.sizes.pss = Some(4 << 20);
        heap.sizes.pss_dirty = Some(4 << 20);
        let mut fold = WssFold::default();
        fold.region(1, &lib);
        fold.region(2, &heap);
        let p = |pid| WssProcess::new(pid, "a".into(), "a".into(), 1.0, &fold);
        let report = |n| {
            let ps = (1..=n).map(p).collect();
            WssReport::new(WssMethod::ClearRefs, IdleTracking::Absent, 1.0, ps, Vec::new())
        };
        let one = report(1);
        assert_eq!(one.totals.rss, Some(12 << 20));
        assert_eq!(one.totals.touched, Some(3 << 20));
        assert_eq!(one.totals.cold, Some(9 << 20));
        let two = report(2);
        assert_eq!(two.totals.pss, Some(16 << 20), "PSS adds up");
        assert_eq!(two.totals.pss_dirty, Some(8 << 20));
        let full = [two.totals.rss, two.totals.dirty(), two.totals.touched, two.totals.cold];
        assert_eq!(full, [None; 4], "full counts stand per process only");
        assert_eq!(two.totals.working_set, None);
        let regions: usize = two.categories.iter().map(|c| c.regions).sum();
        assert_eq!(regions, 4, "both processes' mappings");
        let pss: u64 = two.categories.iter().filter_map(|c| c.sizes.pss).sum();
        assert_eq!(pss, 16 << 20);
        assert!(two.categories.iter().all(|c| c.sizes.rss.is_none() && c.sizes.touched.is_none()));
        assert_eq!(two.processes[1].totals.rss, Some(12 << 20), "each process whole");
    }
}
