//! tmpfs mounts and what each holds (statvfs), to split the machine's
//! Shmem by mount. Live only: a recorded tree has no file systems to ask.

use crate::model::{Backing, Region};
use crate::source::parse::mounts;
use crate::source::ProcRoot;

/// (mount point, bytes used) of every tmpfs/devtmpfs mount with something
/// in it, largest first, each mount point once. Empty for a recording.
pub(crate) fn tmpfs_usage(root: &ProcRoot) -> Vec<(String, u64)> {
    if !root.is_live() {
        return Vec::new();
    }
    // Live only, the kernel's: a node with thousands of mounts has a
    // few MB of them.
    let Ok(raw) = root.read_rel(std::path::Path::new("mounts"), 64 << 20) else {
        return Vec::new();
    };
    let mut out: Vec<(String, u64)> = Vec::new();
    for (point, fstype) in mounts::parse(&raw).unwrap_or_default() {
        if !matches!(fstype.as_str(), "tmpfs" | "devtmpfs") || out.iter().any(|(p, _)| *p == point)
        {
            continue;
        }
        if let Some(used) = used(&point).filter(|&u| u > 0) {
            out.push((point, used));
        }
    }
    out.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    out
}

/// hugetlbfs mount points of process `pid` (`ROOT/PID/mounts`: its own
/// mount namespace, so the paths are the ones its maps show). Empty when
/// the file is not there (most recordings) or has none.
pub(crate) fn hugetlbfs_points(root: &ProcRoot, pid: u32) -> Vec<String> {
    let Ok(bytes) = root.read(pid, "mounts") else { return Vec::new() };
    mounts::parse(&bytes)
        .unwrap_or_default()
        .into_iter()
        .filter(|(_, fstype)| fstype == "hugetlbfs")
        .map(|(point, _)| point)
        .collect()
}

/// Marks a file mapping under one of the hugetlbfs mount `points` as huge
/// pages. `points` is read on the first file mapping whose device has
/// major number 0 (where hugetlbfs files are; files on disks are not), so
/// most processes never read their mounts.
pub(crate) fn mark_hugetlbfs(
    region: &mut Region,
    points: &mut Option<Vec<String>>,
    load: impl FnOnce() -> Vec<String>,
) {
    let on_anonymous_device = region.device.as_deref().is_some_and(|d| d.starts_with("00:"));
    let Some(path) = region.path.as_deref().filter(|_| region.backing == Backing::File) else {
        return;
    };
    if !on_anonymous_device {
        return;
    }
    let points = points.get_or_insert_with(load);
    let under = |p: &String| {
        path.strip_prefix(p.as_str()).is_some_and(|rest| rest.starts_with('/') || p == "/")
    };
    if points.iter().any(under) {
        region.backing = Backing::HugePages;
    }
}

/// Bytes in use on the file system at `point` (blocks − free blocks).
fn used(point: &str) -> Option<u64> {
    crate::sys::used_bytes(std::path::Path::new(point))
}

#[cfg(test)]
mod tests {
    #[test]
    fn files_under_a_hugetlbfs_mount_are_huge_pages() {
        use crate::model::{Backing, Region};
        let region =
            |line: &str| crate::source::parse::smaps_header::parse_header(line.as_bytes()).unwrap();
        let points = || vec!["/mnt/huge".to_string()];
        let mut loaded = None;
        let mut r: Region = region("1000-2000 rw-s 0 00:2f 9 /mnt/huge/x");
        super::mark_hugetlbfs(&mut r, &mut loaded, points);
        assert_eq!(r.backing, Backing::HugePages);
        let mut r = region("1000-2000 rw-s 0 00:2f 9 /mnt/hugeish/x");
        super::mark_hugetlbfs(&mut r, &mut loaded, || unreachable!("read once"));
        assert_eq!(r.backing, Backing::File);
        // Files on a disk (major number not 0) never read the mounts.
        let mut fresh = None;
        let mut r = region("1000-2000 r--p 0 fe:00 9 /mnt/huge/x");
        super::mark_hugetlbfs(&mut r, &mut fresh, || unreachable!("not read"));
        assert_eq!(r.backing, Backing::File);
        assert!(fresh.is_none());
    }

    #[test]
    fn live_dev_shm_file_is_counted() {
        let root = crate::source::ProcRoot::default();
        if !super::mounts::parse(&std::fs::read("/proc/mounts").unwrap_or_default())
            .unwrap()
            .iter()
            .any(|(p, t)| p == "/dev/shm" && t == "tmpfs")
        {
            println!("skipped: no tmpfs on /dev/shm");
            return;
        }
        let path = format!("/dev/shm/memtally-mounts-test-{}", std::process::id());
        std::fs::write(&path, vec![7u8; 3 << 20]).unwrap();
        let got = super::tmpfs_usage(&root);
        std::fs::remove_file(&path).unwrap();
        let shm = got.iter().find(|(p, _)| p == "/dev/shm").map(|(_, b)| *b).unwrap_or(0);
        assert!(shm >= 3 << 20, "{got:?}");
    }
}
