//! What `memtally report` draws, as data: the snapshot's processes (and
//! those listed but not readable in detail) put into groups by program,
//! user or cgroup, each group's figures summed here, once, so the page
//! only lays out and draws what this hands it.

use std::collections::HashMap;

use serde::Serialize;

use crate::analyze::cgroup::CgroupView;
use crate::analyze::fault_report::FaultReport;
use crate::analyze::gpu::GpuReport;
use crate::analyze::machine::Machine;
use crate::analyze::plot::SeriesPlot;
use crate::analyze::trend::Trend;
use crate::analyze::vmmap::VmmapReport;
use crate::model::snapshot::{SnapProcess, Snapshot};
use crate::model::{MemInfo, Note, ProcInfo, ProcMemory, Sizes};

crate::model::named::named! {
    /// How the report's treemap groups processes under the machine.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub enum ReportBy {
        #[default]
        Program => "program", "processes of one program, as top groups them by program";
        Cgroup => "cgroup", "processes of one cgroup (a live read or a recorded tree only)";
        User => "user", "processes of one user";
    }
}

/// A process that was listed but could not be read in detail: only its
/// status figures (RSS) are known. The report draws it as a box of its
/// own, marked, rather than leaving a gap.
#[derive(Debug, Clone, Serialize)]
pub struct Unread {
    /// The process ID.
    pub pid: u32,
    /// Short name.
    pub comm: String,
    /// The command line, or `[comm]`.
    pub command: String,
    /// The owner's name, when known.
    pub user: Option<String>,
    /// Its cgroup, when read.
    pub cgroup: Option<String>,
    /// What status gave (RSS); no PSS.
    pub sizes: Sizes,
}

/// One group of the treemap: its processes and their summed figures.
#[derive(Debug, Clone, Serialize)]
pub struct ReportGroup {
    /// The program, user or cgroup path.
    pub key: String,
    /// Indices into the snapshot's processes.
    pub processes: Vec<usize>,
    /// Indices into the report's unread processes.
    pub unread: Vec<usize>,
    /// The snapshot processes' totals added up (the unread ones have no
    /// PSS; their RSS is in [`ReportGroup::unread_rss`]).
    pub totals: Sizes,
    /// Σ RSS of the unread processes.
    pub unread_rss: u64,
}

/// The program of a snapshot process, as `top --by program` names it:
/// the basename of the command's first word, else `comm`.
pub fn program(p: &SnapProcess) -> String {
    program_of(&p.command, &p.comm)
}

fn program_of(command: &str, comm: &str) -> String {
    match command.split(' ').next().filter(|w| !w.is_empty() && !w.starts_with('[')) {
        Some(first) => first.rsplit('/').next().unwrap_or(first).to_string(),
        None => comm.to_string(),
    }
}

/// The groups, largest PSS first (then by key). `cgroups` gives each PID's
/// cgroup where it was read (live); a process without one goes under
/// `(unknown)`.
pub fn groups(
    snapshot: &Snapshot,
    unread: &[Unread],
    by: ReportBy,
    cgroups: &HashMap<u32, String>,
) -> Vec<ReportGroup> {
    let unknown = || "(unknown)".to_string();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut out: Vec<ReportGroup> = Vec::new();
    let mut slot = |key: String, out: &mut Vec<ReportGroup>| -> usize {
        *index.entry(key.clone()).or_insert_with(|| {
            out.push(ReportGroup {
                key,
                processes: Vec::new(),
                unread: Vec::new(),
                totals: Sizes::default(),
                unread_rss: 0,
            });
            out.len() - 1
        })
    };
    for (i, p) in snapshot.processes.iter().enumerate() {
        let key = match by {
            ReportBy::Program => program(p),
            ReportBy::User => p.user.clone().unwrap_or_else(unknown),
            ReportBy::Cgroup => {
                p.pid.and_then(|pid| cgroups.get(&pid).cloned()).unwrap_or_else(unknown)
            }
        };
        let g = slot(key, &mut out);
        out[g].processes.push(i);
        out[g].totals.add(&p.totals);
    }
    for (i, u) in unread.iter().enumerate() {
        let key = match by {
            ReportBy::Program => program_of(&u.command, &u.comm),
            ReportBy::User => u.user.clone().unwrap_or_else(unknown),
            ReportBy::Cgroup => u.cgroup.clone().unwrap_or_else(unknown),
        };
        let g = slot(key, &mut out);
        out[g].unread.push(i);
        out[g].unread_rss += u.sizes.rss.unwrap_or(0);
    }
    out.sort_by(|a, b| b.totals.pss.cmp(&a.totals.pss).then(a.key.cmp(&b.key)));
    out
}

/// The machine picture of a snapshot read back: its recorded meminfo
/// beside its processes' totals, through the same builder `top` and
/// `machine` use. `None` when the snapshot recorded no meminfo.
pub(crate) fn machine_of(snapshot: &Snapshot) -> Option<Machine> {
    let fields = snapshot.machine.clone()?;
    let meminfo = MemInfo { fields, counts: Default::default() };
    let processes: Vec<ProcMemory> = snapshot
        .processes
        .iter()
        .map(|p| ProcMemory {
            info: ProcInfo {
                pid: p.pid.unwrap_or(0),
                ppid: p.ppid.unwrap_or(0),
                comm: p.comm.clone(),
                cmdline: p.command.clone(),
                program: program(p),
                ..ProcInfo::default()
            },
            source: p.source,
            sizes: p.totals.clone(),
        })
        .collect();
    crate::analyze::machine::machine(&meminfo, &processes)
}

/// Everything a report page draws.
#[derive(Debug)]
#[non_exhaustive]
pub struct Report {
    /// The snapshot; its `notes` are those of the file it was read from
    /// (empty when read live: then [`Report::notes`] holds them).
    pub snapshot: Snapshot,
    /// What the figures leave out (live reads).
    pub notes: Vec<Note>,
    /// Processes listed but not readable in detail (live reads).
    pub unread: Vec<Unread>,
    /// The machine's waterfall, when every process was read (live) or the
    /// snapshot recorded meminfo.
    pub machine: Option<Machine>,
    /// How the treemap groups processes.
    pub by: ReportBy,
    /// The groups, largest first.
    pub groups: Vec<ReportGroup>,
    /// Whether the waterfall was rebuilt from a snapshot file's meminfo
    /// (its lines then rest on the snapshot's processes alone).
    pub machine_from_file: bool,
    /// `gpu`'s view of the selection, read when `top` found GPU memory
    /// (live reads); the error's text when that read failed.
    pub gpu: Option<std::result::Result<GpuReport, String>>,
    /// `cgroup`'s view of every cgroup, read when grouping by cgroup
    /// (live reads); the error's text when that read failed.
    pub cgroups: Option<std::result::Result<CgroupView, String>>,
    /// `vmmap`'s view (footprint, region type by purge state) of a saved
    /// vmmap text read back.
    pub vmmap: Option<VmmapReport>,
    /// Processes in the snapshot by their rollup totals only (no
    /// categories, no mappings): those past `live`'s `detail`.
    pub summarized: usize,
    /// The largest programs by PSS, at most [`HEADLINE_PROGRAMS`], as
    /// `top --by program` groups them (whatever `by` is): the page's
    /// headline names them.
    pub programs: Vec<ReportGroup>,
    /// The page faults recorded for the page (`report --faults`, or read
    /// back with `--faults-input`): which code filled the boxes.
    pub faults: Option<FaultReport>,
    /// The regions of a document read back that the page cannot draw
    /// (`report --input` of saved vmmap text or a snapshot file past the
    /// page's budget), by process: left out of the snapshot, their
    /// treemap figures summed. A process listed here is one whose regions
    /// the page does not embed; empty when the read kept every region.
    pub regions_left: Vec<RegionsLeft>,
}

/// What the page can show of a document's regions: it sets how many
/// regions `report --input` keeps of saved vmmap text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRoom {
    /// The most treemap boxes the page draws.
    pub boxes: usize,
    /// The mappings a process's detail table lists.
    pub largest: usize,
    /// The bytes of snapshot JSON the page embeds whole: past them it
    /// leaves out the mappings.
    pub embedded: u64,
}

/// Regions of one process that a report read and did not keep: the
/// page would fold them into its "N smaller" boxes and leave them out of
/// its embedded snapshot, so only their count and treemap figures stay.
#[derive(Debug, Clone, Default)]
pub struct RegionsLeft {
    /// The process, an index into the snapshot's processes.
    pub process: usize,
    /// How many regions the process has, kept and left out.
    pub regions: usize,
    /// By category key (a vmmap region type), those left out.
    pub by_category: Vec<(String, BoxesLeft)>,
}

/// Treemap boxes left out, summed as the page folds them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BoxesLeft {
    /// How many.
    pub regions: usize,
    /// Their areas (for vmmap, each region's footprint).
    pub value: u64,
    /// Their dirty bytes, where every one has them.
    pub dirty: Option<u64>,
}

impl BoxesLeft {
    /// Adds one box of `value` and `dirty` bytes.
    pub fn add(&mut self, value: u64, dirty: Option<u64>) {
        self.dirty = match self.regions {
            0 => dirty,
            _ => self.dirty.zip(dirty).map(|(a, b)| a.saturating_add(b)),
        };
        self.regions += 1;
        self.value = self.value.saturating_add(value);
    }
}

impl Report {
    /// How many regions `p`, one of the snapshot's processes, has: those
    /// kept and those left out ([`Report::regions_left`]).
    pub fn regions_of(&self, p: &SnapProcess) -> usize {
        let mut left = self.regions_left.iter();
        let left = left
            .find(|l| self.snapshot.processes.get(l.process).is_some_and(|q| std::ptr::eq(q, p)));
        left.map_or(p.regions.len(), |l| l.regions)
    }

    /// Whether process `i`'s regions were left out of what the page
    /// embeds when read ([`Report::regions_left`]).
    pub fn regions_cut(&self, i: usize) -> bool {
        self.regions_left.iter().any(|l| l.process == i)
    }

    /// The boxes left out of category `key` of process `i`, if any.
    pub fn boxes_left(&self, i: usize, key: &str) -> Option<BoxesLeft> {
        let l = self.regions_left.iter().find(|l| l.process == i)?;
        l.by_category.iter().find(|(k, _)| k == key).map(|(_, b)| *b)
    }
}

/// How many programs the page's headline names.
pub const HEADLINE_PROGRAMS: usize = 3;

/// A watch series read back for its page: the total and the processes
/// that grew most (as `plot` picks them), each with the line `watch`
/// fits to it for its verdict.
#[derive(Debug)]
#[non_exhaustive]
pub struct SeriesReport {
    /// The lines, as `plot` draws them.
    pub plot: SeriesPlot,
    /// The fitted trend of each of `plot.totals`, then of `plot.processes`;
    /// `None` for a line of fewer than two samples.
    pub trends: Vec<Option<Trend>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::snapshot::SnapshotKind;
    use crate::model::SizeSource;

    fn proc(pid: u32, command: &str, user: &str, pss: u64) -> SnapProcess {
        SnapProcess {
            pid: Some(pid),
            ppid: None,
            user: Some(user.into()),
            comm: "c".into(),
            command: command.into(),
            source: SizeSource::Smaps,
            totals: Sizes { pss: Some(pss), ..Default::default() },
            categories: vec![],
            regions: vec![],
            purgeable: vec![],
            physical_footprint: None,
            exclusive: None,
        }
    }

    #[test]
    fn groups_add_up_their_processes_largest_first() {
        let snap = Snapshot::of(
            vec![
                proc(1, "/usr/bin/a --x", "root", 10),
                proc(2, "/opt/b", "me", 50),
                proc(3, "a", "me", 20),
            ],
            SnapshotKind::Linux,
        );
        let unread = vec![Unread {
            pid: 9,
            comm: "b".into(),
            command: "/bin/b".into(),
            user: None,
            cgroup: None,
            sizes: Sizes { rss: Some(7), ..Default::default() },
        }];
        let g = groups(&snap, &unread, ReportBy::Program, &HashMap::new());
        let keys: Vec<(&str, Option<u64>, u64)> =
            g.iter().map(|g| (g.key.as_str(), g.totals.pss, g.unread_rss)).collect();
        assert_eq!(keys, [("b", Some(50), 7), ("a", Some(30), 0)]);
        assert_eq!(g[1].processes, [0, 2]);
        let by_user = groups(&snap, &unread, ReportBy::User, &HashMap::new());
        let keys: Vec<&str> = by_user.iter().map(|g| g.key.as_str()).collect();
        assert_eq!(keys, ["me", "root", "(unknown)"]);
    }
}
