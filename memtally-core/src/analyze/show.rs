//! The `show` view of one or more processes: rows grouped by a key, sorted,
//! cut to the top N, and the totals over every region.

use crate::analyze::category::{categorize, is_shmem, Category, CategorySums};
use crate::analyze::group::{process_total, sort_by_figures, GroupSort};
use crate::analyze::rounding::{Rounding, TotalsFrom};
use crate::analyze::shmem_swap;
use crate::model::{
    Figure, Flow, Group, Grouper, Note, Process, Region, RegionSink, SizeSource, Sizes,
};

/// What `show` groups regions by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ShowBy {
    /// Categories (file code, heap, stacks, ...).
    #[default]
    Category,
    /// One row per file or named region (each shared library, `[heap]`).
    Path,
    /// One row per permission set (`r-xp`, `rw-p`, ...).
    Perms,
}

crate::model::named::named!(ShowBy {
    Category => "category", "categories (file code, heap, stacks, ...)";
    Path => "path", "one row per file or named region (each shared library, [heap])";
    Perms => "perms", "one row per permission set (r-xp, rw-p, ...)";
});

impl ShowBy {
    /// The sort when none is asked for: categories dirty first (what the
    /// seed says matters; over several processes the dirty figure that adds
    /// up, Pss_Dirty), paths and permission sets by PSS, so a large clean
    /// mapping is not hidden below every small dirty one.
    pub fn default_sort(self, several: bool) -> [GroupSort; 2] {
        use GroupSort::Figure as By;
        match self {
            ShowBy::Category if several => [By(Figure::PssDirty), By(Figure::Pss)],
            ShowBy::Category => [By(Figure::Dirty), By(Figure::Rss)],
            ShowBy::Path | ShowBy::Perms => [By(Figure::Pss), By(Figure::Rss)],
        }
    }
}

/// A row of the view.
#[derive(Debug, Clone)]
pub struct Row {
    /// Stable key (`heap`, `/usr/lib/libc.so.6`, `rw-p`).
    pub key: String,
    /// What a person reads (`heap / anon rw`); same as the key for paths.
    pub label: String,
    /// How many regions the row adds up.
    pub regions: usize,
    /// Their sizes added up.
    pub sizes: Sizes,
}

/// The view of one or more processes.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ShowReport {
    /// The processes shown; their regions when they were kept (several
    /// processes), none when they were streamed (one process).
    pub processes: Vec<Process>,
    /// What the rows are grouped by.
    pub by: ShowBy,
    /// Rows after sorting, only the rows kept.
    pub rows: Vec<Row>,
    /// Rows cut beyond the rows kept (their figures are still in `totals`).
    pub omitted: usize,
    /// Every category, in table order, with only those that have regions.
    pub categories: Vec<(Category, Group)>,
    /// Every region of every process added up, PSS from the kernel's rollup
    /// where it was read.
    pub totals: Sizes,
    /// Where the totals' proportional figures come from.
    pub totals_from: TotalsFrom,
    /// The totals minus every region added up (smaps rounds each
    /// mapping's PSS down, the rollup does not): the row that makes the
    /// rows add up to the total; `None` when they already do.
    pub rounding: Option<Rounding>,
    /// Regions added up, over every process.
    pub region_count: usize,
    /// Things the reader must know to trust the numbers.
    pub notes: Vec<Note>,
    /// GPU memory of the processes (docs/gpu-json.md), when read and any.
    pub gpu: Option<crate::analyze::gpu::GpuShow>,
    /// The regions whose pages are tmpfs / shared memory
    /// (`category::is_shmem`) added up: the
    /// part of USS and private dirty that the process's exit does not free.
    pub shmem: Sizes,
}

impl ShowReport {
    /// Whether the figures leave something out: every note of a show says
    /// what (a process denied, unreadable or gone, a recording cut short,
    /// a read stopped early).
    pub fn partial(&self) -> bool {
        !self.notes.is_empty()
    }
}

/// Sums regions as they come, for a view, without keeping them: the
/// categories, the rows of the chosen grouping, and the count.
#[derive(Debug, Clone, Default)]
pub struct Fold {
    by: ShowBy,
    /// One group per category, in `Category::ALL` order.
    categories: CategorySums,
    rows: Grouper,
    /// Regions added up so far.
    pub regions: usize,
    /// The tmpfs / shared memory regions added up.
    shmem: Sizes,
}

impl Fold {
    /// An empty fold for a view grouped `by`.
    pub fn new(by: ShowBy) -> Fold {
        Fold { by, ..Fold::default() }
    }

    /// Adds one region.
    pub fn add(&mut self, r: &Region) {
        self.regions += 1;
        self.categories.add(categorize(r), r);
        if is_shmem(r) {
            self.shmem.add_region(r);
        }
        match self.by {
            ShowBy::Category => {}
            ShowBy::Path => self.rows.add_region(r.path.as_deref().unwrap_or("[anonymous]"), r),
            ShowBy::Perms => self.rows.add_region(&r.perms, r),
        }
    }
}

/// Builds the view of processes whose regions are in memory.
pub fn build(
    processes: Vec<Process>,
    by: ShowBy,
    sort: &[GroupSort],
    top: Option<usize>,
) -> ShowReport {
    let mut fold = Fold::new(by);
    for r in processes.iter().flat_map(|p| p.regions.iter()) {
        fold.add(r);
    }
    finish(processes, fold, sort, top)
}

/// The fold as a sink: every region of the view added as it is read.
impl RegionSink for Fold {
    fn region(&mut self, _line: usize, region: &Region) -> Flow {
        self.add(region);
        Flow::Continue
    }
}

/// Builds the view from a fold of the processes' regions (streamed or not).
pub fn finish(
    processes: Vec<Process>,
    fold: Fold,
    sort: &[GroupSort],
    top: Option<usize>,
) -> ShowReport {
    let mut totals = Sizes::default();
    for p in &processes {
        totals.add(&process_total(p));
    }
    // Over several processes every sum keeps the summable figures only
    // (model::summable): its rows add up regions of different processes.
    let n = processes.len();
    let mut totals = totals.over_processes(n);
    // Swapped shared memory, once across the processes (SwapPss has none
    // of it): their regions are kept when there are several.
    let shmem_swap = (n > 1).then(|| {
        let objects: Vec<_> =
            processes.iter().map(|p| shmem_swap::of_regions(&p.regions)).collect();
        shmem_swap::shares(&objects).iter().sum::<u64>()
    });
    totals.shmem_swap = shmem_swap;
    let categories: Vec<(Category, Group)> = fold
        .categories
        .into_groups()
        .into_iter()
        .map(|(c, g)| {
            let mut sizes = g.sizes.over_processes(n);
            if c == Category::SharedMemory {
                sizes.shmem_swap = shmem_swap;
            }
            (c, Group { sizes, ..g })
        })
        .collect();
    // Every region is in exactly one category, whatever the rows are
    // grouped by and however many of them --top keeps.
    let mut every_region = Sizes::default();
    for (_, g) in &categories {
        every_region.add(&g.sizes);
    }
    let rounding = Rounding::between(&totals, &every_region);
    let totals_from = TotalsFrom::of(&processes);
    let mut rows: Vec<Row> = match fold.by {
        ShowBy::Category => categories
            .iter()
            .map(|(c, g)| Row {
                key: g.key.clone(),
                label: c.label().to_string(),
                regions: g.regions,
                sizes: g.sizes.clone(),
            })
            .collect(),
        ShowBy::Path | ShowBy::Perms => fold
            .rows
            .into_groups()
            .into_iter()
            .map(|g| Row {
                label: g.key.clone(),
                key: g.key,
                regions: g.regions,
                sizes: g.sizes.over_processes(n),
            })
            .collect(),
    };
    let default_sort;
    let sort = if sort.is_empty() {
        default_sort = fold.by.default_sort(processes.len() > 1);
        &default_sort[..]
    } else {
        sort
    };
    sort_by_figures(&mut rows, sort, |r| (&r.key, r.regions, &r.sizes));
    let omitted = crate::analyze::group::keep_first(&mut rows, top);

    let mut notes = Vec::new();
    for p in &processes {
        if p.source == SizeSource::Maps {
            notes.push(Note::MapsOnly { pid: p.pid });
        }
    }
    ShowReport {
        processes,
        by: fold.by,
        rows,
        omitted,
        categories,
        totals,
        totals_from,
        rounding,
        region_count: fold.regions,
        notes,
        gpu: None,
        shmem: fold.shmem.over_processes(n),
    }
}
