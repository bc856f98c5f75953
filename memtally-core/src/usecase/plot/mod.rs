//! `plot`: what a chart of a file would show, without drawing it. A watch
//! series gives memory over time (the total and the processes that grew
//! most); a vmmap report, its regions by size; any other snapshot, where
//! its memory goes by category.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::Path;

use crate::analyze::plot::{
    CategoryBar, CategoryPlot, HistogramPlot, Plot, SeriesLine, SeriesPlot, SizeBucket, Subject,
    MAX_POINTS,
};
use crate::analyze::vmmap::{pow2_bucket, TypeFilter};
use crate::analyze::Category;
use crate::error::{Error, Result};
use crate::model::series::{Scope, SeriesFigure};
use crate::model::snap_region_de::RegionRef;
use crate::model::snapshot::{Snapshot, SnapshotKind};
use crate::model::{Figure, Purge};
use crate::source::bounded::open_input;
use crate::source::parse::snapshot_feed::{LinesFeed, RegionFeed};
use crate::source::series::{is_series_head, SeriesReader};
use crate::usecase::snapshot::{read, Spill};

mod stack;
pub use stack::stacked;

/// What to plot. Built from `default()` and the `with_*` setters.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PlotOptions {
    /// A series' figure (one of the series file's columns).
    pub figure: SeriesFigure,
    /// Processes to draw beside a series' total (those that grew most).
    pub top: usize,
    /// vmmap input: only regions whose type contains one of these (all when empty).
    pub types: Vec<String>,
    /// A series drawn as areas stacked by this, not as lines.
    pub stack: Option<Stack>,
}

/// What a series' stacked chart stacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stack {
    /// The series' categories (heap, file code, …): what the memory is made of over time.
    Category,
}

crate::model::named::named!(Stack {
    Category => "category", "areas of the categories (heap, file code, …) stacked over time";
});

impl Default for PlotOptions {
    fn default() -> PlotOptions {
        PlotOptions { figure: SeriesFigure(Figure::Pss), top: 5, types: Vec::new(), stack: None }
    }
}

setters!(PlotOptions {
    with_figure: figure: SeriesFigure,
    with_top: top: usize,
    with_types: types: Vec<String>,
    with_stack: stack: Option<Stack>,
});

/// Reads `input` and picks what its chart shows.
pub fn plot(input: &Path, opts: &PlotOptions) -> Result<Plot> {
    // Its head is read before the rest: a pipe is copied to a file first.
    let spill = Spill::of(input)?;
    let read = spill.as_ref().map_or(input, Spill::path);
    plot_read(read, opts).map_err(|e| Spill::named(spill.as_ref(), e, input))
}

/// [`plot`] of a document in a regular file.
fn plot_read(input: &Path, opts: &PlotOptions) -> Result<Plot> {
    if starts_as_series(input)? {
        return match opts.stack {
            Some(Stack::Category) => stacked(input, opts.figure).map(Plot::Stacked),
            None => series(input, opts.figure, opts.top).map(Plot::Series),
        };
    }
    if opts.stack.is_some() {
        return Err(Error::Parse {
            path: input.to_path_buf(),
            message: "not a watch series: only a series over time can be stacked".into(),
        });
    }
    // The regions are bucketed as they are read, never held.
    let mut sizes = Sizes::new(&opts.types);
    let snap = read(input, &mut sizes)?;
    if snap.kind == SnapshotKind::Vmmap && sizes.regions > 0 {
        sizes.histogram(input).map(Plot::Histogram)
    } else {
        Ok(Plot::Categories(categories(&snap)))
    }
}

/// Whether `path` is a watch series (its header starts `elapsed_s,`).
/// Only the head is read, through the bounded reader: a device, or a file
/// larger than the cap, is refused there.
fn starts_as_series(path: &Path) -> Result<bool> {
    let bad = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::InvalidData => {
            Error::Parse { path: path.to_path_buf(), message: e.to_string() }
        }
        _ => Error::io(path, e),
    };
    let mut head = Vec::new();
    open_input(path).map_err(bad)?.take(10).read_to_end(&mut head).map_err(bad)?;
    Ok(is_series_head(&head))
}

/// The total and the fastest-growing processes over time; categories are
/// left out (they are not processes).
fn series(path: &Path, figure: SeriesFigure, top: usize) -> Result<SeriesPlot> {
    let bad = |m: String| Error::Parse { path: path.to_path_buf(), message: m };
    let input = open_input(path).map_err(|e| bad(e.to_string()))?;
    let mut reader = SeriesReader::new(input, path)?;
    let col = reader.column(figure)?;
    let mut lines: Vec<(Scope, SeriesLine)> = Vec::new();
    // Each series' slot by (scope, key): one lookup per row, not a search.
    let mut slots: HashMap<(Scope, String), usize> = HashMap::new();
    // Per series: keep one point in `stride`, halving the points kept when
    // they reach MAX_POINTS, so memory stays bounded whatever the rows.
    let mut strides: Vec<(usize, usize)> = Vec::new();
    while let Some(row) = reader.next_row()? {
        if row.scope == Scope::Category {
            continue;
        }
        let Some(v) = row.value(col) else { continue };
        let slot = match slots.get(&(row.scope, row.key.to_string())) {
            Some(&i) => i,
            None => {
                let line = SeriesLine {
                    key: row.key.to_string(),
                    label: row.label.to_string(),
                    points: Vec::new(),
                };
                lines.push((row.scope, line));
                strides.push((1, 0));
                slots.insert((row.scope, row.key.to_string()), lines.len() - 1);
                lines.len() - 1
            }
        };
        let (stride, seen) = &mut strides[slot];
        *seen += 1;
        if (*seen - 1) % *stride != 0 {
            continue;
        }
        let points = &mut lines[slot].1.points;
        points.push((row.elapsed_s, v));
        if points.len() >= MAX_POINTS {
            let mut k = 0;
            points.retain(|_| {
                k += 1;
                k % 2 == 1
            });
            *stride *= 2;
        }
    }
    if lines.is_empty() {
        return Err(bad("no samples in the series".into()));
    }
    let growth = |l: &SeriesLine| match (l.points.first(), l.points.last()) {
        (Some(a), Some(b)) => b.1 as i128 - a.1 as i128,
        _ => 0,
    };
    let (totals, mut processes): (Vec<_>, Vec<_>) =
        lines.into_iter().partition(|(scope, _)| *scope == Scope::Total);
    processes.sort_by_key(|(_, l)| std::cmp::Reverse(growth(l)));
    Ok(SeriesPlot {
        figure,
        totals: totals.into_iter().map(|(_, l)| l).collect(),
        processes: processes.into_iter().take(top).map(|(_, l)| l).collect(),
    })
}

/// vmmap regions by virtual size, in power-of-two buckets, with how many
/// of each are purgeable (volatile or already emptied), counted as they
/// are read: the histogram of a vmmap report's regions of the types asked.
struct Sizes {
    filter: TypeFilter,
    /// Regions read, of every type, in the processes read so far.
    regions: u64,
    /// Bucket upper bound: regions, of which purgeable.
    buckets: BTreeMap<u64, (u64, u64)>,
    /// Those of the process being read (a snapshot file can take them back).
    pending: (u64, BTreeMap<u64, (u64, u64)>),
}

impl Sizes {
    fn new(types: &[String]) -> Sizes {
        Sizes {
            filter: TypeFilter::new(types.to_vec()),
            regions: 0,
            buckets: BTreeMap::new(),
            pending: (0, BTreeMap::new()),
        }
    }

    fn histogram(self, path: &Path) -> Result<HistogramPlot> {
        if self.buckets.is_empty() {
            return Err(Error::Parse {
                path: path.to_path_buf(),
                message: "no regions of the selected types".into(),
            });
        }
        let buckets = self
            .buckets
            .into_iter()
            .map(|(up_to, (regions, purgeable))| SizeBucket { up_to, regions, purgeable })
            .collect();
        Ok(HistogramPlot { types: self.filter.types().to_vec(), buckets })
    }
}

impl RegionFeed for Sizes {
    fn region(&mut self, r: RegionRef<'_>) {
        self.pending.0 += 1;
        if !self.filter.matches(r.region_type.as_deref().unwrap_or("")) {
            return;
        }
        let Some(v) = r.sizes.size else { return };
        let e = self.pending.1.entry(pow2_bucket(v)).or_default();
        e.0 += 1;
        if matches!(r.purge, Some(Purge::Volatile | Purge::Empty)) {
            e.1 += 1;
        }
    }

    fn process(&mut self) {
        let (regions, buckets) = std::mem::take(&mut self.pending);
        self.regions += regions;
        for (up_to, (n, purgeable)) in buckets {
            let e = self.buckets.entry(up_to).or_default();
            e.0 += n;
            e.1 += purgeable;
        }
    }
}

impl LinesFeed for Sizes {
    fn dropped(&mut self) {
        self.pending = (0, BTreeMap::new());
    }
}

/// Where the memory goes: PSS (or RSS, or virtual size) per category,
/// with its dirty part.
fn categories(snap: &Snapshot) -> CategoryPlot {
    let measure = [Figure::Pss, Figure::Rss, Figure::Size]
        .into_iter()
        .find(|&f| snap.categories.iter().any(|c| c.sizes.figure(f).is_some()))
        .unwrap_or(Figure::Size);
    let mut bars: Vec<CategoryBar> = snap
        .categories
        .iter()
        .map(|c| CategoryBar {
            label: Category::label_or_key(&c.key).to_string(),
            value: c.sizes.figure(measure).unwrap_or(0),
            dirty: if measure == Figure::Pss { c.sizes.pss_dirty } else { c.sizes.dirty() },
        })
        .collect();
    bars.sort_by_key(|b| std::cmp::Reverse(b.value));
    let subject = match snap.processes.as_slice() {
        [p] => Subject::Process { pid: p.pid, comm: p.comm.clone() },
        ps => Subject::Processes(ps.len()),
    };
    CategoryPlot { measure, subject, bars }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::series::SeriesWriter;

    /// A series file: the total, three processes growing by 1, 3 and 2
    /// pages per second, and a category (never drawn).
    fn series_file(dir: &Path) -> std::path::PathBuf {
        let path = dir.join("s.csv");
        let mut w =
            SeriesWriter::with_figures(std::fs::File::create(&path).unwrap(), SeriesFigure::WATCH)
                .unwrap();
        for t in 0..3u64 {
            let at =
                |pages: u64| crate::model::Sizes { pss: Some(4096 * pages), ..Default::default() };
            let (total, a, b, c, cat) = (at(10 + 6 * t), at(t), at(3 * t), at(2 * t), at(7));
            let rows = [
                (Scope::Total, "total", "total", &total),
                (Scope::Process, "1", "a", &a),
                (Scope::Process, "2", "b", &b),
                (Scope::Process, "3", "c", &c),
                (Scope::Category, "heap", "heap", &cat),
            ];
            w.sample(t as f64, rows).unwrap();
        }
        w.into_inner().unwrap();
        path
    }

    #[test]
    fn a_series_gives_its_total_and_the_processes_that_grew_most() {
        let dir = tempfile::tempdir().unwrap();
        let path = series_file(dir.path());
        let opts = PlotOptions { top: 2, ..Default::default() };
        let Plot::Series(s) = plot(&path, &opts).unwrap() else { panic!("not a series") };
        assert_eq!(s.totals.len(), 1);
        assert_eq!(s.totals[0].points, [(0.0, 40960), (1.0, 65536), (2.0, 90112)]);
        let keys: Vec<&str> = s.processes.iter().map(|l| l.key.as_str()).collect();
        assert_eq!(keys, ["2", "3"], "most growth first, at most --top, no category");
        let of = |figure| PlotOptions { figure: SeriesFigure(figure), ..Default::default() };
        // A column with no figure in it, and a figure with no column.
        let e = plot(&path, &of(Figure::Rss)).unwrap_err().to_string();
        assert!(e.contains("no samples in the series"), "{e}");
        let e = plot(&path, &of(Figure::Gpu)).unwrap_err().to_string();
        assert!(e.contains("no gpu column"), "{e}");
    }
}
