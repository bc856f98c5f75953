//! A snapshot: everything memtally knew about a selection of processes at
//! one moment, that `diff`, `report` and `plot` read back. Linux snapshots
//! come from `memtally snapshot` (a file of JSON Lines, `model::snap_lines`);
//! a macOS vmmap report becomes a snapshot of one process whose categories
//! are region types. Serialized whole, a [`Snapshot`] is one JSON object
//! (format 1): what a report page embeds, and what snapshot files were
//! before format 2.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use super::group::{Group, Grouper};
use super::pages::Exclusive;
use super::process::SizeSource;
use super::region::Purge;
use super::sizes::Sizes;
use super::snap_pages::{SnapExact, SnapWss};
use super::vmmap::{Document, SummaryRow, VRegion, MAX_TYPES, OTHER_TYPES};

/// The format of a snapshot as one JSON object, written in its
/// `memtally_snapshot` (a file of JSON Lines is format 2).
pub(crate) const DOCUMENT_VERSION: u32 = 1;

/// What a selection of processes held at one moment: their totals,
/// categories and regions, in bytes (docs/json.md): what `diff`, `report`
/// and `plot` read back.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Snapshot {
    /// Format version; its presence marks the document as a snapshot.
    pub memtally_snapshot: u32,
    /// What was read: Linux processes or a vmmap report.
    pub kind: SnapshotKind,
    /// When it was taken, RFC 3339 UTC; null when unknown (vmmap text).
    pub time: Option<String>,
    /// Seconds since the Unix epoch, for arithmetic.
    pub unix_time: Option<f64>,
    /// The host name, when known.
    pub host: Option<String>,
    /// Kernel release (Linux) or OS version (vmmap header).
    pub kernel: Option<String>,
    /// The /proc tree read (`/proc`, or a recording).
    pub proc_root: Option<String>,
    /// The processes, as read.
    pub processes: Vec<SnapProcess>,
    /// Sum over every process.
    pub totals: Sizes,
    /// Categories (Linux) or region types (vmmap), summed over processes.
    pub categories: Vec<Group>,
    /// `/proc/meminfo` in bytes, by meminfo name.
    #[serde(default)]
    pub machine: Option<std::collections::BTreeMap<String, u64>>,
    /// Things the reader must know (processes that could not be read).
    #[serde(default)]
    pub notes: Vec<String>,
    /// With `snapshot --exact`: how and when the exclusive figures were
    /// read, and the selection's own; absent otherwise (and in snapshots
    /// written before there were any).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exact: Option<SnapExact>,
    /// With `snapshot --wss DURATION`: the working-set measurement's
    /// method and interval (the figures are size keys); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wss: Option<SnapWss>,
}

/// When and where a snapshot was taken: the keys a snapshot file's first
/// line and a [`Snapshot`] share.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Moment {
    /// When it was taken, RFC 3339 UTC.
    pub time: Option<String>,
    /// Seconds since the Unix epoch, for arithmetic.
    pub unix_time: Option<f64>,
    /// The host name, when known.
    pub host: Option<String>,
    /// Kernel release.
    pub kernel: Option<String>,
    /// The /proc tree read (`/proc`, or a recording).
    pub proc_root: Option<String>,
    /// `/proc/meminfo` in bytes, by meminfo name.
    pub machine: Option<std::collections::BTreeMap<String, u64>>,
}

impl Moment {
    /// Puts when and where into `snap`.
    pub(crate) fn stamp(self, snap: &mut Snapshot) {
        snap.time = self.time;
        snap.unix_time = self.unix_time;
        snap.host = self.host;
        snap.kernel = self.kernel;
        snap.proc_root = self.proc_root;
        snap.machine = self.machine;
    }

    /// Takes when and where out of `snap`.
    pub(crate) fn take(snap: &mut Snapshot) -> Moment {
        Moment {
            time: snap.time.take(),
            unix_time: snap.unix_time.take(),
            host: snap.host.take(),
            kernel: snap.kernel.take(),
            proc_root: snap.proc_root.take(),
            machine: snap.machine.take(),
        }
    }
}

/// What a snapshot holds: Linux processes, or one process of a vmmap
/// report (whose categories are region types). Two snapshots compare only
/// when they are of one kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum SnapshotKind {
    /// Read from `/proc` (or a `show` document).
    Linux,
    /// Read from macOS `vmmap` output.
    Vmmap,
}

impl SnapshotKind {
    /// The name as in JSON: `linux`, `vmmap`.
    pub fn name(self) -> &'static str {
        match self {
            SnapshotKind::Linux => "linux",
            SnapshotKind::Vmmap => "vmmap",
        }
    }
}

/// One process of a snapshot.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SnapProcess {
    /// The process ID; `None` when the source does not give one (vmmap text
    /// without a `Process:` line).
    pub pid: Option<u32>,
    /// The parent's process ID, when recorded.
    #[serde(default)]
    pub ppid: Option<u32>,
    /// The owner's name, when recorded.
    #[serde(default)]
    pub user: Option<String>,
    /// Short name (`comm`, vmmap's process name); empty when unknown.
    #[serde(default)]
    pub comm: String,
    /// The command line (or the executable path for vmmap).
    pub command: String,
    /// Where the figures came from (`smaps`, `maps`, `vmmap`).
    pub source: SizeSource,
    /// The process's totals (on Linux with the rollup's exact PSS, where it was read).
    pub totals: Sizes,
    /// Its regions added up by category (Linux) or region type (vmmap).
    pub categories: Vec<Group>,
    /// Every region, in file order.
    pub regions: Vec<SnapRegion>,
    /// vmmap input without region lines (`vmmap -summary`): each summary
    /// row's purgeable columns, which the categories' sizes cannot hold.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub purgeable: Vec<SnapPurgeable>,
    /// vmmap's `Physical footprint:` header, bytes; `None` on Linux.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub physical_footprint: Option<u64>,
    /// With `snapshot --exact`: what the process alone gives back when it
    /// ends (see [`Snapshot::exact`]); absent where its pages were not
    /// read, or not asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclusive: Option<Exclusive>,
}

/// A vmmap summary row's purgeable columns, bytes as printed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SnapPurgeable {
    /// The row's REGION TYPE (a category key of the process).
    pub region_type: String,
    /// VOLATILE: purgeable bytes the system may discard (reclaimable).
    pub volatile: Option<u64>,
    /// NONVOL: purgeable bytes marked non-volatile (footprint).
    pub nonvol: Option<u64>,
    /// EMPTY: purgeable bytes already discarded.
    pub empty: Option<u64>,
}

/// One region of a snapshot process: where it is, what it is, its sizes.
// Written, and its schema made, from the snapshot's region keys, as
// `snapshot` streams its regions (`region_json`: its `Serialize` and
// `JsonSchema` are there, beside the keys);
// read back by a hand-written `Deserialize` (model/snap_region_de.rs)
// that takes the same objects the derived one did, without buffering.
#[derive(Debug, Clone)]
pub struct SnapRegion {
    /// First address; `None` for placeholder ranges.
    pub start: Option<u64>,
    /// One past the last address; `None` for placeholder ranges.
    pub end: Option<u64>,
    /// Permissions as the source prints them (`rw-p`, `rw-`).
    pub perms: String,
    /// Linux pathname or vmmap region detail; `None` when there is none.
    pub path: Option<String>,
    /// The category key (Linux, `heap`) or region type (vmmap, `MALLOC_SMALL`).
    pub category: String,
    /// vmmap's REGION TYPE; `None` on Linux.
    pub region_type: Option<String>,
    /// vmmap's purge code (`N`, `V`, `E`, `-`); `None` on Linux.
    pub purge: Option<Purge>,
    /// Linux: the file offset of the mapping.
    pub offset: Option<u64>,
    /// Linux: the inode of the backing file (0 when anonymous).
    pub inode: Option<u64>,
    /// Its sizes, flattened beside the other keys in JSON.
    pub sizes: Sizes,
}

impl Snapshot {
    /// A snapshot of `processes` of one `kind`, with
    /// their totals and categories summed; when, where and notes empty.
    pub(crate) fn of(processes: Vec<SnapProcess>, kind: SnapshotKind) -> Snapshot {
        let mut sums = Summing::default();
        for p in &processes {
            sums.add(p);
        }
        Snapshot { processes, ..sums.into_snapshot(kind) }
    }
}

impl SnapRegion {
    /// A vmmap region line's figures in the shared size vocabulary.
    pub(crate) fn vmmap_sizes(r: &VRegion<'_>) -> Sizes {
        Sizes { size: r.vsize, rss: r.resident, dirty: r.dirty, swap: r.swap, ..Default::default() }
    }
}

/// The categories of a vmmap snapshot's regions: their region types, the
/// first [`MAX_TYPES`] apart and the rest as one, [`OTHER_TYPES`]. Ask
/// each region's [`category`](Self::category) as it is read.
#[derive(Debug, Default)]
pub(crate) struct VmmapTypes {
    kept: HashSet<String>,
    folded: u64,
}

impl VmmapTypes {
    /// The category of a region of type `region_type`: the type itself,
    /// or [`OTHER_TYPES`] when it is past the first [`MAX_TYPES`] (counted).
    pub(crate) fn category<'a>(&mut self, region_type: &'a str) -> &'a str {
        if self.kept.contains(region_type) {
            return region_type;
        }
        if self.kept.len() < MAX_TYPES {
            self.kept.insert(region_type.to_string());
            region_type
        } else {
            self.folded += 1;
            OTHER_TYPES
        }
    }
}

/// A summary-table row's figures in the shared size vocabulary.
fn summary_sizes(s: &SummaryRow) -> Sizes {
    Sizes {
        size: s.virtual_size,
        rss: s.resident,
        dirty: s.dirty,
        swap: s.swapped,
        ..Default::default()
    }
}

impl Snapshot {
    /// The snapshot of one vmmap report (saved text, or `vmmap --format
    /// json` read back): one process whose categories are its region types,
    /// so `diff` and `plot` serve macOS as they serve Linux. Where the report
    /// has no region lines (`vmmap -summary`, a crash report's `VM Region
    /// Summary`), the summary table gives the types. The regions were
    /// added up by category as they were read (`categories`, empty without
    /// region lines), their categories folded by one [`VmmapTypes`], which
    /// says how many were; `regions` are the ones kept (none, or a few
    /// `diff` lists, or those a report page can draw).
    pub(crate) fn of_vmmap_folded(
        doc: &Document,
        categories: Vec<Group>,
        regions: Vec<SnapRegion>,
        types: VmmapTypes,
    ) -> Snapshot {
        let read = !categories.is_empty();
        let categories: Vec<Group> = if !read {
            doc.summary
                .iter()
                .map(|s| Group {
                    key: s.region_type.clone(),
                    regions: s.count.unwrap_or(0) as usize,
                    sizes: summary_sizes(s),
                })
                .collect()
        } else {
            categories
        };
        let mut totals = Sizes::default();
        for c in &categories {
            totals.add(&c.sizes);
        }
        let purgeable = match !read {
            true => doc
                .summary
                .iter()
                .map(|s| SnapPurgeable {
                    region_type: s.region_type.clone(),
                    volatile: s.volatile,
                    nonvol: s.nonvol,
                    empty: s.empty,
                })
                .collect(),
            false => Vec::new(),
        };
        let h = &doc.header;
        let process = SnapProcess {
            pid: h.pid,
            ppid: None,
            user: None,
            comm: h.process.clone().unwrap_or_default(),
            command: h.path.clone().or_else(|| h.process.clone()).unwrap_or_default(),
            source: SizeSource::Vmmap,
            totals,
            categories,
            regions,
            purgeable,
            physical_footprint: h.physical_footprint,
            exclusive: None,
        };
        let mut snap = Snapshot::of(vec![process], SnapshotKind::Vmmap);
        snap.kernel = h.os_version.clone();
        if types.folded > 0 {
            snap.notes.push(format!(
                "more than {MAX_TYPES} region types: the {} region(s) of the types after the first {MAX_TYPES} are summed in one category, \"{OTHER_TYPES}\"",
                types.folded
            ));
        }
        if doc.diagnostics.unreadable > 0 || doc.diagnostics.elisions > 0 {
            snap.notes.push(format!(
                "partial: {} unreadable line(s), {} elision(s) in the report",
                doc.diagnostics.unreadable, doc.diagnostics.elisions
            ));
        }
        snap
    }
}

/// The whole snapshot's totals and categories, summed one process at a
/// time (a snapshot written as it is read keeps no process).
#[derive(Debug, Default)]
pub(crate) struct Summing {
    totals: Sizes,
    categories: Grouper,
    processes: usize,
}

impl Summing {
    pub(crate) fn add(&mut self, p: &SnapProcess) {
        self.totals.add(&p.totals);
        for g in &p.categories {
            self.categories.add_group(g);
        }
        self.processes += 1;
    }

    /// Adds bytes of swapped shared memory to the totals: the shares of
    /// processes added before they were known.
    pub(crate) fn add_shmem_swap(&mut self, bytes: u64) {
        let t = &mut self.totals.shmem_swap;
        *t = Some(t.unwrap_or(0).saturating_add(bytes));
    }

    /// A snapshot of one `kind` with these sums and no processes; when,
    /// where and notes empty.
    pub(crate) fn into_snapshot(self, kind: SnapshotKind) -> Snapshot {
        // Sums over several processes: the summable figures only (model::summable).
        let n = self.processes;
        Snapshot {
            memtally_snapshot: DOCUMENT_VERSION,
            kind,
            time: None,
            unix_time: None,
            host: None,
            kernel: None,
            proc_root: None,
            processes: Vec::new(),
            totals: self.totals.over_processes(n),
            categories: self
                .categories
                .into_groups()
                .into_iter()
                .map(|g| Group { sizes: g.sizes.over_processes(n), ..g })
                .collect(),
            machine: None,
            notes: Vec::new(),
            exact: None,
            wss: None,
        }
    }
}

#[cfg(test)]
impl SnapProcess {
    /// The regions added up by their `category`, first-seen order (as a
    /// reader sums them as they come).
    pub(crate) fn categories_of(regions: &[SnapRegion]) -> Vec<Group> {
        let mut g = Grouper::new();
        for r in regions {
            g.add_sizes(&r.category, 1, &r.sizes);
        }
        g.into_groups()
    }
}

impl SnapRegion {
    /// The region's identity (start, end, permissions, path) as 64 bits (`DefaultHasher::new()`:
    /// fixed keys, so the same within one run, where both sides of a diff
    /// are hashed): two regions that differ in it collide with a chance of
    /// about one in 2^64 per pair.
    pub fn id(&self) -> u64 {
        region_id(self.start, self.end, &self.perms, self.path.as_deref())
    }

    /// The name used for per-path grouping: path, else region type (its
    /// category: past the first [`MAX_TYPES`], the row it is summed in),
    /// else `[anonymous]`.
    pub(crate) fn path_key(&self) -> &str {
        let region_type = self.region_type.as_ref().map(|_| self.category.as_str());
        path_key_of(self.path.as_deref(), region_type)
    }
}

/// [`SnapRegion::id`] of a region with this identity (whoever holds its strings).
pub(crate) fn region_id(
    start: Option<u64>,
    end: Option<u64>,
    perms: &str,
    path: Option<&str>,
) -> u64 {
    // Fixed, so one build gives a region one identity in every run;
    // compared only within a run (never written), so no other build's
    // identities need to match. foldhash's quality hash: 64 well-mixed
    // bits, as SipHash's were, at a fraction of the cost.
    use std::hash::BuildHasher;
    foldhash::quality::FixedState::default().hash_one((start, end, perms, path))
}

/// [`SnapRegion::path_key`] of a region with this path and region type.
pub(crate) fn path_key_of<'a>(path: Option<&'a str>, region_type: Option<&'a str>) -> &'a str {
    // Borrowed: a digest groups every region of a file by it.
    path.filter(|p| !p.is_empty()).or(region_type).unwrap_or("[anonymous]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn region_sizes_round_trip_and_other_keys_stay_out() {
        let json = r#"{"start":4096,"end":8192,"perms":"rw-p","path":null,"category":"heap","offset":0,"inode":0,"rss":4096,"private_dirty":4096,"thp_eligible":"0"}"#;
        let r: SnapRegion = serde_json::from_str(json).unwrap();
        assert_eq!(r.sizes.rss, Some(4096));
        assert_eq!(r.sizes.private_dirty, Some(4096));
        assert_eq!(r.sizes.size, None);
        assert!(
            r.sizes.extra.is_empty(),
            "start/end/offset/inode are not sizes: {:?}",
            r.sizes.extra
        );
        let back: SnapRegion = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(back.sizes, r.sizes);
        assert_eq!(back.id(), r.id());
    }
}
