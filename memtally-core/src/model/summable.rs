//! The one rule for sums over processes: every figure added up across
//! processes is one that divides a shared page among them (PSS,
//! Pss_Dirty, SwapPss and the Pss_* parts), or counts only pages no other
//! process maps (Private_Clean, Private_Dirty, and so USS; Private_Hugetlb,
//! while the hugetlb total, which needs Shared_Hugetlb too, is absent), or is already counted once
//! across processes (GPU). A full-count figure (RSS, Shared_*, Swap,
//! Anonymous, the huge page and KSM counts, the status footprint) counts
//! a page shared by N processes N times: it stands per process only, and
//! a sum over several processes leaves it out (`None`, never a total that
//! is too big). The virtual size is kept: it is address space, not memory.

use super::sizes::{Figure, Sizes};

/// The figures a sum over processes keeps, beside `size`; the derived
/// ones built from them (`uss`, `footprint_pss`) follow.
pub(crate) const SUMMABLE: &[Figure] = &[
    Figure::Size,
    Figure::Pss,
    Figure::PssDirty,
    Figure::PssAnon,
    Figure::PssFile,
    Figure::PssShmem,
    Figure::SwapPss,
    Figure::ShmemSwap,
    Figure::PrivateClean,
    Figure::PrivateDirty,
    Figure::PrivateHugetlb,
    Figure::Gpu,
];

impl Sizes {
    /// Leaves only what adds up across processes (see the module): for a
    /// sum over more than one process.
    pub(crate) fn keep_summable(&mut self) {
        let kept = SUMMABLE.iter().map(|&f| (f, self.field(f))).collect::<Vec<_>>();
        *self = Sizes::default();
        for (f, v) in kept {
            if let Some(slot) = self.field_mut(f) {
                *slot = v;
            }
        }
    }

    /// `self` as a sum over `processes` processes: whole for one, only
    /// the summable figures for more.
    pub fn over_processes(mut self, processes: usize) -> Sizes {
        if processes > 1 {
            self.keep_summable();
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether a sum of `figure` over several processes means something.
    fn is_summable(figure: Figure) -> bool {
        match figure {
            Figure::Uss
            | Figure::FootprintPss
            | Figure::FootprintPssShmem
            | Figure::SwapCounted => true,
            f => SUMMABLE.contains(&f),
        }
    }
    use crate::model::Named;

    #[test]
    fn a_sum_over_processes_keeps_the_proportional_and_private_figures_only() {
        let mut s = Sizes::default();
        for f in Figure::ALL {
            if let Some(slot) = s.field_mut(*f) {
                *slot = Some(4096);
            }
        }
        let whole = s.clone().over_processes(1);
        assert_eq!(whole, s, "one process keeps every figure");
        let sum = s.over_processes(2);
        for f in Figure::ALL {
            let kept = sum.figure(*f).is_some();
            assert_eq!(kept, is_summable(*f), "{}", f.name());
        }
        assert_eq!(sum.uss(), Some(8192));
        assert_eq!(sum.footprint_pss(), Some(8192));
        assert_eq!(sum.dirty(), None, "shared + private dirty counts shared pages in full");
    }
}
