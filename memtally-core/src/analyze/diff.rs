//! What changed between two snapshots: per process, per category (or
//! vmmap region type), per path, and which regions appeared or vanished.
//! Growth of dirty memory comes first: that is what leaks look like.

use std::collections::HashMap;

pub use crate::analyze::diff_regions::unmatched;
use crate::analyze::diff_regions::{match_processes, shown, RegionsLeft};
use crate::analyze::vmmap::{footprint_diff, footprint_diff_of, TypeSides};
use crate::model::sizes::ROUNDED_PER_MAPPING;
use crate::model::snap_digest::{Digest, RegionSum};
use crate::model::snapshot::{SnapRegion, Snapshot, SnapshotKind};
use crate::model::{Figure, Group, Named, Note, Side, Sizes, Status};

/// A figure whose change `diff` compares and sorts by, largest growth first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiffSort(pub Figure);

/// The figures compared: rows sort by them and
/// [`DiffOptions::min_delta`] reads them.
impl Named for DiffSort {
    const ALL: &'static [DiffSort] = &[
        DiffSort(Figure::Dirty),
        DiffSort(Figure::PrivateDirty),
        DiffSort(Figure::SharedDirty),
        DiffSort(Figure::Pss),
        DiffSort(Figure::Rss),
        DiffSort(Figure::Uss),
        DiffSort(Figure::Swap),
        DiffSort(Figure::SwapPss),
        DiffSort(Figure::Size),
        // Last, after the columns CSV readers knew before them: the dirty
        // figure that adds up across processes.
        DiffSort(Figure::PssDirty),
    ];

    fn name(self) -> &'static str {
        self.0.name()
    }

    fn help(self) -> &'static str {
        self.0.help()
    }
}

/// One thing seen before, after, or both.
#[derive(Debug, Clone)]
pub struct Change {
    /// Stable key: the PID (the command when there is none), the category
    /// key or region type, the path.
    pub key: String,
    /// What a person reads: the command, the category label, the path.
    pub label: String,
    /// The process, for process rows.
    pub pid: Option<u32>,
    /// Its sizes in the first snapshot; `None` when it was not there.
    pub before: Option<Sizes>,
    /// Its sizes in the second snapshot; `None` when it is not there.
    pub after: Option<Sizes>,
}

impl Change {
    /// `after - before` of a figure. A side that did not exist counts as
    /// zero; a figure one side does not know makes the delta unknown.
    pub fn delta(&self, figure: Figure) -> Option<i128> {
        self.delta_by(|s| s.figure(figure))
    }

    /// [`Change::delta`] of a size key this build does not know.
    pub fn delta_extra(&self, name: &str) -> Option<i128> {
        self.delta_by(|s| s.extra_named(name))
    }

    fn delta_by(&self, value: impl Fn(&Sizes) -> Option<u64>) -> Option<i128> {
        let side = |s: &Option<Sizes>| match s {
            None => Some(Some(0)),
            Some(s) => Some(value(s)),
        };
        match (side(&self.before)?, side(&self.after)?) {
            (Some(b), Some(a)) if self.before.is_some() || self.after.is_some() => {
                Some(a as i128 - b as i128)
            }
            _ => None,
        }
    }

    /// Whether it appeared, vanished or changed.
    pub fn status(&self) -> Status {
        Status::of(self.before.is_some(), self.after.is_some())
    }

    /// The largest absolute change among the compared figures.
    pub(crate) fn largest(&self) -> u128 {
        DiffSort::ALL
            .iter()
            .filter_map(|f| self.delta(f.0))
            .map(i128::unsigned_abs)
            .max()
            .unwrap_or(0)
    }
}

/// A region that exists on one side only.
#[derive(Debug, Clone)]
pub struct RegionChange {
    /// The process it belongs to.
    pub pid: Option<u32>,
    /// True when only the second snapshot has it, false when only the first.
    pub appeared: bool,
    /// The region, as that snapshot has it.
    pub region: SnapRegion,
}

/// A vmmap region in both reports whose purgeable state changed (`N` ->
/// `V`: the application marked it volatile; `V` -> `E`: the system
/// discarded it; `E` -> `N`: made non-volatile again, refilled).
#[derive(Debug, Clone)]
pub struct PurgeChange {
    /// The process it belongs to.
    pub pid: Option<u32>,
    /// The region in the first report.
    pub before: SnapRegion,
    /// The region in the second report.
    pub after: SnapRegion,
}

impl PurgeChange {
    /// `N -> V` and the like (`-` when a side has no `PURGE=`).
    pub fn states(&self) -> (&'static str, &'static str) {
        let code = |r: &SnapRegion| r.purge.unwrap_or_default().code();
        (code(&self.before), code(&self.after))
    }
}

/// What changed between two snapshots. The process, category and path
/// rows are sorted as [`DiffOptions::sort`] says; every list is cut by
/// [`DiffOptions::min_delta`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Diff {
    /// The totals of every process, before and after.
    pub totals: Change,
    /// Processes, paired by PID and name.
    pub processes: Vec<Change>,
    /// Categories (Linux) or region types (vmmap).
    pub categories: Vec<Change>,
    /// Regions added up by path (or region type, or `[anonymous]`).
    pub paths: Vec<Change>,
    /// Regions of processes in both snapshots that exist on one side only,
    /// largest first: at most [`DiffOptions::regions`].
    pub regions: Vec<RegionChange>,
    /// Those past [`DiffOptions::regions`], counted and summed; `None`
    /// when every one is listed.
    pub regions_left: Option<RegionsLeft>,
    /// vmmap regions in both reports whose purge state changed, largest
    /// first (empty for Linux snapshots).
    pub purge_changes: Vec<PurgeChange>,
    /// Two vmmap reports of one process each: their footprint and
    /// reclaimable memory before and after (a purge flip moves them where
    /// the dirty figures do not), overall and per type.
    pub vmmap: Option<crate::analyze::vmmap::FootprintDiff>,
    /// Both snapshots taken with `--exact`: how what each process gives
    /// back changed (a note says which side lacks them otherwise).
    pub exact: Option<crate::analyze::diff_exact::ExactDiff>,
    /// Seconds between the snapshots, when both say when they were taken.
    pub seconds: Option<f64>,
    /// Where a snapshot's stored totals disagree with its own regions (an
    /// edited or damaged file): the process and total rows then use the
    /// regions' sums, and each such process is named here.
    pub notes: Vec<Note>,
}

/// Options that shape the result. Built from `default()` and the `with_*` setters.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DiffOptions {
    /// Sort rows by the delta of these figures, largest growth first.
    pub sort: Vec<DiffSort>,
    /// Hide rows whose largest change is below this many bytes.
    pub min_delta: u64,
    /// List at most this many regions that appeared or vanished, the
    /// largest; the rest are counted and summed ([`Diff::regions_left`]).
    pub regions: usize,
}

impl Default for DiffOptions {
    /// By dirty growth, then PSS; every change of a byte or more; 1000
    /// regions (the command line's defaults).
    fn default() -> DiffOptions {
        DiffOptions {
            sort: vec![DiffSort(Figure::Dirty), DiffSort(Figure::Pss)],
            min_delta: 1,
            regions: 1000,
        }
    }
}

setters!(DiffOptions {
    with_sort: sort: Vec<DiffSort>,
    with_min_delta: min_delta: u64,
    with_regions: regions: usize,
});

/// Compares `a` (before) with `b` (after).
pub fn diff(a: &Snapshot, b: &Snapshot, opts: &DiffOptions) -> Diff {
    diff_digests(&Digest::of(a.clone()), &Digest::of(b.clone()), opts)
}

/// [`diff`] of two digests: each must have kept (at least) the regions
/// [`unmatched`] names for the region list to be whole.
pub fn diff_digests(da: &Digest, db: &Digest, opts: &DiffOptions) -> Diff {
    diff_digests_with(da, db, opts, None, RegionsLeft::default())
}

/// [`diff_digests`]; of two vmmap reports, with each one's figures by type
/// (`sides`) when they were added up as it was read, its digest keeping
/// only the regions listed; `left`, the regions a
/// [`RegionCap`](crate::analyze::diff_regions::RegionCap) left out.
pub(crate) fn diff_digests_with(
    da: &Digest,
    db: &Digest,
    opts: &DiffOptions,
    sides: Option<(&TypeSides, &TypeSides)>,
    mut left: RegionsLeft,
) -> Diff {
    let (a, b) = (&da.snapshot, &db.snapshot);
    let pairs = match_processes(&a.processes, &b.processes);
    // One row a pair (two `Sizes` each): made exactly, not grown.
    let mut processes = Vec::with_capacity(pairs.len());
    let mut regions = Vec::new();
    let mut purge_changes = Vec::new();
    let mut notes = Vec::new();
    let totals_a: Vec<Sizes> = (0..a.processes.len())
        .map(|i| region_checked_totals(da, i, Side::First, &mut notes))
        .collect();
    let totals_b: Vec<Sizes> = (0..b.processes.len())
        .map(|i| region_checked_totals(db, i, Side::Second, &mut notes))
        .collect();
    for &(ia, ib) in &pairs {
        let (pa, pb) = (ia.map(|i| &a.processes[i]), ib.map(|i| &b.processes[i]));
        let p = pb.or(pa).expect("a pair has a side");
        processes.push(Change {
            key: p.pid.map_or_else(|| p.command.clone(), |pid| pid.to_string()),
            label: p.command.clone(),
            pid: p.pid,
            before: ia.map(|i| totals_a[i].clone()),
            after: ib.map(|i| totals_b[i].clone()),
        });
        if let (Some(ia), Some(ib), Some(pa), Some(pb)) = (ia, ib, pa, pb) {
            let (before, after) = (&da.ids[ia], &db.ids[ib]);
            // Regions kept on both sides under one identity are those
            // whose purge state changed (see `unmatched`).
            let kept_before: HashMap<u64, &SnapRegion> =
                pa.regions.iter().map(|r| (r.id(), r)).collect();
            for r in &pb.regions {
                let Some(old) = kept_before.get(&r.id()) else { continue };
                if old.purge.is_some() && r.purge.is_some() && old.purge != r.purge {
                    purge_changes.push(PurgeChange {
                        pid: pb.pid,
                        before: (*old).clone(),
                        after: r.clone(),
                    });
                }
            }
            for r in pb.regions.iter().filter(|r| before.binary_search(&r.id()).is_err()) {
                regions.push(RegionChange { pid: pb.pid, appeared: true, region: r.clone() });
            }
            for r in pa.regions.iter().filter(|r| after.binary_search(&r.id()).is_err()) {
                regions.push(RegionChange { pid: pa.pid, appeared: false, region: r.clone() });
            }
        }
    }
    // Sums over several processes keep the summable figures only
    // (model::summable), a snapshot written before that rule included.
    let summed = |groups: Vec<Group>, n: usize| -> Vec<Group> {
        groups.into_iter().map(|g| Group { sizes: g.sizes.over_processes(n), ..g }).collect()
    };
    let (na, nb) = (a.processes.len(), b.processes.len());
    let mut categories =
        pair_groups(&summed(a.categories.clone(), na), &summed(b.categories.clone(), nb));
    // Every process of a side is in `pairs`, so a side's sums by path are
    // those of all its processes (added in file order; the rows' order
    // is the sort's, whose last key, the path, is unique).
    let mut paths =
        pair_groups(&summed(da.path_sums().to_vec(), na), &summed(db.path_sums().to_vec(), nb));
    for list in [&mut processes, &mut categories, &mut paths] {
        list.retain(|c| c.largest() >= opts.min_delta.max(1) as u128);
        sort(list, &opts.sort);
    }
    regions.retain(|r| shown(&r.region, opts.min_delta));
    regions.sort_by_key(|r| std::cmp::Reverse(r.region.sizes.size));
    for r in regions.drain(opts.regions.min(regions.len())..) {
        left.add(r.appeared, &r.region.sizes);
    }
    purge_changes.sort_by_key(|c: &PurgeChange| std::cmp::Reverse(c.after.sizes.size));
    let seconds = a.unix_time.zip(b.unix_time).map(|(x, y)| y - x);
    // A vmmap report is one process.
    let vmmap = match (a.kind, a.processes.as_slice(), b.processes.as_slice()) {
        (SnapshotKind::Vmmap, [pa], [pb]) => Some(match sides {
            Some((sa, sb)) => {
                footprint_diff_of((sa, pa.physical_footprint), (sb, pb.physical_footprint))
            }
            None => footprint_diff(pa, pb),
        }),
        _ => None,
    };
    let exact = crate::analyze::diff_exact::exact_diff(a, b, &pairs, opts.min_delta, &mut notes);
    crate::analyze::diff_exact::working_set_note(a, b, &mut notes);
    Diff {
        totals: Change {
            key: "total".into(),
            label: "total".into(),
            pid: None,
            before: Some(checked_total(a, &totals_a, Side::First, &mut notes)),
            after: Some(checked_total(b, &totals_b, Side::Second, &mut notes)),
        },
        processes,
        categories,
        paths,
        regions,
        regions_left: (left.count() > 0).then_some(left),
        purge_changes,
        vmmap,
        exact,
        seconds,
        notes,
    }
}

/// Process `i`'s totals, checked against its own regions (the digest's
/// sums by path cover every region): a snapshot is a file anyone can
/// edit, and a diff that trusted its stored totals printed `+4.0K` path
/// rows beside "processes: no change". Where they disagree, the regions'
/// sums are used and `notes` says so; a process without regions keeps
/// its stored totals.
fn region_checked_totals(d: &Digest, i: usize, side: Side, notes: &mut Vec<Note>) -> Sizes {
    let p = &d.snapshot.processes[i];
    let Some(RegionSum { sizes: sum, regions }) = d.region_sums.get(i).and_then(Option::as_ref)
    else {
        return p.totals.clone();
    };
    let (sum, regions) = (sum.clone(), *regions);
    let slack = regions.saturating_mul(1024);
    // A process's stored total may differ from its regions' sum by the
    // rounding, or be the rollup's alone (see `analyze::group::process_total`).
    let disagrees = |f: Figure| match (p.totals.field(f), sum.field(f)) {
        (Some(t), Some(s)) if ROUNDED_PER_MAPPING.contains(&f) => t.abs_diff(s) > slack,
        (Some(_), None) if ROUNDED_PER_MAPPING.contains(&f) => false,
        // The process's own (status; a share across the snapshot; a
        // working-set measurement's), which no region carries.
        _ if matches!(
            f,
            Figure::Footprint
                | Figure::ShmemSwap
                | Figure::Touched
                | Figure::WorkingSet
                | Figure::Cold
        ) =>
        {
            false
        }
        (stored, summed) => stored != summed,
    };
    let mut extras: Vec<&str> =
        p.totals.extra.iter().chain(&sum.extra).map(|(n, _)| n.as_str()).collect();
    extras.sort_unstable();
    extras.dedup();
    let known = Figure::ALL
        .iter()
        .filter(|&&f| disagrees(f))
        .map(|&f| (f.name(), p.totals.field(f), sum.field(f)));
    let unknown = extras
        .into_iter()
        .map(|n| (n, p.totals.extra_named(n), sum.extra_named(n)))
        .filter(|(_, stored, summed)| stored != summed);
    // The first by name is the one named.
    let Some((name, stored, summed)) = known.chain(unknown).min_by_key(|(n, _, _)| *n) else {
        return p.totals.clone();
    };
    let who = p.pid.map_or_else(|| p.command.clone(), |pid| format!("pid {pid}"));
    notes.push(Note::TotalsDisagree { side, who, figure: name.to_string(), stored, summed });
    Sizes {
        footprint: p.totals.footprint,
        shmem_swap: p.totals.shmem_swap,
        touched: p.totals.touched,
        working_set: p.totals.working_set,
        cold: p.totals.cold,
        ..sum
    }
}

/// The snapshot's total row: the sum of its processes' (checked) totals,
/// noted where the stored one differs.
fn checked_total(s: &Snapshot, processes: &[Sizes], side: Side, notes: &mut Vec<Note>) -> Sizes {
    if s.processes.is_empty() {
        return s.totals.clone();
    }
    let mut sum = Sizes::default();
    for t in processes {
        sum.add(t);
    }
    // Over several processes, the summable figures only (model::summable);
    // a snapshot written before that rule stored the others too.
    let n = processes.len();
    let sum = sum.over_processes(n);
    if sum != s.totals.clone().over_processes(n) {
        notes.push(Note::TotalDisagrees { side });
    }
    sum
}

fn pair_groups(a: &[Group], b: &[Group]) -> Vec<Change> {
    // Keyed lookups: linear in the number of groups (a path per library
    // can mean tens of thousands of them).
    fn index(gs: &[Group]) -> HashMap<&str, usize> {
        let mut m = HashMap::with_capacity(gs.len());
        for (i, g) in gs.iter().enumerate() {
            m.entry(g.key.as_str()).or_insert(i);
        }
        m
    }
    let (ia, ib) = (index(a), index(b));
    let mut keys: Vec<&str> = Vec::with_capacity(a.len() + b.len());
    let mut seen = std::collections::HashSet::with_capacity(a.len() + b.len());
    for g in a.iter().chain(b) {
        if seen.insert(g.key.as_str()) {
            keys.push(&g.key);
        }
    }
    keys.into_iter()
        .map(|k| Change {
            key: k.to_string(),
            label: crate::analyze::Category::label_or_key(k).to_string(),
            pid: None,
            before: ia.get(k).map(|&i| a[i].sizes.clone()),
            after: ib.get(k).map(|&i| b[i].sizes.clone()),
        })
        .collect()
}

fn sort(list: &mut [Change], fields: &[DiffSort]) {
    list.sort_by(|x, y| {
        for &DiffSort(f) in fields {
            let ord = y.delta(f).cmp(&x.delta(f));
            if ord != std::cmp::Ordering::Equal {
                return ord;
            }
        }
        y.largest().cmp(&x.largest()).then_with(|| x.key.cmp(&y.key))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::diff_regions::RegionIds;
    use crate::model::snapshot::{SnapProcess, SnapshotKind};
    use crate::model::Purge;

    #[test]
    fn pairing_many_groups_is_linear() {
        let groups = |n: usize, off: usize| -> Vec<Group> {
            (0..n)
                .map(|i| Group {
                    key: format!("/lib/{}", i + off),
                    regions: 1,
                    sizes: Sizes { rss: Some(i as u64), ..Default::default() },
                })
                .collect()
        };
        let (a, b) = (groups(100_000, 0), groups(100_000, 50_000));
        let start = std::time::Instant::now();
        let pairs = pair_groups(&a, &b);
        assert_eq!(pairs.len(), 150_000);
        assert!(pairs.iter().filter(|c| c.before.is_some() && c.after.is_some()).count() == 50_000);
        // Quadratic pairing takes minutes here; keyed pairing well under one.
        assert!(start.elapsed() < std::time::Duration::from_secs(10), "{:?}", start.elapsed());
    }

    fn region(start: u64, path: &str, category: &str, dirty: u64) -> SnapRegion {
        SnapRegion {
            start: Some(start),
            end: Some(start + 4096),
            perms: "rw-p".into(),
            path: Some(path.into()),
            category: category.into(),
            region_type: None,
            purge: None,
            offset: None,
            inode: None,
            sizes: Sizes {
                size: Some(4096),
                rss: Some(dirty),
                private_dirty: Some(dirty),
                shared_dirty: Some(0),
                ..Default::default()
            },
        }
    }

    fn proc(pid: u32, regions: Vec<SnapRegion>) -> SnapProcess {
        let mut totals = Sizes::default();
        for r in &regions {
            totals.add(&r.sizes);
        }
        SnapProcess {
            pid: Some(pid),
            ppid: None,
            user: None,
            comm: "x".into(),
            command: format!("x {pid}"),
            source: crate::model::SizeSource::Smaps,
            totals,
            categories: SnapProcess::categories_of(&regions),
            regions,
            purgeable: Vec::new(),
            physical_footprint: None,
            exclusive: None,
        }
    }

    #[test]
    fn growth_is_found_where_it_happened() {
        let a = Snapshot::of(
            vec![proc(1, vec![region(0x1000, "[heap]", "heap", 4096)]), proc(2, vec![])],
            SnapshotKind::Linux,
        );
        let b = Snapshot::of(
            vec![
                proc(
                    1,
                    vec![
                        region(0x1000, "[heap]", "heap", 4096),
                        region(0x9000, "a", "file_data", 4096),
                    ],
                ),
                proc(3, vec![region(0x1000, "[heap]", "heap", 8192)]),
            ],
            SnapshotKind::Linux,
        );
        let d = diff(
            &a,
            &b,
            &DiffOptions {
                sort: vec![DiffSort(Figure::Dirty)],
                min_delta: 0,
                ..Default::default()
            },
        );
        // Before: 4 KiB (pid 1). After: 8 KiB (pid 1) + 8 KiB (new pid 3).
        assert_eq!(d.totals.delta(Figure::PrivateDirty), Some(12288));
        let statuses: Vec<(&str, &str)> =
            d.processes.iter().map(|p| (p.key.as_str(), p.status().name())).collect();
        assert_eq!(
            statuses,
            vec![("3", "appeared"), ("1", "changed")],
            "pid 2 had no bytes, so no row"
        );
        assert_eq!(d.processes[0].delta(Figure::Dirty), Some(8192));
        assert_eq!(d.categories[0].key, "heap");
        // A category of several processes has the summable figures only.
        assert_eq!(d.categories[0].delta(Figure::Dirty), None);
        assert_eq!(d.categories[0].delta(Figure::PrivateDirty), Some(8192));
        assert_eq!(d.regions.len(), 1);
        assert!(d.regions[0].appeared);
        assert_eq!(d.regions[0].region.path.as_deref(), Some("a"));
        // The sum of per-process deltas is the total delta.
        let sum: i128 = d.processes.iter().filter_map(|p| p.delta(Figure::PrivateDirty)).sum();
        assert_eq!(Some(sum), d.totals.delta(Figure::PrivateDirty));
    }

    #[test]
    fn min_delta_hides_small_changes() {
        let a = Snapshot::of(
            vec![proc(1, vec![region(0x1000, "[heap]", "heap", 4096)])],
            SnapshotKind::Linux,
        );
        let b = Snapshot::of(
            vec![proc(1, vec![region(0x1000, "[heap]", "heap", 8192)])],
            SnapshotKind::Linux,
        );
        let d = diff(
            &a,
            &b,
            &DiffOptions {
                sort: vec![DiffSort(Figure::Dirty)],
                min_delta: 8192,
                ..Default::default()
            },
        );
        assert!(d.processes.is_empty());
        let d = diff(
            &a,
            &b,
            &DiffOptions {
                sort: vec![DiffSort(Figure::Dirty)],
                min_delta: 4096,
                ..Default::default()
            },
        );
        assert_eq!(d.processes.len(), 1);
    }

    /// A streamed diff keeps only what it must of each side: a region whose
    /// purge state changed (same identity on both) is among what it keeps,
    /// so it is listed as a purge change, not lost with the unchanged ones.
    #[test]
    fn purge_changes_survive_keeping_only_unmatched_regions() {
        let vm = |purge: &str, other: u64| {
            let mut r = region(0x1000, "IOAccelerator", "gpu", 4096);
            r.purge = Some(Purge::from_code(purge));
            let mut same = region(other, "IOSurface", "gpu", 4096);
            same.purge = Some(Purge::NonVolatile);
            Snapshot::of(vec![proc(1, vec![r, same])], SnapshotKind::Vmmap)
        };
        let (a, b) = (Digest::of(vm("N", 0x9000)), Digest::of(vm("V", 0x9000)));
        let (keep_a, keep_b) = unmatched(&a, &b);
        let strip = |mut d: Digest, keep: &[RegionIds]| {
            for (p, k) in d.snapshot.processes.iter_mut().zip(keep) {
                p.regions.retain(|r| k.contains(&r.id()));
            }
            d
        };
        let (a, b) = (strip(a, &keep_a), strip(b, &keep_b));
        assert_eq!(b.snapshot.processes[0].regions.len(), 1, "only the changed region kept");
        let d = diff_digests(
            &a,
            &b,
            &DiffOptions {
                sort: vec![DiffSort(Figure::Dirty)],
                min_delta: 0,
                ..Default::default()
            },
        );
        assert_eq!(d.purge_changes.len(), 1);
        assert_eq!(d.purge_changes[0].states(), ("N", "V"));
        assert!(d.regions.is_empty(), "a changed purge state is neither appeared nor vanished");
    }
}
