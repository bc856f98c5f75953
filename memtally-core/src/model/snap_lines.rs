//! A snapshot file (format 2): JSON Lines, one record a line, each
//! appended as the snapshot is read, so a reader takes one line at a time
//! and a writer holds no process (docs/json.md, "memtally snapshot").
//!
//! The first line is the [`SnapHead`]; then each process's regions, one
//! `{"region":…}` line each, followed by its `{"process":…}` line (its
//! identity, totals and categories, known once its regions are read); a
//! `{"dropped":…}` line takes back the regions just before it (a read
//! that did not stand: the process exited or exec'd meanwhile); the last
//! line is `{"end":…}`: the sums over every process, the notes, and the
//! figures of each process known only once every process was read.

use serde::{Deserialize, Serialize};

use super::group::Group;
use super::pages::Exclusive;
use super::process::SizeSource;
use super::sizes::Sizes;
use super::snap_pages::{SnapExact, SnapWss};
use super::snapshot::{Moment, SnapProcess, SnapRegion, Snapshot, SnapshotKind};

/// The format version a snapshot file's first line carries.
pub(crate) const LINES_VERSION: u32 = 2;

/// The first line: what was read, when and where.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SnapHead {
    /// The format version, `2`; its presence as the first key marks the file as a snapshot.
    pub memtally_snapshot: u32,
    /// What was read: Linux processes or a vmmap report.
    pub kind: SnapshotKind,
    /// When and where it was taken.
    #[serde(flatten)]
    pub moment: Moment,
    /// With `snapshot --wss DURATION`: the working-set measurement's method
    /// and interval (the figures are size keys of the processes' lines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wss: Option<SnapWss>,
}

/// Every line after the first: a record keyed by its kind. Read with the
/// region borrowed from the line (`R` = `RegionRef`), written and
/// described with [`SnapRegion`].
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum SnapLine<R> {
    /// A region of the process whose line follows its regions.
    Region(R),
    /// A process: who it is and its sums, after its regions.
    Process(SnapProcessLine),
    /// The regions since the last process line are no process's.
    Dropped(SnapDropped),
    /// The last line.
    End(SnapEnd),
}

/// A process, after its regions: everything of a Linux [`SnapProcess`]
/// but its regions and the figures only known once every process is read
/// ([`SnapEnd`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SnapProcessLine {
    /// The process ID.
    pub pid: Option<u32>,
    /// The parent's process ID.
    pub ppid: Option<u32>,
    /// The owner's name, or uid where it has none.
    pub user: Option<String>,
    /// Short name (`comm`).
    pub comm: String,
    /// The command line.
    pub command: String,
    /// Where the figures came from (`smaps`, `maps`).
    pub source: SizeSource,
    /// The process's totals, but `shmem_swap` ([`SnapEnd::shmem_swap`]).
    pub totals: Sizes,
    /// Its regions added up by category.
    pub categories: Vec<Group>,
}

/// The regions since the last process line, taken back.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SnapDropped {
    /// How many (every region line since the last process line).
    pub regions: u64,
}

/// The last line: sums over every process, what the snapshot leaves out,
/// and each process's figures known only once every process was read, in
/// the order of the process lines.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SnapEnd {
    /// How many process lines came before.
    pub processes: u64,
    /// Sum over every process (over several, the summable figures only).
    pub totals: Sizes,
    /// Categories summed over every process.
    pub categories: Vec<Group>,
    /// Things the reader must know (processes that could not be read).
    pub notes: Vec<String>,
    /// Each process's share of the selection's swapped shared memory
    /// (its totals' `shmem_swap`); null for a process read from maps.
    pub shmem_swap: Vec<Option<u64>>,
    /// With `snapshot --exact`: how and when the exclusive figures were read, and the selection's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exact: Option<SnapExact>,
    /// With `snapshot --exact`: each process's exclusive figure (null where its pages were not read).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclusive: Vec<Option<Exclusive>>,
}

impl SnapProcessLine {
    /// The line of `p`, and what it leaves to the end line (its share of
    /// swapped shared memory, its exclusive figure); its regions are dropped.
    pub(crate) fn of(p: SnapProcess) -> (SnapProcessLine, Option<u64>, Option<Exclusive>) {
        let mut totals = p.totals;
        let share = totals.shmem_swap.take();
        let line = SnapProcessLine {
            pid: p.pid,
            ppid: p.ppid,
            user: p.user,
            comm: p.comm,
            command: p.command,
            source: p.source,
            totals,
            categories: p.categories,
        };
        (line, share, p.exclusive)
    }

    /// The process of this line with `regions` (its late figures not yet in).
    pub(crate) fn into_process(self, regions: Vec<SnapRegion>) -> SnapProcess {
        SnapProcess {
            pid: self.pid,
            ppid: self.ppid,
            user: self.user,
            comm: self.comm,
            command: self.command,
            source: self.source,
            totals: self.totals,
            categories: self.categories,
            regions,
            purgeable: Vec::new(),
            physical_footprint: None,
            exclusive: None,
        }
    }
}

impl SnapEnd {
    /// The snapshot of `head`, `processes` (one per process line, in
    /// order) and this end, each process given its late figures; `None`
    /// when their number is not the one this line says.
    pub(crate) fn snapshot(
        self,
        head: SnapHead,
        mut processes: Vec<SnapProcess>,
    ) -> Option<Snapshot> {
        let n = processes.len();
        let counts = [self.processes as usize, self.shmem_swap.len()];
        if counts != [n, n] || !(self.exclusive.is_empty() || self.exclusive.len() == n) {
            return None;
        }
        for (p, share) in processes.iter_mut().zip(self.shmem_swap) {
            p.totals.shmem_swap = share;
        }
        for (p, exclusive) in processes.iter_mut().zip(self.exclusive) {
            p.exclusive = exclusive;
        }
        let mut snap = Snapshot {
            processes,
            totals: self.totals,
            categories: self.categories,
            notes: self.notes,
            exact: self.exact,
            wss: head.wss,
            ..Snapshot::of(Vec::new(), head.kind)
        };
        head.moment.stamp(&mut snap);
        Some(snap)
    }
}
