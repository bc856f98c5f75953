//! A macOS vmmap report as a snapshot: one process whose "categories" are
//! vmmap region types, so `diff` and `plot` serve macOS as they serve
//! Linux. Regions keep their type, protection, detail and purge state;
//! where the report has no region lines (`vmmap -summary`, a crash
//! report's `VM Region Summary`), the summary table gives the types.

use crate::model::snapshot::{SnapGroup, SnapProcess, SnapRegion, Snapshot};
use crate::model::{Region, Sizes};
use crate::source::snapshot_file::{group_regions, single};
use crate::source::vmmap::{Document, SummaryRow};

/// A region of the report as a snapshot region.
pub fn region(r: &Region) -> SnapRegion {
    SnapRegion {
        start: r.start,
        end: r.end,
        perms: r.perms.clone(),
        path: r.path.clone(),
        category: r.region_type.clone().unwrap_or_default(),
        region_type: r.region_type.clone(),
        purge: Some(r.purge.code().to_string()),
        offset: None,
        inode: None,
        sizes: r.sizes.clone(),
    }
}

/// A summary-table row's figures in the shared size vocabulary.
pub fn summary_sizes(s: &SummaryRow) -> Sizes {
    Sizes {
        size: s.virtual_size,
        rss: s.resident,
        dirty: s.dirty,
        swap: s.swapped,
        ..Default::default()
    }
}

/// The snapshot of one report.
pub fn snapshot(doc: &Document, regions: &[Region]) -> Snapshot {
    let regions: Vec<SnapRegion> = regions.iter().map(region).collect();
    let categories: Vec<SnapGroup> = if regions.is_empty() {
        doc.summary
            .iter()
            .map(|s| SnapGroup {
                category: s.region_type.clone(),
                regions: s.count.unwrap_or(0) as usize,
                sizes: summary_sizes(s),
            })
            .collect()
    } else {
        group_regions(&regions, |r| r.category.clone())
    };
    let mut totals = Sizes::default();
    for c in &categories {
        totals.add(&c.sizes);
    }
    let h = &doc.header;
    let process = SnapProcess {
        pid: h.pid,
        ppid: None,
        user: None,
        comm: h.process.clone().unwrap_or_default(),
        command: h.path.clone().or_else(|| h.process.clone()).unwrap_or_default(),
        source: "vmmap".into(),
        totals,
        categories,
        regions,
    };
    let mut snap = single(process, "vmmap");
    snap.kernel = h.os_version.clone();
    if doc.diagnostics.unreadable > 0 || doc.diagnostics.elisions > 0 {
        snap.notes.push(format!(
            "partial: {} unreadable line(s), {} elision(s) in the report",
            doc.diagnostics.unreadable, doc.diagnostics.elisions
        ));
    }
    snap
}
