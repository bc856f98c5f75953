//! What `plot` draws, by the kind of input: a watch series' lines over
//! time, its categories stacked, a vmmap report's regions by size, a
//! snapshot's bytes by category. Plain data: the use case reads the file
//! into these, the printers draw them.

use crate::model::series::SeriesFigure;
use crate::model::Figure;

/// The chart's data, by the kind of input.
#[derive(Debug, Clone)]
pub enum Plot {
    /// A watch series: lines over time.
    Series(SeriesPlot),
    /// A vmmap report: regions by virtual size.
    Histogram(HistogramPlot),
    /// A snapshot: bytes by category.
    Categories(CategoryPlot),
    /// A watch series' categories stacked over time.
    Stacked(StackPlot),
}

/// One series over time.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesLine {
    /// The series' key: `total`, or the PID.
    pub key: String,
    /// The label column: the command line of a process.
    pub label: String,
    /// (seconds, bytes), thinned to at most [`MAX_POINTS`] evenly.
    pub points: Vec<(f64, u64)>,
}

/// A watch series' figure over time.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SeriesPlot {
    /// The figure drawn.
    pub figure: SeriesFigure,
    /// The total's line (one, unless the file holds more).
    pub totals: Vec<SeriesLine>,
    /// The processes that grew most, most first, at most `top`.
    pub processes: Vec<SeriesLine>,
}

/// One power-of-two bucket of region sizes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizeBucket {
    /// Regions of virtual size up to this many bytes (and above the
    /// bucket before).
    pub up_to: u64,
    /// How many regions.
    pub regions: u64,
    /// How many of them are purgeable (volatile or already emptied).
    pub purgeable: u64,
}

/// vmmap regions by virtual size.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HistogramPlot {
    /// The region types asked for (every type when empty).
    pub types: Vec<String>,
    /// Smallest first; no empty bucket.
    pub buckets: Vec<SizeBucket>,
}

/// One category's bar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CategoryBar {
    /// The category's name.
    pub label: String,
    /// The measure's bytes.
    pub value: u64,
    /// The dirty part in the same measure (proportional dirty for PSS).
    pub dirty: Option<u64>,
}

/// Whose memory a snapshot holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// One process.
    Process {
        /// Its PID, where the snapshot has one.
        pid: Option<u32>,
        /// Its name.
        comm: String,
    },
    /// This many processes (not one).
    Processes(usize),
}

/// A snapshot's memory by category.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CategoryPlot {
    /// PSS, or RSS or virtual size where the snapshot has no PSS.
    pub measure: Figure,
    /// Whose memory it is.
    pub subject: Subject,
    /// Largest first.
    pub bars: Vec<CategoryBar>,
}

/// Points kept per series: more than a chart's width in pixels.
pub const MAX_POINTS: usize = 4096;

/// One category's band: its figure at every sample of the chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Band {
    /// The category's key (`heap`).
    pub key: String,
    /// Its name (`heap / anon rw`).
    pub label: String,
    /// Bytes at each of [`StackPlot::times`]; 0 where the sample has no
    /// row for the category (no mapping of it then).
    pub values: Vec<u64>,
}

/// A watch series' categories over time.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct StackPlot {
    /// The figure stacked.
    pub figure: SeriesFigure,
    /// The samples' times, seconds, thinned evenly to at most [`MAX_POINTS`].
    pub times: Vec<f64>,
    /// Bottom first: the largest category (at its peak) at the bottom.
    pub bands: Vec<Band>,
    /// The series' total at those times, where the file has it: the
    /// bands' sum equals it when the categories were read with it.
    pub total: Vec<(f64, u64)>,
}
