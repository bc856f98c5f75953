//! The one door to a `/proc` tree: the live `/proc`, or a recorded copy
//! (a recorded tree). Every Linux read goes through here, so every path is
//! testable on recorded data and on live processes alike, and every failure
//! becomes the same clear error.

use std::fs::File;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::model::MemInfo;
pub(crate) use crate::source::bounded::read_bounded;
use crate::source::bounded::{Kind, Tree};
use crate::source::closes::Closes;
use crate::source::parse::status;

mod explain;
mod read;

pub use read::ReadPlan;
pub(crate) use read::RegionsFile;

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
    /// Where the host's cgroup filesystem is (`--cgroup-root`); `None`:
    /// the live `/sys/fs/cgroup`, or a recording's own copy.
    cgroup_root: Option<PathBuf>,
    /// Where the reader's cgroup namespace root lies on that tree, worked
    /// out once (`source::cgroup_ns`) and shared by every clone.
    cgroup_ns: std::sync::Arc<std::sync::OnceLock<Option<String>>>,
}

/// A capture's mark, as read: `None` when there is none; its line cut to
/// 200 characters without control characters (an unreadable mark still
/// marks).
fn mark_text(read: Result<Vec<u8>>) -> Option<String> {
    let raw = match read {
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

impl Default for ProcRoot {
    fn default() -> Self {
        ProcRoot::live()
    }
}

impl ProcRoot {
    /// The live system's `/proc` (as [`ProcRoot::default`]), named so that
    /// a reader of the call sees it reads live processes, not a recording.
    pub fn live() -> ProcRoot {
        ProcRoot::new("/proc")
    }

    /// The tree at `root`: `/proc`, or a directory a capture wrote.
    pub fn new(root: impl Into<PathBuf>) -> ProcRoot {
        let root = root.into();
        let procfs = crate::sys::path_is_procfs(&root);
        // The live /proc keeps its plain opens (issue 25 counts its system
        // calls per process); its files are the kernel's.
        let tree = (root != Path::new("/proc"))
            .then(|| Tree::open(&root).map_err(|e| e.raw_os_error().unwrap_or(libc::EIO)));
        ProcRoot { root, procfs, tree, cgroup_root: None, cgroup_ns: Default::default() }
    }

    /// The same tree, with the host's cgroup filesystem read at `dir`
    /// (`--cgroup-root`: where a container mounts the host's
    /// `/sys/fs/cgroup`) instead of the live `/sys/fs/cgroup`.
    pub fn with_cgroup_root(mut self, dir: impl Into<PathBuf>) -> ProcRoot {
        self.cgroup_root = Some(dir.into());
        self.cgroup_ns = Default::default();
        self
    }

    /// The cgroup filesystem given with [`with_cgroup_root`](Self::with_cgroup_root).
    pub fn cgroup_root(&self) -> Option<&Path> {
        self.cgroup_root.as_deref()
    }

    /// The memo of where the reader's cgroup namespace root lies on the
    /// host's tree (filled by `source::cgroup_ns`).
    pub(crate) fn cgroup_ns(&self) -> &std::sync::OnceLock<Option<String>> {
        &self.cgroup_ns
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

    /// The names in the machine's `/sys/REL` (live) or a recording's
    /// `sys/REL`; none where it cannot be listed.
    pub(crate) fn sys_list(&self, rel: &str) -> Vec<std::ffi::OsString> {
        match self.is_live() {
            true => std::fs::read_dir(Path::new("/sys").join(rel))
                .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name()).collect())
                .unwrap_or_default(),
            false => self.list(&Path::new("sys").join(rel)).unwrap_or_default(),
        }
    }

    /// Reads the machine's `/sys/REL` (live: sysfs's links into
    /// `/sys/devices` followed, they are the kernel's) or a recording's
    /// `sys/REL` (see [`read_rel`](Self::read_rel)), at most `limit` bytes.
    pub(crate) fn sys_read(&self, rel: &Path, limit: usize) -> std::io::Result<Vec<u8>> {
        if !self.is_live() {
            return self.read_rel(&Path::new("sys").join(rel), limit);
        }
        let mut f = File::open(Path::new("/sys").join(rel))?;
        let mut out = Vec::new();
        read_bounded(&mut f, &mut out, limit)?;
        Ok(out)
    }

    /// How many mappings `PID/maps` lists, counted up to `limit` and no
    /// further (`limit + 1` then: "more"); `None` where it cannot be read.
    /// Cheaper than smaps by far (no page-table walk, one short line per
    /// mapping), and stopping early spares the kernel the rest: procfs
    /// writes maps a buffer at a time, as it is read. What `report` uses
    /// to leave a process of many mappings to its rollup.
    pub(crate) fn mappings_up_to(&self, pid: u32, limit: usize) -> Option<usize> {
        use std::io::Read;
        let mut f = self.open_path(&self.pid_file(pid, "maps")).ok()?;
        let mut buf = vec![0u8; 64 * 1024];
        let mut lines = 0usize;
        loop {
            let n = match f.read(&mut buf) {
                Ok(0) => return Some(lines),
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => return None,
            };
            lines += buf[..n].iter().filter(|&&b| b == b'\n').count();
            if lines > limit {
                return Some(limit + 1);
            }
        }
    }

    /// The directory read (`/proc`, or a recording).
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// `ROOT/PID/FILE`, in one allocation (`top` opens several files of
    /// every process by path: docs/benchmarks.md).
    pub(crate) fn pid_file(&self, pid: u32, file: &str) -> PathBuf {
        use std::fmt::Write;
        let root = self.root.as_os_str();
        let mut path = std::ffi::OsString::with_capacity(root.len() + file.len() + 12);
        path.push(root);
        let sep = if root.as_encoded_bytes().ends_with(b"/") { "" } else { "/" };
        let _ = write!(path, "{sep}{pid}/{file}");
        PathBuf::from(path)
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
        crate::source::parse::meminfo::parse(&raw).ok()
    }

    /// OOM kills since boot: `vmstat`'s `oom_kill` (Linux 4.13 and
    /// later); `None` where the file or the key is absent.
    pub fn oom_kills(&self) -> Option<u64> {
        let raw = self.read_path(&self.root.join("vmstat")).ok()?;
        std::str::from_utf8(&raw)
            .ok()?
            .lines()
            .find_map(|l| l.strip_prefix("oom_kill ")?.trim().parse().ok())
    }

    /// The OOM killer's badness of a process (`PID/oom_score`, 0 to 2000:
    /// the one it kills first has the highest); `None` where the file is
    /// absent (a recorded tree without it, an exited process) or not a number.
    pub fn oom_score(&self, pid: u32) -> Option<u32> {
        let raw = self.read_path(&self.root.join(pid.to_string()).join("oom_score")).ok()?;
        std::str::from_utf8(&raw).ok()?.trim().parse().ok()
    }

    /// Reads a small file of the tree by path (`meminfo`, ...): at most
    /// 1 MiB (`MAX_SMALL`) bytes and, in a recorded tree, a regular file.
    pub(crate) fn read_path(&self, path: &Path) -> Result<Vec<u8>> {
        let bad = |e: std::io::Error| match e.kind() {
            ErrorKind::InvalidData => Error::Parse { path: path.into(), message: e.to_string() },
            _ => Error::io(path, e),
        };
        let mut f = self.open_path(path).map_err(bad)?;
        let mut out = Vec::new();
        read_bounded(&mut f, &mut out, MAX_SMALL).map_err(bad)?;
        Ok(out)
    }

    /// Every numeric entry of the tree: the processes it holds, sorted.
    pub fn pids(&self) -> Result<Vec<u32>> {
        let names = self.list(Path::new(".")).map_err(|e| Error::io(&self.root, e))?;
        let mut pids = numbered(&names);
        // A recording with neither a process directory nor the machine's
        // meminfo is the wrong directory, often a recording's parent with
        // the processes in DIR/proc; so is one whose DIR/proc has them. (A
        // meminfo alone is a recording of the machine without processes.)
        if pids.is_empty() && !self.is_procfs() {
            let nested = self.list(Path::new("proc")).map_or(0, |n| numbered(&n).len());
            if nested > 0 || !names.iter().any(|n| n == "meminfo") {
                return Err(Error::NoProcessDirs { root: self.root.clone(), nested });
            }
        }
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
        mark_text(self.read(pid, crate::source::capture::INCOMPLETE))
    }

    /// Why the capture that wrote this tree did not finish (its
    /// `memtally-incomplete` file, cut to 200 characters): processes it
    /// selected are missing. `None` for a whole recording and for procfs.
    pub(crate) fn cut_short(&self) -> Option<String> {
        if self.is_procfs() {
            return None;
        }
        mark_text(self.read_path(&self.root.join(crate::source::capture::TREE_INCOMPLETE)))
    }

    /// Reads a whole small file (`status`, `cmdline`, `comm`): at most
    /// [`MAX_SMALL`] bytes, else a bad-input error.
    pub(crate) fn read(&self, pid: u32, file: &str) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.read_open(pid, file, &mut self.open(pid, file)?, &mut out, MAX_SMALL)?;
        Ok(out)
    }

    /// Reads a whole small file of the process into `out` (cleared
    /// first), as [`read`](Self::read) does, for a caller that reads many
    /// processes and keeps one buffer for all (`source::scan`). The file
    /// is closed with `closes`'s batch.
    pub(crate) fn read_reusing(
        &self,
        pid: u32,
        file: &str,
        out: &mut Vec<u8>,
        closes: &Closes,
    ) -> Result<()> {
        out.clear();
        let mut f = self.open(pid, file)?;
        let read = self.read_open(pid, file, &mut f, out, MAX_SMALL);
        closes.later(f);
        read
    }

    /// Reads `file` of the process, open as `f`, to its end into `out`:
    /// on procfs a read that leaves room in the buffer ends the file,
    /// without the last read that returns 0, for the [`SINGLE_RECORD`]
    /// and [`ENDS_AT_SHORT_READ`] files.
    fn read_open(
        &self,
        pid: u32,
        file: &str,
        f: &mut File,
        out: &mut Vec<u8>,
        limit: usize,
    ) -> Result<()> {
        let one_go = SINGLE_RECORD.contains(&file) || ENDS_AT_SHORT_READ.contains(&file);
        let read = match self.procfs && one_go {
            true => crate::source::bounded::read_record(f, out, limit),
            false => read_bounded(f, out, limit),
        };
        read.map_err(|e| self.explain(pid, self.pid_file(pid, file), e))
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
                .and_then(|b| status::parse(&b).ok()?.name)
                .unwrap_or_default(),
        };
        let cmdline = self.read(pid, "cmdline").map(|b| join_cmdline(&b)).unwrap_or_default();
        Ok((comm, cmdline))
    }
}

/// The PIDs among directory entry names, unsorted.
fn numbered(names: &[std::ffi::OsString]) -> Vec<u32> {
    names.iter().filter_map(|n| n.to_str().and_then(|s| s.parse().ok())).collect()
}

/// The files of a process that procfs prints as one record
/// (`single_open`), read without a last read for the end on procfs (see
/// [`read_record`](crate::source::bounded::read_record)).
pub(crate) const SINGLE_RECORD: &[&str] = &["status", "stat", "statm", "comm", "smaps_rollup"];

/// The files of a process that procfs does not print as one record but
/// that still fill the whole buffer of a read unless their end comes
/// first, so that a short read is their end, as for [`SINGLE_RECORD`]:
/// `cmdline` (`get_mm_cmdline` copies page after page until the count
/// asked for is met or the arguments end; a title set by
/// `setproctitle` is at most one page, less than the first read's 16
/// KiB) and `cgroup` (a `single_open` seq file, `proc_cgroup_show`).
pub(crate) const ENDS_AT_SHORT_READ: &[&str] = &["cmdline", "cgroup"];

/// The most a small `/proc` file (`status`, `cmdline`, `comm`, `stat`,
/// `smaps_rollup`, `meminfo`) may hold: real ones are a few KiB
/// (`cmdline` is at most a few hundred KiB of arguments).
pub(crate) const MAX_SMALL: usize = 1 << 20;

/// The most a `smaps` that `capture` copies may hold: about 150,000
/// mappings (a recording's readers stream it in bounded memory).
pub const MAX_SMAPS: usize = 256 << 20;

/// `/proc/PID/cmdline` is NUL-separated; show it with spaces.
pub(crate) fn join_cmdline(raw: &[u8]) -> String {
    let trimmed = raw.strip_suffix(b"\0").unwrap_or(raw);
    String::from_utf8_lossy(trimmed).replace('\0', " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The test's child, killed and reaped however the test ends.
    struct Child(std::process::Child);
    impl Drop for Child {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    /// Stops the test's own child and waits until it is stopped: SIGSTOP
    /// is delivered asynchronously, and until then the child's `status`
    /// and `stat` change between two reads that a test compares.
    fn stop(pid: u32) {
        // The child the calling test started.
        let child = rustix::process::Pid::from_raw(pid as i32).unwrap();
        rustix::process::kill_process(child, rustix::process::Signal::STOP).unwrap();
        let status = format!("/proc/{pid}/status");
        let asked = std::time::Instant::now();
        while !std::fs::read_to_string(&status).unwrap_or_default().contains("State:\tT") {
            assert!(asked.elapsed() < std::time::Duration::from_secs(10), "{pid} never stopped");
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }

    #[test]
    fn single_record_files_read_in_one_go_equal_the_read_to_the_end() {
        // A stopped process: its files hold still between the two reads.
        let Ok(child) = std::process::Command::new("sleep").arg("1000").spawn() else {
            eprintln!("skipped: cannot start sleep");
            return;
        };
        let child = Child(child);
        let pid = child.0.id();
        stop(pid);
        let root = ProcRoot::default();
        for file in SINGLE_RECORD {
            let fast = root.read(pid, file).unwrap();
            let mut slow = Vec::new();
            read_bounded(&mut File::open(root.pid_file(pid, file)).unwrap(), &mut slow, MAX_SMALL)
                .unwrap();
            assert!(!fast.is_empty(), "{file}");
            assert_eq!(String::from_utf8_lossy(&fast), String::from_utf8_lossy(&slow), "{file}");
        }
        drop(child);
    }

    #[test]
    fn files_ended_by_a_short_read_read_in_one_go_equal_the_read_to_the_end() {
        // A stopped shell with a command line longer than the first read
        // (16 KiB): the full-buffer path and the short last read both run.
        // It waits on its own input (a pipe this test holds), so killing
        // it leaves no child of its own behind.
        let long = "a".repeat(40_000);
        let spawned = std::process::Command::new("sh")
            .args(["-c", "read line", "memtally-test", &long])
            .stdin(std::process::Stdio::piped())
            .spawn();
        let Ok(child) = spawned else {
            eprintln!("skipped: cannot start sh");
            return;
        };
        let child = Child(child);
        let pid = child.0.id();
        stop(pid);
        let root = ProcRoot::default();
        let mut buf = b"left over".to_vec();
        for file in ENDS_AT_SHORT_READ.iter().chain(SINGLE_RECORD) {
            root.read_reusing(pid, file, &mut buf, &Closes::default()).unwrap();
            let mut slow = Vec::new();
            read_bounded(&mut File::open(root.pid_file(pid, file)).unwrap(), &mut slow, MAX_SMALL)
                .unwrap();
            assert!(!buf.is_empty(), "{file}");
            assert_eq!(String::from_utf8_lossy(&buf), String::from_utf8_lossy(&slow), "{file}");
        }
        root.read_reusing(pid, "cmdline", &mut buf, &Closes::default()).unwrap();
        assert!(buf.len() > 40_000 && buf.ends_with(format!("{long}\0").as_bytes()));
        drop(child);
    }

    #[test]
    fn procfs_is_told_from_recordings_wherever_it_is_mounted() {
        assert!(ProcRoot::default().is_procfs() && ProcRoot::default().is_live());
        for root in ["/proc", "/proc/"] {
            assert_eq!(ProcRoot::new(root).pid_file(12, "stat"), Path::new("/proc/12/stat"));
        }
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
        if let Some(recorded) = crate::testdata::testdata("fixtures/linux/python3-mmap/proc") {
            assert!(recorded.is_dir());
            assert!(!ProcRoot::new(recorded).is_procfs());
        }
        assert!(!ProcRoot::new("/nonexistent/proc").is_procfs());
        assert!(!ProcRoot::new("bad\0path").is_procfs());
    }

    /// `--proc-root` at a recording's parent (the PIDs are in DIR/proc)
    /// is an error that names the directory meant, not an empty table.
    #[test]
    fn a_tree_without_process_directories_says_where_they_are() {
        let Some(fixture) = crate::testdata::testdata("fixtures/linux") else { return };
        let parent = fixture.join("python3-mmap");
        let e = ProcRoot::new(&parent).pids().unwrap_err();
        assert!(matches!(e, Error::NoProcessDirs { nested: 1, .. }), "{e:?}");
        assert_eq!(
            e.to_string(),
            format!(
                "no process directories under {} ({} has 1: give that directory)",
                parent.display(),
                parent.join("proc").display()
            )
        );
        assert_eq!(ProcRoot::new(parent.join("proc")).pids().unwrap(), [11364]);
        let empty = tempfile::tempdir().unwrap();
        let e = ProcRoot::new(empty.path()).pids().unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("no process directories under {}", empty.path().display())
        );
    }

    #[test]
    fn read_bounded_reads_past_its_first_chunk_and_appends() {
        let path = std::env::temp_dir().join(format!("memtally-read-small-{}", std::process::id()));
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let mut out = b"head".to_vec();
        let got = read_bounded(&mut File::open(&path).unwrap(), &mut out, MAX_SMALL);
        std::fs::remove_file(&path).unwrap();
        got.unwrap();
        assert_eq!(&out[..4], b"head");
        assert_eq!(&out[4..], &data[..]);
    }
}
