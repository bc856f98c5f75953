//! The one door to a `/proc` tree: the live `/proc`, or a recorded copy
//! (`--proc-root DIR`). Every Linux read goes through here, so every path is
//! testable on recorded data and on live processes alike, and every failure
//! becomes the same clear error.

use std::fs::File;
use std::io::{BufRead, ErrorKind};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::model::sizes::ROUNDED_PER_MAPPING;
use crate::model::{Figure, MemInfo, Process, Region, SizeSource, Sizes, Streamed};
pub(crate) use crate::source::bounded::read_bounded;
use crate::source::bounded::{Kind, Tree};
use crate::source::smaps::{SmapsError, SmapsReader};
use crate::source::stamp;
use crate::source::status::Status;

mod explain;

/// A `/proc` tree.
#[derive(Debug, Clone)]
pub struct ProcRoot {
    root: PathBuf,
    /// The kernel's procfs (at /proc or mounted elsewhere), not a recording.
    procfs: bool,
    /// Every tree but the live `/proc`: its directory held open, every
    /// file opened beneath it through no link (see `source::bounded`);
    /// the error number when it could not be opened.
    tree: Option<std::result::Result<Tree, i32>>,
}

impl Default for ProcRoot {
    fn default() -> Self {
        ProcRoot::new("/proc")
    }
}

impl ProcRoot {
    /// The tree at `root`: `/proc`, or a directory a capture wrote.
    pub fn new(root: impl Into<PathBuf>) -> ProcRoot {
        let root = root.into();
        let procfs = is_procfs(&root);
        // The live /proc keeps its plain opens (issue 25 counts its system
        // calls per process); its files are the kernel's.
        let tree = (root != Path::new("/proc"))
            .then(|| Tree::open(&root).map_err(|e| e.raw_os_error().unwrap_or(libc::EIO)));
        ProcRoot { root, procfs, tree }
    }

    /// The recorded tree's directory, or why it could not be opened.
    fn tree(&self) -> Option<std::io::Result<&Tree>> {
        self.tree.as_ref().map(|t| t.as_ref().map_err(|&e| std::io::Error::from_raw_os_error(e)))
    }

    /// `path` as a name inside the tree, when it is under the tree's root.
    fn inside<'p>(&self, path: &'p Path) -> std::io::Result<&'p Path> {
        path.strip_prefix(&self.root).map_err(|_| {
            std::io::Error::new(ErrorKind::InvalidData, "not inside the recorded tree")
        })
    }

    /// What `ROOT/REL` is (a file, a directory, or anything else, never
    /// followed in a recording); `None` when it is not there.
    pub(crate) fn kind(&self, rel: &Path) -> Option<Kind> {
        match self.tree() {
            None => {
                let m = std::fs::metadata(self.root.join(rel)).ok()?;
                Some(if m.is_file() {
                    Kind::File
                } else if m.is_dir() {
                    Kind::Dir
                } else {
                    Kind::Other
                })
            }
            Some(t) => t.ok()?.kind(rel).ok(),
        }
    }

    /// The directory `ROOT/REL` as a tree of its own (a recording's
    /// `sys/fs/cgroup`), reached through no link; `None` for the live
    /// `/proc`, whose neighbours are the kernel's.
    pub(crate) fn subtree(&self, rel: &Path) -> Option<std::io::Result<Tree>> {
        self.tree().map(|t| t?.subdir(rel))
    }

    /// The names in the directory `ROOT/REL`.
    pub(crate) fn list(&self, rel: &Path) -> std::io::Result<Vec<std::ffi::OsString>> {
        match self.tree() {
            None => {
                std::fs::read_dir(self.root.join(rel))?.map(|e| e.map(|e| e.file_name())).collect()
            }
            Some(t) => t?.list(rel),
        }
    }

    /// The text of the link `ROOT/REL` (`PID/fd/N`), never followed.
    pub(crate) fn read_link(&self, rel: &Path) -> std::io::Result<PathBuf> {
        match self.tree() {
            None => std::fs::read_link(self.root.join(rel)),
            Some(t) => t?.read_link(rel),
        }
    }

    /// Reads `ROOT/REL` whole, at most `limit` bytes: in a recording a
    /// regular file beneath the tree (see [`open_path`](Self::open_path)).
    pub(crate) fn read_rel(&self, rel: &Path, limit: usize) -> std::io::Result<Vec<u8>> {
        let mut f = self.open_path(&self.root.join(rel))?;
        let mut out = Vec::new();
        read_bounded(&mut f, &mut out, limit)?;
        Ok(out)
    }

    /// The directory read (`/proc`, or a recording).
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// `ROOT/PID/FILE`.
    pub(crate) fn pid_file(&self, pid: u32, file: &str) -> PathBuf {
        self.root.join(pid.to_string()).join(file)
    }

    /// Whether this is the live `/proc` (where PIDs can be signalled and
    /// owners looked up) rather than a recording.
    pub fn is_live(&self) -> bool {
        self.root == Path::new("/proc")
    }

    /// Whether the tree is the kernel's procfs, wherever it is mounted: the
    /// live `/proc`, or a host's `/proc` mounted into a container at
    /// `/host/proc`. Its files are read as live data (`stat` for identity,
    /// a second look for processes that exit mid-read); unlike
    /// [`is_live`](Self::is_live) it says nothing of whether its PIDs are
    /// this machine's to signal or to ask `nvidia-smi` about.
    pub fn is_procfs(&self) -> bool {
        self.procfs
    }

    /// The tree's `meminfo` (the machine's own accounting), when readable.
    pub fn meminfo(&self) -> Option<MemInfo> {
        let raw = self.read_path(&self.root.join("meminfo")).ok()?;
        Some(crate::source::meminfo::parse(&String::from_utf8_lossy(&raw)))
    }

    /// Reads a small file of the tree by path (`meminfo`, ...): at most
    /// 1 MiB (`MAX_SMALL`) bytes and, in a recorded tree, a regular file.
    pub fn read_path(&self, path: &Path) -> Result<Vec<u8>> {
        let bad = |e: std::io::Error| match e.kind() {
            ErrorKind::InvalidData => Error::Parse { path: path.into(), message: e.to_string() },
            _ => Error::io(path, e),
        };
        let mut f = self.open_path(path).map_err(bad)?;
        let mut out = Vec::new();
        read_small(&mut f, &mut out).map_err(bad)?;
        Ok(out)
    }

    /// Every numeric entry of the tree: the processes it holds, sorted.
    pub fn pids(&self) -> Result<Vec<u32>> {
        let names = self.list(Path::new(".")).map_err(|e| Error::io(&self.root, e))?;
        let mut pids: Vec<u32> =
            names.iter().filter_map(|n| n.to_str().and_then(|s| s.parse().ok())).collect();
        pids.sort_unstable();
        Ok(pids)
    }

    /// Opens `ROOT/PID/FILE`, turning the usual failures into errors that
    /// say which process and what would help.
    pub(crate) fn open(&self, pid: u32, file: &str) -> Result<File> {
        let path = self.pid_file(pid, file);
        self.open_path(&path).map_err(|e| self.explain(pid, path, e))
    }

    /// Opens a file of the tree. In a recorded tree only a regular file
    /// beneath it is read, through no symbolic link (a link to a root-only
    /// file must not be read as root and shown); a FIFO, a device or a
    /// socket is refused, and opening never blocks (`O_NONBLOCK`). The
    /// live `/proc`'s files are opened as they are.
    fn open_path(&self, path: &Path) -> std::io::Result<File> {
        match self.tree() {
            None => File::open(path),
            Some(t) => t?.open_file(self.inside(path)?),
        }
    }

    /// Why a capture marked `pid` as not recorded consistently (the
    /// `memtally-incomplete` file, cut to 200
    /// characters); `None` for a whole recording and for procfs.
    pub fn incomplete(&self, pid: u32) -> Option<String> {
        if self.is_procfs() {
            return None;
        }
        let raw = match self.read(pid, crate::source::capture::INCOMPLETE) {
            Ok(raw) => raw,
            Err(Error::Io { source, .. }) if source.kind() == ErrorKind::NotFound => return None,
            Err(Error::NoSuchProcess { .. }) => return None,
            // There but unreadable: still a mark.
            Err(_) => Vec::new(),
        };
        let text = String::from_utf8_lossy(&raw);
        let why: String = text.trim().chars().take(200).filter(|c| !c.is_control()).collect();
        Some(if why.is_empty() { "marked incomplete".to_string() } else { why })
    }

    /// Reads a whole small file (`status`, `cmdline`, `comm`): at most
    /// [`MAX_SMALL`] bytes, else a bad-input error.
    pub(crate) fn read(&self, pid: u32, file: &str) -> Result<Vec<u8>> {
        self.read_up_to(pid, file, MAX_SMALL)
    }

    /// Reads a whole file of the process, at most `limit` bytes.
    pub(crate) fn read_up_to(&self, pid: u32, file: &str, limit: usize) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        let mut f = self.open(pid, file)?;
        read_bounded(&mut f, &mut out, limit)
            .map_err(|e| self.explain(pid, self.pid_file(pid, file), e))?;
        Ok(out)
    }

    /// The process's identity: short name and command line.
    pub(crate) fn identity(&self, pid: u32) -> Result<(String, String)> {
        let comm = match self.read(pid, "comm") {
            Ok(b) => String::from_utf8_lossy(&b).trim_end_matches('\n').to_string(),
            Err(Error::NoSuchProcess { .. }) => {
                return Err(Error::NoSuchProcess { pid, path: self.root.join(pid.to_string()) })
            }
            Err(_) => self
                .read(pid, "status")
                .ok()
                .and_then(|b| Status::parse(&b).name)
                .unwrap_or_default(),
        };
        let cmdline = self.read(pid, "cmdline").map(|b| join_cmdline(&b)).unwrap_or_default();
        Ok((comm, cmdline))
    }

    /// Reads one process's regions: smaps when it can, maps otherwise (then
    /// only virtual sizes are known, and `source` says so). A kernel thread
    /// or a process that cannot be read at all is an error.
    pub fn process(&self, pid: u32) -> Result<Process> {
        // A process that exec'd while being read is read once more.
        let mut tries = 0;
        loop {
            let mut regions = Vec::new();
            match self.process_with(pid, |_, r| regions.push(r)) {
                Ok(mut p) => {
                    p.regions = regions;
                    p.streamed = None;
                    return Ok(p);
                }
                Err(Error::Changed { .. } | Error::Unsteady { .. }) if tries == 0 => tries += 1,
                Err(e) => return Err(e),
            }
        }
    }

    /// Reads one process as [`process`](Self::process) does, but hands
    /// each region to `each` as it is parsed instead of keeping it: memory
    /// stays bounded by one region, whatever the size of the smaps. `each`
    /// also gets the process as known so far (identity and source). The
    /// returned process has no regions and its totals in `streamed`.
    ///
    /// Errors found after regions were handed out (the process exited
    /// while being read: [`Error::Exited`]; it exec'd: [`Error::Changed`],
    /// see the `source::stamp` module) still return `Err`: the caller must
    /// then drop what it made of them.
    pub fn process_with(
        &self,
        pid: u32,
        mut each: impl FnMut(&Process, Region),
    ) -> Result<Process> {
        // The rollup is a second walk of the page tables: it runs on its
        // own thread while smaps is read and parsed (docs/benchmarks.md).
        std::thread::scope(|scope| {
            let rollup = scope.spawn(|| self.rollup(pid).ok());
            self.process_streamed(pid, &mut each, || rollup.join().ok().flatten())
        })
    }

    fn process_streamed(
        &self,
        pid: u32,
        each: &mut impl FnMut(&Process, Region),
        rollup: impl FnOnce() -> Option<Sizes>,
    ) -> Result<Process> {
        // Taken first: an exit or exec from here on shows in the second.
        let before = stamp::stamp(self, pid)?;
        let (comm, cmdline) = self.identity(pid)?;
        let status = self.read(pid, "status").ok().map(|b| Status::parse(&b));
        let kernel_thread = status.as_ref().and_then(|s| s.kthread).unwrap_or(false);
        let mut process = Process {
            pid,
            comm,
            cmdline,
            source: SizeSource::Smaps,
            regions: Vec::new(),
            rollup: None,
            streamed: None,
        };
        let mut sum = Sizes::default();
        let mut count = 0usize;
        let mut take = |p: &Process, r: Region| {
            sum.add_region(&r);
            count += 1;
            each(p, r);
        };
        match self.stream_regions(pid, "smaps", |r| take(&process, r)) {
            Ok(()) => {}
            // Nothing was handed out: the file could not be opened.
            Err(smaps_err @ Error::PermissionDenied { .. }) => {
                process.source = SizeSource::Maps;
                let readable = self.stream_regions(pid, "maps", |r| take(&process, r));
                if readable.is_err() || count == 0 {
                    return Err(smaps_err);
                }
            }
            Err(e) => return Err(e),
        }
        // A process that exits or execs while its smaps is read leaves a
        // list cut short at a mapping boundary: call it gone (or changed)
        // rather than show part of it as the whole.
        if stamp::check(self, pid, &process.comm, before.as_ref())? == stamp::Change::Execed {
            return Err(Error::Changed { pid, comm: process.comm });
        }
        // A capture that saw the process exit says so in its own mark
        // (then what it kept is shown, as partial); a recorded zombie
        // without one had exited before it was recorded.
        let marked = self.incomplete(pid).is_some();
        if !self.is_procfs() && !marked && status.as_ref().is_some_and(Status::exited) {
            return Err(Error::Exited { pid, comm: process.comm });
        }
        if marked && count == 0 {
            return Err(Error::Exited { pid, comm: process.comm });
        }
        let kernel_thread = kernel_thread || before.as_ref().is_some_and(|s| s.kernel_thread());
        if count == 0 && (kernel_thread || process.cmdline.is_empty()) {
            return Err(Error::KernelThread { pid, comm: process.comm });
        }
        if process.source == SizeSource::Smaps {
            let rollup = rollup();
            // A live read whose regions sum to far less than the rollup
            // read beside them lost mappings on the way: a second sign of
            // an exit or exec, beside the stamp.
            if let Some(r) = rollup.as_ref().filter(|r| self.is_procfs() && far_short(&sum, r)) {
                return Err(Error::Unsteady {
                    pid,
                    comm: process.comm,
                    summed_kib: sum.rss.unwrap_or(0) / 1024,
                    rollup_kib: r.rss.unwrap_or(0) / 1024,
                });
            }
            process.rollup = rollup.filter(|r| same_instant(r, &sum, count));
        }
        process.streamed = Some(Streamed { totals: sum, regions: count });
        Ok(process)
    }

    /// Reads `smaps_rollup`: the kernel's sums over every mapping.
    pub(crate) fn rollup(&self, pid: u32) -> Result<Sizes> {
        // About 1 KiB: read whole, then parse from memory.
        let mut text = Vec::new();
        let mut f = self.open(pid, "smaps_rollup")?;
        read_small(&mut f, &mut text)
            .map_err(|e| self.explain(pid, self.pid_file(pid, "smaps_rollup"), e))?;
        let mut regions = self.parse_regions(pid, "smaps_rollup", &text[..])?;
        match regions.pop() {
            Some(r) if regions.is_empty() => {
                // The header's range spans the whole address space; it is
                // not a size, so leave `size` unknown.
                Ok(Sizes { size: None, ..r.sizes })
            }
            _ => Err(Error::Parse {
                path: self.pid_file(pid, "smaps_rollup"),
                message: "expected exactly one [rollup] entry".into(),
            }),
        }
    }

    /// Parses `ROOT/PID/FILE` (smaps or maps) into regions.
    pub(crate) fn read_regions(&self, pid: u32, file: &str) -> Result<Vec<Region>> {
        let mut out = Vec::new();
        self.stream_regions(pid, file, |r| out.push(r))?;
        Ok(out)
    }

    /// Parses `ROOT/PID/FILE` (smaps or maps), handing each region to `each`.
    pub(crate) fn stream_regions(
        &self,
        pid: u32,
        file: &str,
        each: impl FnMut(Region),
    ) -> Result<()> {
        let f = self.open(pid, file)?;
        // smaps of a big process is megabytes that the kernel generates as
        // we read: a helper thread reads the next chunk while this one
        // parses (see PrefetchReader and docs/benchmarks.md).
        self.parse_into(pid, file, crate::source::prefetch::PrefetchReader::new(f), each)
    }

    /// Parses smaps or maps text read from `ROOT/PID/FILE` into regions.
    fn parse_regions(&self, pid: u32, file: &str, input: impl BufRead) -> Result<Vec<Region>> {
        let mut out = Vec::new();
        self.parse_into(pid, file, input, |r| out.push(r))?;
        Ok(out)
    }

    fn parse_into(
        &self,
        pid: u32,
        file: &str,
        input: impl BufRead,
        mut each: impl FnMut(Region),
    ) -> Result<()> {
        let path = self.pid_file(pid, file);
        let mut smaps = SmapsReader::new(input);
        let mut hugetlbfs = None;
        loop {
            match smaps.next_region() {
                Ok(Some(mut r)) => {
                    let load = || crate::source::mounts::hugetlbfs_points(self, pid);
                    crate::source::mounts::mark_hugetlbfs(&mut r, &mut hugetlbfs, load);
                    each(r)
                }
                Ok(None) => return Ok(()),
                Err(SmapsError { os_error: Some(code), .. }) => {
                    return Err(self.explain(pid, path, std::io::Error::from_raw_os_error(code)));
                }
                Err(e) => return Err(Error::Parse { path, message: e.to_string() }),
            }
        }
    }
}

/// Whether a rollup describes the same address space as `regions`
/// mappings whose sum is `sum`: every figure that is not proportional must
/// be equal, and every proportional one at most the rounding above the
/// sum (`smaps` rounds each mapping's down to a whole kB, the rollup only
/// its total). The second check matters for a process that shares pages:
/// its PSS moves when a sharer writes or exits while its resident figures
/// stay, and a rollup taken a moment after the mappings (a capture records
/// the two files one after the other) is then of another instant.
fn same_instant(rollup: &Sizes, sum: &Sizes, regions: usize) -> bool {
    let rounding = (regions as u64).saturating_mul(1024);
    let exact = [
        Figure::Rss,
        Figure::SharedClean,
        Figure::SharedDirty,
        Figure::PrivateClean,
        Figure::PrivateDirty,
        Figure::Anonymous,
        Figure::Swap,
    ]
    .iter()
    .all(|&k| rollup.field(k) == sum.field(k));
    let rounded = ROUNDED_PER_MAPPING.iter().all(|&k| match (rollup.field(k), sum.field(k)) {
        (Some(r), Some(s)) => r >= s && r - s <= rounding,
        _ => true,
    });
    exact && rounded
}

/// Whether regions summing to `sum` fall short of `rollup`'s resident
/// bytes by more than memory moves between two reads of a steady process
/// (an eighth of it, and at least 1 MiB). Rounding never comes near: the
/// resident figures of both are sums of the same whole kB.
fn far_short(sum: &Sizes, rollup: &Sizes) -> bool {
    let (sum, rollup) = (sum.rss.unwrap_or(0), rollup.rss.unwrap_or(0));
    sum.saturating_add((rollup / 8).max(1 << 20)) < rollup
}

/// Whether `path` is on a procfs mount (statfs magic PROC_SUPER_MAGIC).
fn is_procfs(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    const PROC_SUPER_MAGIC: i64 = 0x9fa0;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else { return false };
    // SAFETY: statfs(2) fills the zeroed struct it is given; `c` is a
    // NUL-terminated path that outlives the call.
    let mut fs: libc::statfs = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::statfs(c.as_ptr(), &mut fs) } == 0;
    #[allow(clippy::unnecessary_cast)] // f_type's width differs between libcs
    let magic = fs.f_type as i64;
    ok && magic == PROC_SUPER_MAGIC
}

/// The most a small `/proc` file (`status`, `cmdline`, `comm`, `stat`,
/// `smaps_rollup`, `meminfo`) may hold: real ones are a few KiB
/// (`cmdline` is at most a few hundred KiB of arguments).
pub const MAX_SMALL: usize = 1 << 20;

/// The most a whole `smaps` read into memory (by `capture`) may hold:
/// about 150,000 mappings. Other readers stream it in bounded memory.
pub const MAX_SMAPS: usize = 256 << 20;

/// Reads a small `/proc` file to its end into `out`, at most
/// [`MAX_SMALL`] bytes (more is an `InvalidData` error).
pub(crate) fn read_small(f: &mut File, out: &mut Vec<u8>) -> std::io::Result<()> {
    read_bounded(f, out, MAX_SMALL)
}

/// `/proc/PID/cmdline` is NUL-separated; show it with spaces.
pub(crate) fn join_cmdline(raw: &[u8]) -> String {
    let trimmed = raw.strip_suffix(b"\0").unwrap_or(raw);
    String::from_utf8_lossy(trimmed).replace('\0', " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn procfs_is_told_from_recordings_wherever_it_is_mounted() {
        assert!(ProcRoot::default().is_procfs() && ProcRoot::default().is_live());
        // A host's /proc seen through another path (as a container's
        // /host/proc): procfs, not the live /proc.
        let dir = std::env::temp_dir().join(format!("memtally-procfs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let link = dir.join("proc");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink("/proc", &link).unwrap();
        let host = ProcRoot::new(&link);
        let (procfs, live) = (host.is_procfs(), host.is_live());
        std::fs::remove_file(&link).unwrap();
        std::fs::remove_dir(&dir).unwrap();
        assert!(procfs && !live);
        let recorded = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../testdata/fixtures/linux/python3-mmap/proc");
        assert!(recorded.is_dir());
        assert!(!ProcRoot::new(recorded).is_procfs());
        assert!(!ProcRoot::new("/nonexistent/proc").is_procfs());
        assert!(!ProcRoot::new("bad\0path").is_procfs());
    }

    #[test]
    fn read_small_reads_past_its_first_chunk_and_appends() {
        let path = std::env::temp_dir().join(format!("memtally-read-small-{}", std::process::id()));
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let mut out = b"head".to_vec();
        let got = read_small(&mut File::open(&path).unwrap(), &mut out);
        std::fs::remove_file(&path).unwrap();
        got.unwrap();
        assert_eq!(&out[..4], b"head");
        assert_eq!(&out[4..], &data[..]);
    }
}
