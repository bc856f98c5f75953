//! The per-region enrichment hook: what a reader adds to a region after
//! it is parsed and before any sink sees it, from sources other than the
//! file the region came from. The hugetlbfs marks (from the process's
//! mounts) are one; a page-level reader (pagemap, kpageflags) plugs in
//! here the same way, through `ReadPlan::enrich`.

use crate::model::Region;
use crate::source::mounts::{hugetlbfs_points, mark_hugetlbfs};
use crate::source::ProcRoot;

/// Adds to each region of one process as it is read.
pub trait Enrich {
    /// Adds what this source knows of `region` to it.
    fn enrich(&mut self, region: &mut Region);
}

/// Marks the file mappings under one of the process's hugetlbfs mounts as
/// huge pages; its mounts are read at the first mapping that could be one.
pub(crate) struct HugetlbfsMarks<'r> {
    root: &'r ProcRoot,
    pid: u32,
    points: Option<Vec<String>>,
}

impl<'r> HugetlbfsMarks<'r> {
    pub(crate) fn new(root: &'r ProcRoot, pid: u32) -> HugetlbfsMarks<'r> {
        HugetlbfsMarks { root, pid, points: None }
    }
}

impl Enrich for HugetlbfsMarks<'_> {
    fn enrich(&mut self, region: &mut Region) {
        let (root, pid) = (self.root, self.pid);
        mark_hugetlbfs(region, &mut self.points, || hugetlbfs_points(root, pid));
    }
}
