//! Transparent huge pages in the machine picture. They are not a pool of
//! their own: meminfo counts anonymous THP inside `AnonPages`, shmem THP
//! inside `Shmem`, file THP inside `Cached`, so they are a part of those
//! lines, shown beside them, never a line (which would count them twice).
//! hugetlb pages are the pool: the `hugetlb` group.

use serde::Serialize;

use crate::model::MemInfo;

/// THP bytes by kind, from meminfo.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Thp {
    /// `AnonHugePages`: anonymous memory in THP (part of AnonPages, so of
    /// the lines `process_anon` and `anon_unread`).
    pub anon: Option<u64>,
    /// `ShmemHugePages`: shared memory in THP (part of Shmem).
    pub shmem: Option<u64>,
    /// `FileHugePages`: page cache in THP (part of Cached).
    pub file: Option<u64>,
}

/// The THP figures; `None` when meminfo has none of them.
pub(super) fn from_meminfo(m: &MemInfo) -> Option<Thp> {
    let t = Thp {
        anon: m.get("AnonHugePages"),
        shmem: m.get("ShmemHugePages"),
        file: m.get("FileHugePages"),
    };
    (t != Thp::default()).then_some(t)
}
