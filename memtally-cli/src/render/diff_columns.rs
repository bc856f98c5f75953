//! Which dirty and swap figures a diff's views show (the table, its
//! headline, the report's growth page): the full counts (DIRTY, SWAP)
//! where the diff has them, one process or a vmmap report; over several
//! processes, where those are withheld (model::summable), the figures
//! that add up, in `top`'s words: PSS DIRTY (PRIV DIRTY before Linux 6.0)
//! and SWAP PSS (SwapPss with the swapped shared memory it leaves out).

use memtally_core::analyze::diff::{Change, Diff};
use memtally_core::model::Figure;

/// One figure a diff's views show: its column header (`top`'s), the word
/// in a sentence, the figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DiffFigure {
    pub header: &'static str,
    pub word: &'static str,
    pub figure: Figure,
}

const DIRTY: [DiffFigure; 3] = [
    DiffFigure { header: "DIRTY", word: "dirty", figure: Figure::Dirty },
    DiffFigure { header: "PSS DIRTY", word: "PSS dirty", figure: Figure::PssDirty },
    DiffFigure { header: "PRIV DIRTY", word: "private dirty", figure: Figure::PrivateDirty },
];

const SWAP: [DiffFigure; 2] = [
    DiffFigure { header: "SWAP", word: "swap", figure: Figure::Swap },
    DiffFigure { header: "SWAP PSS", word: "swap PSS", figure: Figure::SwapCounted },
];

/// The first of `choices` whose change the totals know, else the first.
fn first_known(totals: &Change, choices: &[DiffFigure]) -> DiffFigure {
    choices.iter().copied().find(|c| totals.delta(c.figure).is_some()).unwrap_or(choices[0])
}

/// The dirty figure of `d`'s views.
pub(crate) fn dirty(d: &Diff) -> DiffFigure {
    first_known(&d.totals, &DIRTY)
}

/// The swap figure of `d`'s views.
pub(crate) fn swap(d: &Diff) -> DiffFigure {
    first_known(&d.totals, &SWAP)
}

/// `diff`'s table columns: Δ DIRTY or Δ PSS DIRTY, Δ PSS, Δ RSS, Δ SWAP
/// or Δ SWAP PSS, Δ VIRTUAL.
pub(crate) fn table(d: &Diff) -> [(String, Figure); 5] {
    let (dirty, swap) = (self::dirty(d), self::swap(d));
    [
        (format!("Δ {}", dirty.header), dirty.figure),
        ("Δ PSS".into(), Figure::Pss),
        ("Δ RSS".into(), Figure::Rss),
        (format!("Δ {}", swap.header), swap.figure),
        ("Δ VIRTUAL".into(), Figure::Size),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use memtally_core::model::Sizes;

    fn change(before: Sizes, after: Sizes) -> Change {
        Change {
            key: "total".into(),
            label: "total".into(),
            pid: None,
            before: Some(before),
            after: Some(after),
        }
    }

    /// Over several processes the full counts are withheld: the views
    /// show PSS DIRTY and SWAP PSS (issue 37, item 2); one process keeps
    /// DIRTY and SWAP; a kernel without Pss_Dirty gives PRIV DIRTY.
    #[test]
    fn the_full_counts_where_known_else_the_proportional_ones() {
        let whole = |d: u64| Sizes {
            shared_dirty: Some(0),
            private_dirty: Some(d),
            pss_dirty: Some(d),
            swap: Some(8192),
            swap_pss: Some(4096),
            ..Default::default()
        };
        let one = change(whole(4096), whole(8192));
        assert_eq!(first_known(&one, &DIRTY).figure, Figure::Dirty);
        assert_eq!(first_known(&one, &SWAP).figure, Figure::Swap);
        let several = change(whole(4096).over_processes(2), whole(8192).over_processes(2));
        let dirty = first_known(&several, &DIRTY);
        assert_eq!((dirty.header, several.delta(dirty.figure)), ("PSS DIRTY", Some(4096)));
        let swap = first_known(&several, &SWAP);
        assert_eq!((swap.header, several.delta(swap.figure)), ("SWAP PSS", Some(0)));
        let mut old = several.clone();
        for s in [old.before.as_mut().unwrap(), old.after.as_mut().unwrap()] {
            s.pss_dirty = None;
        }
        assert_eq!(first_known(&old, &DIRTY).header, "PRIV DIRTY");
    }
}
