//! The vocabulary of a watch series: what a series follows (its scope)
//! and the figures a sample records, shared by `watch`, its series file
//! and `plot`.

use serde::{Deserialize, Serialize};

use crate::model::{Figure, Named};

/// What a series follows: one process, one category, or the total.
/// Declared in name order, so series sort as their names do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// One category over every process sampled; the key is its key.
    Category,
    /// One process; the key is its PID.
    Process,
    /// Every process sampled; the key is `total`.
    Total,
}

super::named::named!(Scope {
    Category => "category", "one category over every process sampled";
    Process => "process", "one process";
    Total => "total", "every process sampled";
});

/// A figure recorded per sample: the series file's columns after
/// scope/key/label, and what `plot` can draw ([`Named::ALL`]: every
/// figure of either series). A watch's file has the [`SeriesFigure::WATCH`]
/// columns, a `wss` series' the [`SeriesFigure::WSS`] ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeriesFigure(pub Figure);

impl Named for SeriesFigure {
    // Every figure of either series: the widest, a watch's with `--wss`.
    const ALL: &'static [SeriesFigure] = SeriesFigure::WATCH_WSS;

    fn name(self) -> &'static str {
        self.0.name()
    }

    fn help(self) -> &'static str {
        self.0.help()
    }
}

impl SeriesFigure {
    /// The columns of a watch's series (and of its CSV and JSON Lines);
    /// a figure is appended, so the columns before keep their places in
    /// older files.
    pub const WATCH: &'static [SeriesFigure] = &[
        SeriesFigure(Figure::Rss),
        SeriesFigure(Figure::Pss),
        SeriesFigure(Figure::Uss),
        SeriesFigure(Figure::Dirty),
        SeriesFigure(Figure::PrivateDirty),
        SeriesFigure(Figure::SharedDirty),
        SeriesFigure(Figure::SwapPss),
        SeriesFigure(Figure::PssDirty),
        SeriesFigure(Figure::Footprint),
        SeriesFigure(Figure::FootprintPss),
    ];

    /// The columns of `watch --wss`: a watch's, then the working-set
    /// figures (built from [`SeriesFigure::WATCH`], so the two never drift).
    pub const WATCH_WSS: &'static [SeriesFigure] = &concat::<13>(
        SeriesFigure::WATCH,
        &[
            SeriesFigure(Figure::Touched),
            SeriesFigure(Figure::WorkingSet),
            SeriesFigure(Figure::Cold),
        ],
    );

    /// The columns of a `wss` series: resident and dirty beside the
    /// working-set figures.
    pub const WSS: &'static [SeriesFigure] = &[
        SeriesFigure(Figure::Rss),
        SeriesFigure(Figure::Pss),
        SeriesFigure(Figure::Dirty),
        SeriesFigure(Figure::Touched),
        SeriesFigure(Figure::WorkingSet),
        SeriesFigure(Figure::Cold),
    ];
}

/// `a` then `b` as one array of `N` columns, in a constant: `N` must be
/// their lengths' sum (a mismatch fails the build).
const fn concat<const N: usize>(a: &[SeriesFigure], b: &[SeriesFigure]) -> [SeriesFigure; N] {
    assert!(a.len() + b.len() == N, "N is the sum of the two lengths");
    let mut out = [SeriesFigure(Figure::Rss); N];
    let mut i = 0;
    while i < a.len() {
        out[i] = a[i];
        i += 1;
    }
    let mut j = 0;
    while j < b.len() {
        out[a.len() + j] = b[j];
        j += 1;
    }
    out
}
