//! The cgroup view: each cgroup's charge (what the kernel counts against
//! its limit) beside the PSS of its processes, and the difference named
//! by its parts: page cache charged to it, tmpfs, kernel memory, sockets.
//! Pure: the caller reads the cgroup files and the processes.

use std::path::PathBuf;

use serde::Serialize;

use crate::analyze::signed::{bytes as signed, clamp};
use crate::model::{CgroupMemory, ProcMemory, Sizes};

/// What a part of `usage − Σ PSS` is; its JSON name is the snake_case
/// of the variant (`page_cache_unmapped`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum PartName {
    /// Anonymous pages charged here beyond the processes' share.
    AnonNotInPss,
    /// Page cache charged here that no process of it maps.
    PageCacheUnmapped,
    /// tmpfs, /dev/shm and SysV shm charged here, unmapped.
    ShmemUnmapped,
    /// Kernel memory.
    Kernel,
    /// Network buffers.
    Sock,
    /// What no part above names.
    Other,
    /// PSS the charge does not hold, subtracted.
    BeyondUsage,
}

impl PartName {
    /// The stable name (JSON, tables).
    pub fn name(self) -> &'static str {
        match self {
            PartName::AnonNotInPss => "anon_not_in_pss",
            PartName::PageCacheUnmapped => "page_cache_unmapped",
            PartName::ShmemUnmapped => "shmem_unmapped",
            PartName::Kernel => "kernel",
            PartName::Sock => "sock",
            PartName::Other => "other",
            PartName::BeyondUsage => "beyond_usage",
        }
    }
}

impl std::fmt::Display for PartName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

/// One part of `usage − Σ PSS`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Part {
    /// What the part is.
    pub name: PartName,
    /// Bytes; only `beyond_usage` is negative (it is subtracted),
    /// every other part is 0 or more.
    pub bytes: i64,
    /// Where the figure comes from (memory.stat keys, smaps sums).
    pub source: &'static str,
}

/// One cgroup: its processes (in it and below, as its charge is) and its figures.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CgroupRow {
    /// The cgroup's path below the hierarchy's root (`/system.slice/ssh.service`).
    pub path: String,
    /// Processes in this cgroup or below.
    pub processes: usize,
    /// Of them, those whose PSS could not be read (smaps denied: the
    /// process's own user or root reads it; status only). With any, the
    /// PSS sums are unknown and `parts` is empty: the difference between
    /// usage and PSS cannot be named.
    pub pss_unknown: usize,
    /// Σ of their figures (PSS, USS via private_*, Pss_Anon/File/Shmem);
    /// none where some process's PSS is unknown.
    #[serde(skip)]
    pub sizes: Sizes,
    /// The cgroup's own files; `None` when they could not be read.
    pub memory: Option<CgroupMemory>,
    /// usage − inactive_file (what kubelet/cAdvisor call the working set).
    pub working_set: Option<u64>,
    /// `usage − Σ PSS`, by part; the parts add up to it exactly.
    pub parts: Vec<Part>,
    /// Figures named beside the usage, not in it (the v1 root's kernel
    /// memory): never part of the sum above.
    pub beside: Vec<Part>,
}

/// Whether `p` is `cgroup` or below it.
pub(crate) fn is_within(p: &str, cgroup: &str) -> bool {
    let base = cgroup.trim_end_matches('/');
    base.is_empty() || p == base || p.strip_prefix(base).is_some_and(|rest| rest.starts_with('/'))
}

/// Rows for `paths`, each with the processes at or below it.
pub fn rows(
    paths: &[String],
    processes: &[ProcMemory],
    memory: &dyn Fn(&str) -> Option<CgroupMemory>,
) -> Vec<CgroupRow> {
    paths
        .iter()
        .map(|path| {
            let mut sizes = Sizes::default();
            let (mut n, mut pss_unknown) = (0, 0);
            for p in processes {
                if p.info.cgroup.as_deref().is_some_and(|c| is_within(c, path)) {
                    sizes.add(&p.sizes);
                    n += 1;
                    // Memory without PSS: status only (smaps denied), or
                    // maps only; a zombie has no memory and no PSS to miss.
                    let memory = p.sizes != Sizes::default();
                    pss_unknown += usize::from(p.sizes.pss.is_none() && memory);
                }
            }
            // A sum that leaves processes out is no PSS of the cgroup.
            if pss_unknown > 0 {
                sizes = Sizes::default();
            }
            let memory = memory(path);
            let working_set = memory.as_ref().and_then(|m| m.working_set());
            let parts = match &memory {
                Some(m) if pss_unknown == 0 => parts(m, &sizes),
                _ => Vec::new(),
            };
            let beside = memory.as_ref().map(beside).unwrap_or_default();
            CgroupRow {
                path: path.clone(),
                processes: n,
                pss_unknown,
                sizes,
                memory,
                working_set,
                parts,
                beside,
            }
        })
        .collect()
}

/// `usage − Σ PSS` named: what the charge holds that the processes' PSS
/// does not (or holds less of: PSS divides pages shared with other
/// cgroups, the charge counts them whole where they were first touched).
pub fn parts(m: &CgroupMemory, s: &Sizes) -> Vec<Part> {
    let Some(usage) = m.usage else { return Vec::new() };
    let (pss, anon, file, shmem) = (
        s.pss.unwrap_or(0),
        s.pss_anon.unwrap_or(0),
        s.pss_file.unwrap_or(0),
        s.pss_shmem.unwrap_or(0),
    );
    let mut out = Vec::new();
    let mut push = |name, bytes: i64, source| out.push(Part { name, bytes, source });
    if let Some(a) = m.anon {
        // Never below 0: PSS of pages charged elsewhere is the remainder's.
        push(
            PartName::AnonNotInPss,
            signed(a.saturating_sub(anon)),
            "anon − Σ Pss_Anon: anonymous pages charged here beyond the processes' share",
        );
    }
    let sh = m.shmem.unwrap_or(0);
    if let Some(f) = m.file {
        push(
            PartName::PageCacheUnmapped,
            signed(f.saturating_sub(sh).saturating_sub(file)),
            "file − shmem − Σ Pss_File: page cache charged here that no process of it maps",
        );
    }
    if m.shmem.is_some() {
        push(
            PartName::ShmemUnmapped,
            signed(sh.saturating_sub(shmem)),
            "shmem − Σ Pss_Shmem: tmpfs, /dev/shm and SysV shm charged here, unmapped",
        );
    }
    if let Some(k) = m.kernel.filter(|_| !m.usage_excludes_kernel()) {
        push(
            PartName::Kernel,
            signed(k),
            if m.version == 1 {
                "memory.kmem.usage_in_bytes"
            } else {
                "memory.stat kernel (slab, stacks, page tables, percpu, vmalloc)"
            },
        );
    }
    if let Some(k) = m.sock {
        push(PartName::Sock, signed(k), "memory.stat sock: network buffers");
    }
    let named: i128 = out.iter().map(|p| i128::from(p.bytes)).sum();
    let rest = clamp(i128::from(usage) - i128::from(pss) - named);
    // A remainder below 0 is not "other memory" but PSS the charge does
    // not hold: named as what it is and subtracted, never a negative line.
    out.push(if rest >= 0 {
        Part {
            name: PartName::Other,
            bytes: rest,
            source: "usage − Σ PSS − the parts above: rounding, processes not read, figures read a moment apart",
        }
    } else {
        Part {
            name: PartName::BeyondUsage,
            bytes: rest,
            source: "Σ PSS + the parts above − usage, subtracted: pages these processes map that the kernel charged to other cgroups (where they were first touched), or counters read a moment apart",
        }
    });
    out
}

/// Figures named beside the usage, outside its sum: the v1 root's
/// kernel memory, which its usage (rss + cache) does not hold.
pub fn beside(m: &CgroupMemory) -> Vec<Part> {
    match m.kernel {
        Some(k) if m.usage_excludes_kernel() => vec![Part {
            name: PartName::Kernel,
            bytes: signed(k),
            source:
                "memory.kmem.usage_in_bytes: not in the v1 root's usage, which is rss + cache only",
        }],
        _ => Vec::new(),
    }
}

/// The view.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CgroupView {
    /// One row per cgroup shown.
    pub rows: Vec<CgroupRow>,
    /// `v1` or `v2`, and where: `None` when no hierarchy has the memory controller.
    pub layout: Option<(u8, PathBuf)>,
    /// Processes read.
    pub processes: usize,
    /// Processes read from `status` only (permission): no PSS.
    pub restricted: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn part_names_are_what_json_prints() {
        use PartName::*;
        for p in [AnonNotInPss, PageCacheUnmapped, ShmemUnmapped, Kernel, Sock, Other, BeyondUsage]
        {
            assert_eq!(serde_json::to_value(p).unwrap(), p.name());
        }
    }

    fn proc(cgroup: &str, anon: u64, file: u64, shmem: u64) -> ProcMemory {
        let mut p = crate::analyze::test_support::rollup_process(anon, file, shmem);
        p.info.cgroup = Some(cgroup.into());
        p
    }

    #[test]
    fn charge_minus_pss_is_named_by_parts_that_add_up() {
        let ps =
            [proc("/pod/a", 100, 30, 0), proc("/pod/a/b", 50, 0, 10), proc("/podx", 999, 0, 0)];
        let m = CgroupMemory {
            path: "/pod".into(),
            version: 2,
            usage: Some(1000),
            anon: Some(160),
            file: Some(500),
            inactive_file: Some(300),
            shmem: Some(210),
            kernel: Some(90),
            sock: Some(4),
            ..Default::default()
        };
        let r = rows(&["/pod".into()], &ps, &|_| Some(m.clone()));
        let r = &r[0];
        assert_eq!(r.processes, 2, "/podx is not below /pod");
        assert_eq!(r.sizes.pss, Some(190));
        assert_eq!(r.working_set, Some(700));
        let get = |n: &str| r.parts.iter().find(|p| p.name.name() == n).unwrap().bytes;
        assert_eq!(get("anon_not_in_pss"), 10);
        assert_eq!(get("page_cache_unmapped"), 500 - 210 - 30);
        assert_eq!(get("shmem_unmapped"), 200);
        assert_eq!(get("kernel"), 90);
        assert_eq!(get("sock"), 4);
        let total: i64 = r.parts.iter().map(|p| p.bytes).sum::<i64>() + 190;
        assert_eq!(total, 1000);
        assert!(is_within("/a", "/") && is_within("/a/b", "/a") && !is_within("/ab", "/a"));
    }

    /// Issue 37, item 15: without privileges a process's smaps is denied
    /// and it is read from status (RSS, no PSS). Its cgroup's PSS is then
    /// unknown, not 0, and the charge is not split into parts (its own
    /// anonymous pages are not "anon not in PSS").
    #[test]
    fn a_process_read_from_status_leaves_the_pss_unknown() {
        let mut denied = proc("/pod/a", 0, 0, 0);
        denied.sizes = Sizes { rss: Some(100), ..Default::default() };
        let ps = [proc("/pod/b", 100, 30, 0), denied];
        let m = CgroupMemory { usage: Some(1000), anon: Some(160), ..Default::default() };
        let r = rows(&["/pod".into(), "/pod/b".into()], &ps, &|_| Some(m.clone()));
        assert_eq!((r[0].processes, r[0].pss_unknown), (2, 1));
        assert_eq!(r[0].sizes.pss, None, "no PSS of half the processes");
        assert!(r[0].parts.is_empty(), "{:?}", r[0].parts);
        assert_eq!((r[1].pss_unknown, r[1].sizes.pss), (0, Some(130)), "/pod/b was read");
        assert!(!r[1].parts.is_empty());
    }

    /// memory.stat figures past i64::MAX (crafted, or a v1 counter gone
    /// wrong) made parts negative by the u64-to-i64 casts, and `other`
    /// wrapped: a cgroup line read `kernel -1B`.
    #[test]
    fn parts_of_figures_past_i64_saturate_never_turn_negative() {
        let huge = u64::MAX;
        let m = CgroupMemory {
            usage: Some(huge),
            anon: Some(huge),
            file: Some(huge),
            kernel: Some(huge),
            sock: Some(huge),
            ..Default::default()
        };
        let ps = [proc("/", 1 << 62, 0, 0), proc("/a", 1 << 62, 0, 0)];
        let r = &rows(&["/".into()], &ps, &|_| Some(m.clone()))[0];
        for p in &r.parts {
            assert!(p.bytes >= 0 || p.name == PartName::BeyondUsage, "{} = {}", p.name, p.bytes);
        }
        let get = |n: &str| r.parts.iter().find(|p| p.name.name() == n).unwrap().bytes;
        assert_eq!(get("kernel"), i64::MAX);
        assert_eq!(get("anon_not_in_pss"), i64::MAX);
    }
}
