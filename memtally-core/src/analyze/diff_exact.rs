//! The exclusive figures of two snapshots taken with `--exact`: how what
//! each process (and the selection as a whole) gives back changed. Only
//! where both snapshots carry them: against one that does not, there is
//! nothing to compare, and a note says which lacks them (as for the
//! working-set figures of `--wss`, which the size keys' deltas carry).

use crate::model::pages::Exclusive;
use crate::model::snapshot::{SnapProcess, Snapshot};
use crate::model::{Note, Side, Status};

/// One process's (or the selection's) exclusive figure, before and after.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ExactChange {
    /// The process; `None` for the selection.
    pub pid: Option<u32>,
    /// Its command line, or `selection`.
    pub label: String,
    /// Whether the process was in the first snapshot, and in the second.
    pub present: (bool, bool),
    /// Its figure in the first snapshot; `None` where it was not there or
    /// its pages could not be read.
    pub before: Option<Exclusive>,
    /// Its figure in the second.
    pub after: Option<Exclusive>,
}

impl ExactChange {
    /// `after - before` of the exclusive bytes (`part` picks which: the
    /// whole, or its anonymous, swap, shared memory part). A side the
    /// process was not in counts as zero; a side that was read without a
    /// figure makes the change unknown.
    pub fn delta_of(&self, part: impl Fn(&Exclusive) -> u64) -> Option<i128> {
        let side = |present: bool, e: &Option<Exclusive>| match (present, e) {
            (false, _) => Some(0),
            (true, Some(e)) => Some(part(e)),
            (true, None) => None,
        };
        let b = side(self.present.0, &self.before)?;
        let a = side(self.present.1, &self.after)?;
        Some(a as i128 - b as i128)
    }

    /// The change of the exclusive bytes.
    pub fn delta(&self) -> Option<i128> {
        self.delta_of(|e| e.bytes)
    }

    /// Whether the process appeared, vanished or changed.
    pub fn status(&self) -> Status {
        Status::of(self.present.0, self.present.1)
    }
}

/// The exclusive figures' change between two snapshots.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ExactDiff {
    /// The selection as one group, before and after.
    pub selection: ExactChange,
    /// Processes whose figure changed by `min_delta` or more (or whose
    /// change is unknown), largest growth first.
    pub processes: Vec<ExactChange>,
}

/// The change of the exclusive figures of `a` and `b`, whose processes
/// `pairs` pairs (indices); `None`, with a note naming the side that
/// lacks them, unless both carry them.
pub(crate) fn exact_diff(
    a: &Snapshot,
    b: &Snapshot,
    pairs: &[(Option<usize>, Option<usize>)],
    min_delta: u64,
    notes: &mut Vec<Note>,
) -> Option<ExactDiff> {
    let (Some(ea), Some(eb)) = (&a.exact, &b.exact) else {
        if let Some(side) = lacking(a.exact.is_some(), b.exact.is_some()) {
            notes.push(Note::ExclusiveMissing { side });
        }
        return None;
    };
    let mut processes: Vec<ExactChange> = pairs
        .iter()
        .map(|&(ia, ib)| {
            let (pa, pb) = (ia.map(|i| &a.processes[i]), ib.map(|i| &b.processes[i]));
            let p: &SnapProcess = pb.or(pa).expect("a pair has a side");
            ExactChange {
                pid: p.pid,
                label: p.command.clone(),
                present: (pa.is_some(), pb.is_some()),
                before: pa.and_then(|p| p.exclusive),
                after: pb.and_then(|p| p.exclusive),
            }
        })
        .filter(|c| c.delta().is_none_or(|d| d.unsigned_abs() >= min_delta.max(1) as u128))
        .collect();
    processes.sort_by(|x, y| {
        let key = |c: &ExactChange| c.delta().map_or(i128::MIN, |d| d);
        key(y).cmp(&key(x)).then_with(|| x.pid.cmp(&y.pid))
    });
    let selection = ExactChange {
        pid: None,
        label: "selection".into(),
        present: (true, true),
        before: Some(ea.selection),
        after: Some(eb.selection),
    };
    Some(ExactDiff { selection, processes })
}

/// A note when one snapshot has a working-set measurement and the other
/// none: their `touched`, `working_set` and `cold` changes are then
/// unknown (null), and the note says which side lacks them.
pub(crate) fn working_set_note(a: &Snapshot, b: &Snapshot, notes: &mut Vec<Note>) {
    if let Some(side) = lacking(a.wss.is_some(), b.wss.is_some()) {
        notes.push(Note::WorkingSetMissing { side });
    }
}

/// The side that lacks what the other has; `None` where both or neither have it.
fn lacking(first: bool, second: bool) -> Option<Side> {
    match (first, second) {
        (false, true) => Some(Side::First),
        (true, false) => Some(Side::Second),
        (true, true) | (false, false) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(present: (bool, bool), before: Option<u64>, after: Option<u64>) -> ExactChange {
        let ex = |b: u64| Exclusive { bytes: b, ..Exclusive::default() };
        ExactChange {
            pid: Some(1),
            label: "x".into(),
            present,
            before: before.map(ex),
            after: after.map(ex),
        }
    }

    #[test]
    fn a_side_without_the_process_is_zero_and_one_unread_is_unknown() {
        assert_eq!(change((true, true), Some(4096), Some(12288)).delta(), Some(8192));
        assert_eq!(change((false, true), None, Some(4096)).delta(), Some(4096));
        assert_eq!(change((true, false), Some(4096), None).delta(), Some(-4096));
        assert_eq!(change((true, true), None, Some(4096)).delta(), None);
        assert_eq!(change((false, true), None, Some(4096)).status(), Status::Appeared);
    }
}
