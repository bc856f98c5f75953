//! The vocabulary of a watch series: what a series follows (its scope)
//! and the figures a sample records, shared by `watch`, its series file
//! and `plot`.

use serde::{Deserialize, Serialize};

use crate::model::{Figure, Named};

/// What a series follows: one process, one category, or the total.
/// Declared in name order, so series sort as their names do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// One category over every process sampled; the key is its key.
    Category,
    /// One process; the key is its PID.
    Process,
    /// Every process sampled; the key is `total`.
    Total,
}

impl Named for Scope {
    const ALL: &'static [Scope] = &[Scope::Category, Scope::Process, Scope::Total];

    fn name(self) -> &'static str {
        match self {
            Scope::Category => "category",
            Scope::Process => "process",
            Scope::Total => "total",
        }
    }

    fn help(self) -> &'static str {
        match self {
            Scope::Category => "one category over every process sampled",
            Scope::Process => "one process",
            Scope::Total => "every process sampled",
        }
    }
}

/// A figure recorded per sample: the series file's columns after
/// scope/key/label, in [`Named::ALL`] order, and what `plot` can draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeriesFigure(pub Figure);

impl Named for SeriesFigure {
    const ALL: &'static [SeriesFigure] = &[
        SeriesFigure(Figure::Rss),
        SeriesFigure(Figure::Pss),
        SeriesFigure(Figure::Uss),
        SeriesFigure(Figure::Dirty),
        SeriesFigure(Figure::PrivateDirty),
        SeriesFigure(Figure::SharedDirty),
        SeriesFigure(Figure::SwapPss),
        // Appended, so the columns before keep their places in older files.
        SeriesFigure(Figure::PssDirty),
        SeriesFigure(Figure::Footprint),
        SeriesFigure(Figure::FootprintPss),
    ];

    fn name(self) -> &'static str {
        self.0.name()
    }

    fn help(self) -> &'static str {
        self.0.help()
    }
}
