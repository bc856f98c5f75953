//! The cgroup filesystem, read-only: the live `/sys/fs/cgroup`, or a
//! recorded copy under a capture (`DIR/sys/fs/cgroup/...` next to
//! `DIR/PID`, so reading the recorded tree `DIR` finds it). Reads v2 (unified), v1
//! (the memory controller's own mount) and hybrid hosts (v1 memory plus a
//! v2 tree without memory) into one [`CgroupMemory`].

use std::path::{Path, PathBuf};

use crate::model::CgroupMemory;
use crate::source::bounded::{Kind, Tree};
use crate::source::parse::memory_stat;
use crate::source::ProcRoot;

/// Where the cgroup filesystem is (the directory `/sys/fs/cgroup` is).
#[derive(Debug, Clone)]
pub(crate) struct CgroupRoot {
    root: PathBuf,
    /// The directory held open: every file is read beneath it, through no
    /// link, bounded (see `source::bounded`); the error number when it
    /// could not be opened (then no hierarchy is found).
    tree: std::result::Result<Tree, i32>,
}

/// The most a cgroup file memtally reads may hold: `memory.stat` is the
/// longest, about 2 KiB of `key value` lines.
pub const MAX_FILE: usize = 64 << 10;

/// The longest cgroup path taken (`PATH_MAX`): longer is not a path the
/// kernel could print, only crafted input.
pub(crate) const MAX_PATH: usize = libc::PATH_MAX as usize;

/// Where memory is accounted under the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// The v1 memory controller is mounted at this directory.
    V1(PathBuf),
    /// The unified hierarchy with the memory controller is at this directory.
    V2(PathBuf),
}

/// Where a capture records the cgroup files, under its directory.
pub const RECORDED: &str = "sys/fs/cgroup";

/// Files read per cgroup (and recorded by captures), v1 and v2.
pub(crate) const FILES: &[&str] = &[
    "memory.current",
    "memory.max",
    "memory.high",
    "memory.peak",
    "memory.swap.current",
    "memory.stat",
    "memory.usage_in_bytes",
    "memory.limit_in_bytes",
    "memory.max_usage_in_bytes",
    "memory.kmem.usage_in_bytes",
    "memory.events",
    "memory.oom_control",
];

/// Limits at or above this mean "no limit" (v1 prints PAGE_COUNTER_MAX pages).
const UNLIMITED: u64 = 1 << 62;

impl CgroupRoot {
    /// The cgroup file systems under `root` (`/sys/fs/cgroup` live).
    pub fn new(root: impl Into<PathBuf>) -> CgroupRoot {
        let root = root.into();
        let tree = Tree::open(&root).map_err(|e| e.raw_os_error().unwrap_or(libc::EIO));
        CgroupRoot { root, tree }
    }

    /// The cgroup tree that goes with a `/proc` tree: the live one for the
    /// live `/proc`, `DIR/sys/fs/cgroup` for a recording in `DIR` (reached
    /// beneath the recording, through no link).
    /// `--cgroup-root DIR`, where given, is read instead of either.
    pub(crate) fn for_proc(proc: &ProcRoot) -> CgroupRoot {
        if let Some(dir) = proc.cgroup_root() {
            return CgroupRoot::new(dir);
        }
        match proc.subtree(Path::new(RECORDED)) {
            None => CgroupRoot::new("/sys/fs/cgroup"),
            Some(tree) => CgroupRoot {
                root: proc.path().join(RECORDED),
                tree: tree.map_err(|e| e.raw_os_error().unwrap_or(libc::EIO)),
            },
        }
    }

    /// `path` (under the root) as a name inside the tree.
    fn rel<'p>(&self, path: &'p Path) -> Option<&'p Path> {
        let rel = path.strip_prefix(&self.root).ok()?;
        Some(if rel.as_os_str().is_empty() { Path::new(".") } else { rel })
    }

    /// What `path` (under the root) is, never followed; `None` when absent.
    pub fn kind(&self, path: &Path) -> Option<Kind> {
        self.tree.as_ref().ok()?.kind(self.rel(path)?).ok()
    }

    /// Reads the cgroup file `path` (under the root): a regular file of at
    /// most [`MAX_FILE`] bytes, reached through no link.
    pub(crate) fn read_file(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        let tree = self.tree.as_ref().map_err(|&e| std::io::Error::from_raw_os_error(e))?;
        let rel = self.rel(path).ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidData, "not inside the cgroup tree")
        })?;
        tree.read(rel, MAX_FILE)
    }

    /// The names in the directory `path` (under the root).
    pub fn list(&self, path: &Path) -> std::io::Result<Vec<std::ffi::OsString>> {
        let tree = self.tree.as_ref().map_err(|&e| std::io::Error::from_raw_os_error(e))?;
        let rel = self.rel(path).ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidData, "not inside the cgroup tree")
        })?;
        tree.list(rel)
    }

    fn text(&self, path: &Path) -> Option<String> {
        self.read_file(path).ok().map(|b| String::from_utf8_lossy(&b).into_owned())
    }

    /// The directory read.
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// Which hierarchy holds the memory controller; `None` when neither does.
    pub fn layout(&self) -> Option<Layout> {
        let v1 = self.root.join("memory");
        let is_file = |p: PathBuf| self.kind(&p) == Some(Kind::File);
        if is_file(v1.join("memory.usage_in_bytes")) || is_file(v1.join("memory.stat")) {
            return Some(Layout::V1(v1));
        }
        for dir in [self.root.clone(), self.root.join("unified")] {
            let controllers = self.text(&dir.join("cgroup.controllers"));
            if controllers.is_some_and(|c| c.split_whitespace().any(|w| w == "memory")) {
                return Some(Layout::V2(dir));
            }
        }
        None
    }

    /// The directory of a cgroup path in the memory hierarchy.
    pub fn dir(layout: &Layout, path: &str) -> PathBuf {
        let base = match layout {
            Layout::V1(d) | Layout::V2(d) => d,
        };
        let rel = path.trim_start_matches('/');
        // A path from /proc/PID/cgroup never climbs and is never longer
        // than a path can be; refuse one that would.
        if rel.len() > MAX_PATH || rel.split('/').any(|c| c == "..") {
            return base.join("\0invalid");
        }
        if rel.is_empty() {
            base.clone()
        } else {
            base.join(rel)
        }
    }

    /// One cgroup's figures; `None` when its directory is not there.
    pub fn read(&self, layout: &Layout, path: &str) -> Option<CgroupMemory> {
        let dir = Self::dir(layout, path);
        if self.kind(&dir) != Some(Kind::Dir) {
            return None;
        }
        let file = |name: &str| self.text(&dir.join(name));
        let stat = file("memory.stat")
            .and_then(|s| memory_stat::parse(s.as_bytes()).ok())
            .unwrap_or_default();
        Some(match layout {
            Layout::V2(_) => from_v2(path, &file, &stat),
            Layout::V1(_) => from_v1(path, &file, &stat),
        })
    }
}

/// The `oom_kill` count of a keyed file: v2's `memory.events`, v1's
/// `memory.oom_control` (Linux 4.13 and later); `None` where absent.
fn oom_kills(text: Option<String>) -> Option<u64> {
    get(&memory_stat::parse(text?.as_bytes()).ok()?, "oom_kill")
}

fn get(stat: &[(String, u64)], key: &str) -> Option<u64> {
    stat.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
}

/// A number file; `max` (no limit) and absurd limits are `None`.
fn number(text: Option<String>) -> Option<u64> {
    text?.trim().parse::<u64>().ok()
}

fn limit(text: Option<String>) -> Option<u64> {
    number(text).filter(|&v| v < UNLIMITED)
}

fn from_v2(
    path: &str,
    file: &dyn Fn(&str) -> Option<String>,
    stat: &[(String, u64)],
) -> CgroupMemory {
    let s = |k| get(stat, k);
    let parts = [
        "slab_reclaimable",
        "slab_unreclaimable",
        "kernel_stack",
        "pagetables",
        "percpu",
        "vmalloc",
    ];
    let kernel = s("kernel")
        .or_else(|| s("slab_reclaimable").map(|_| parts.iter().filter_map(|k| get(stat, k)).sum()));
    CgroupMemory {
        path: path.to_string(),
        version: 2,
        usage: number(file("memory.current")),
        limit: limit(file("memory.max")),
        high: limit(file("memory.high")),
        peak: number(file("memory.peak")),
        oom_kills: oom_kills(file("memory.events")),
        swap: number(file("memory.swap.current")),
        anon: s("anon"),
        file: s("file"),
        active_file: s("active_file"),
        inactive_file: s("inactive_file"),
        shmem: s("shmem"),
        file_mapped: s("file_mapped"),
        slab_reclaimable: s("slab_reclaimable"),
        slab_unreclaimable: s("slab_unreclaimable"),
        kernel_stack: s("kernel_stack"),
        pagetables: s("pagetables"),
        sock: s("sock"),
        kernel,
    }
}

fn from_v1(
    path: &str,
    file: &dyn Fn(&str) -> Option<String>,
    stat: &[(String, u64)],
) -> CgroupMemory {
    // usage_in_bytes is hierarchical: so are the total_* keys.
    let s = |k: &str| get(stat, &format!("total_{k}")).or_else(|| get(stat, k));
    CgroupMemory {
        path: path.to_string(),
        version: 1,
        usage: number(file("memory.usage_in_bytes")),
        limit: limit(file("memory.limit_in_bytes")),
        high: None,
        peak: number(file("memory.max_usage_in_bytes")),
        oom_kills: oom_kills(file("memory.oom_control")),
        swap: s("swap"),
        anon: s("rss"),
        file: s("cache"),
        active_file: s("active_file"),
        inactive_file: s("inactive_file"),
        shmem: s("shmem"),
        file_mapped: s("mapped_file"),
        slab_reclaimable: None,
        slab_unreclaimable: None,
        kernel_stack: None,
        pagetables: None,
        sock: None,
        kernel: number(file("memory.kmem.usage_in_bytes")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_v2_and_hybrid_layouts_are_told_apart() {
        let d = tempfile::tempdir().unwrap();
        let r = CgroupRoot::new(d.path());
        assert_eq!(r.layout(), None);
        std::fs::create_dir_all(d.path().join("unified")).unwrap();
        std::fs::write(d.path().join("unified/cgroup.controllers"), "").unwrap();
        assert_eq!(r.layout(), None, "an empty v2 tree accounts no memory");
        std::fs::write(d.path().join("unified/cgroup.controllers"), "cpu memory pids\n").unwrap();
        assert_eq!(r.layout(), Some(Layout::V2(d.path().join("unified"))));
        std::fs::create_dir_all(d.path().join("memory")).unwrap();
        std::fs::write(d.path().join("memory/memory.usage_in_bytes"), "1\n").unwrap();
        assert_eq!(r.layout(), Some(Layout::V1(d.path().join("memory"))));
        let l = Layout::V2(d.path().into());
        assert_eq!(CgroupRoot::dir(&l, "/"), d.path());
        assert_eq!(CgroupRoot::dir(&l, "/a/b"), d.path().join("a/b"));
        assert!(!CgroupRoot::dir(&l, "/a/../../etc").starts_with(d.path().join("etc")));
    }

    #[test]
    fn v2_files_and_max() {
        let f = |n: &str| match n {
            "memory.current" => Some("1000\n".into()),
            "memory.max" => Some("max\n".into()),
            "memory.high" => Some("800\n".into()),
            _ => None,
        };
        let stat = memory_stat::parse(b"anon 10\nfile 20\nshmem 5\ninactive_file 7\nslab_reclaimable 1\nslab_unreclaimable 2\nkernel_stack 3\npagetables 4\nsock 9\n").unwrap();
        let m = from_v2("/x", &f, &stat);
        assert_eq!((m.usage, m.limit, m.high, m.peak), (Some(1000), None, Some(800), None));
        assert_eq!(m.kernel, Some(10), "the parts, on kernels without the kernel key");
        assert_eq!(m.working_set(), Some(993));
        assert_eq!(m.sock, Some(9));
    }

    #[test]
    fn v1_takes_hierarchical_totals_and_unlimited_is_none() {
        let f = |n: &str| match n {
            "memory.usage_in_bytes" => Some("2793472\n".into()),
            "memory.limit_in_bytes" => Some("9223372036854771712\n".into()),
            "memory.max_usage_in_bytes" => Some("4190208\n".into()),
            "memory.kmem.usage_in_bytes" => Some("827392\n".into()),
            _ => None,
        };
        let stat = memory_stat::parse(b"cache 1\nrss 2\ntotal_cache 90112\ntotal_rss 1695744\ntotal_shmem 0\ntotal_inactive_file 65536\n").unwrap();
        let m = from_v1("/p", &f, &stat);
        assert_eq!(m.limit, None);
        assert_eq!((m.anon, m.file, m.kernel), (Some(1695744), Some(90112), Some(827392)));
        assert_eq!(m.working_set(), Some(2793472 - 65536));
    }
}
