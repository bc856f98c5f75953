//! What the process level sorts by; `s` cycles them.

use memtally_core::model::Figure;

/// What the process level sorts by; `s` cycles them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortKey {
    Pss,
    Uss,
    Rss,
    Dirty,
    Swap,
    Gpu,
    Growth,
}

impl SortKey {
    pub const ALL: [SortKey; 7] = [
        SortKey::Pss,
        SortKey::Uss,
        SortKey::Rss,
        SortKey::Dirty,
        SortKey::Swap,
        SortKey::Gpu,
        SortKey::Growth,
    ];

    pub fn name(self) -> &'static str {
        match self {
            SortKey::Pss => "pss",
            SortKey::Uss => "uss",
            SortKey::Rss => "rss",
            SortKey::Dirty => "dirty",
            SortKey::Swap => "swap",
            SortKey::Gpu => "gpu",
            SortKey::Growth => "growth",
        }
    }

    /// The figure of the column of that name, the `top --sort` field;
    /// growth is sorted here, over PSS order.
    pub fn top_field(self) -> Figure {
        match self {
            SortKey::Pss | SortKey::Growth => Figure::Pss,
            SortKey::Uss => Figure::Uss,
            SortKey::Rss => Figure::Rss,
            SortKey::Dirty => Figure::PssDirty,
            SortKey::Swap => Figure::SwapPss,
            SortKey::Gpu => Figure::Gpu,
        }
    }

    pub fn next(self) -> SortKey {
        let i = SortKey::ALL.iter().position(|&k| k == self).unwrap_or(0);
        SortKey::ALL[(i + 1) % SortKey::ALL.len()]
    }
}
