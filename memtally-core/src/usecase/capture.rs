//! `capture`: records the `/proc` files memtally reads (and the GPU fd
//! targets and fdinfo) into a directory laid out like `/proc`, to analyse
//! later as a recorded root ([`ProcRoot`] over
//! the directory). Every file goes through [`crate::write`].

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::analyze::select::Selection;
use crate::error::{Error, Result, UseCase};
use crate::model::{Needs, ProcInfo};
use crate::source::bounded::{read_chunk, too_big};
use crate::source::capture::{INCOMPLETE, MACHINE_FILES, PROCESS_FILES, TREE_INCOMPLETE};
use crate::source::gpu::{self, FD_TARGETS};
use crate::source::parse::status;
use crate::source::proc_root::MAX_SMAPS;
use crate::source::{stamp, ProcRoot};
use crate::usecase::select::{require_selection, select};
use crate::write::{Access, Dir, NewFile, Staged};

/// What one process's capture wrote and what it had to leave out.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct CaptureReport {
    /// The files written, in order.
    pub written: Vec<PathBuf>,
    /// (file, why) for files that could not be read.
    pub skipped: Vec<(PathBuf, String)>,
    /// Why the process could not be recorded consistently (it exited, or
    /// exec'd on the second try too): the recording is kept, marked with
    /// `memtally-incomplete`, and read back as partial.
    pub incomplete: Option<String>,
}

/// What a capture of a selection did, process by process.
#[derive(Debug, Default)]
pub struct Captured {
    /// (pid, what was written) of each process recorded.
    pub recorded: Vec<(u32, CaptureReport)>,
    /// (pid, why) of each selected process that could not be recorded.
    pub skipped: Vec<(u32, Error)>,
    /// The memory cgroup files of the recorded processes (under
    /// `sys/fs/cgroup/`), and (file, why) for those that could not be read.
    pub cgroups: crate::usecase::cgroup::Recorded,
    /// Every zram device's `mm_stat` (under `sys/block/`: the machine
    /// picture's `zram` line reads it back), and (file, why) for those
    /// that could not be read.
    pub zram: crate::usecase::cgroup::Recorded,
    /// `nvidia-smi -q -x`'s report (`nvidia-smi.xml`: `gpu` and the
    /// GPU rows read it back), where the tool is on PATH of a live
    /// machine, or why it could not be kept.
    pub nvidia: crate::usecase::cgroup::Recorded,
    /// How many processes were selected.
    pub selected: usize,
    /// Where the recording is: the path given while it still leads to
    /// the directory written, else where that directory is now.
    pub dir: PathBuf,
    /// Whether `stop` ended the capture before its last process: the
    /// tree keeps its `memtally-incomplete` mark, saying how many are in.
    pub stopped: bool,
}

/// Records the selected processes into `out`. One named PID must be
/// recorded (its error is returned); in a wider selection a process that
/// exits or is not readable is skipped and said. `out` is refused when
/// another user could replace what is written in it (see
/// [`Dir::check`]); it is made, with its parents, once the first
/// process's smaps has been read (a capture that reads nothing makes
/// nothing, and one that fails before it recorded anything removes the
/// directory it made), and held open from then on: every file and
/// directory of the recording is made beneath it, never by path.
///
/// The tree carries a `memtally-incomplete` mark from before its first
/// process is installed until its last one is in: a capture ended
/// midway (a signal, a full disk, a kill) leaves a tree that reads back
/// as partial. `stop` is asked before each process: once it says so, the
/// capture ends there, says why in the mark, and returns what it kept
/// ([`Captured::stopped`]).
pub fn capture(
    root: &ProcRoot,
    sel: &Selection,
    out: &Path,
    stop: &dyn Fn() -> bool,
) -> Result<Captured> {
    require_selection(sel, UseCase::Capture)?;
    let only_pids =
        sel.trees.is_empty() && sel.name.is_none() && sel.uids.is_empty() && sel.cgroup.is_none();
    // Who each process is, where a selection chose it: the one recorded
    // must be it (see `stamp::same_life`).
    let targets: Vec<Target> = if only_pids {
        sel.pids.iter().map(|&pid| Target { pid, selected: None }).collect()
    } else {
        let selected = select(root, sel, Needs::default())?;
        selected.require_any(root, sel)?;
        selected.infos.into_iter().map(|p| Target { pid: p.pid, selected: Some(p) }).collect()
    };
    // A directory already there is refused (or not) before anything is read.
    let mut dir = match std::fs::symlink_metadata(out) {
        Ok(_) => Some(Dir::create(out)?),
        Err(_) => None,
    };
    let made = dir.is_none();
    let mut done = Captured { selected: targets.len(), ..Captured::default() };
    let result = record_all(root, &targets, out, &mut dir, &mut done, stop);
    if done.recorded.is_empty() {
        // Nothing recorded: the mark goes, and the directory if this
        // capture made it (a full disk leaves no empty directory).
        if let Some(dir) = dir.take() {
            let _ = dir.remove_file(TREE_INCOMPLETE.as_ref());
            if made {
                dir.remove_if_empty();
            }
        }
    }
    result?;
    if done.recorded.is_empty() && !done.stopped {
        return Err(Error::NotFound("no selected process could be recorded".into()));
    }
    done.dir = dir.map_or_else(|| out.to_path_buf(), |d| d.written_path());
    Ok(done)
}

/// A process to record, and what its selection read of it.
struct Target {
    pid: u32,
    selected: Option<ProcInfo>,
}

/// Records `pids` one by one, then the machine's files, into `out`
/// (`dir` once made), keeping the tree's mark until the last is in.
fn record_all(
    root: &ProcRoot,
    pids: &[Target],
    out: &Path,
    dir: &mut Option<Dir>,
    done: &mut Captured,
    stop: &dyn Fn() -> bool,
) -> Result<()> {
    if let Some(d) = dir {
        mark(d, pids.len())?;
    }
    for t in pids {
        let pid = t.pid;
        if stop() {
            done.stopped = true;
            break;
        }
        match capture_process(root, t, out, dir, pids.len()) {
            Ok(r) => done.recorded.push((pid, r)),
            Err(Failed::Process(e)) if pids.len() > 1 => done.skipped.push((pid, e)),
            Err(Failed::Process(e) | Failed::Output(e)) => return Err(e),
        }
    }
    let Some(dir) = dir.as_ref().filter(|_| !done.recorded.is_empty()) else {
        return Ok(());
    };
    let recorded: Vec<u32> = done.recorded.iter().map(|(pid, _)| *pid).collect();
    done.cgroups = crate::usecase::cgroup::record(root, &recorded, dir)?;
    done.zram = record_zram(root, dir)?;
    done.nvidia = record_nvidia(root, dir)?;
    if done.stopped {
        let why = format!(
            "stopped early: {} of {} selected processes recorded, the rest left out",
            done.recorded.len(),
            pids.len()
        );
        dir.write_file(TREE_INCOMPLETE.as_ref(), format!("{why}\n").as_bytes())?;
    } else {
        dir.remove_file(TREE_INCOMPLETE.as_ref())?;
    }
    Ok(())
}

/// Marks the tree in `dir` incomplete until its last process is in.
fn mark(dir: &Dir, selected: usize) -> Result<()> {
    let why = format!(
        "cut short: the capture of {selected} selected processes did not finish (a signal, a kill or a failed write ended it)"
    );
    dir.write_file(TREE_INCOMPLETE.as_ref(), format!("{why}\n").as_bytes())
}

/// Records every zram device's mm_stat into `out/sys/block/zramN/mm_stat`,
/// beside meminfo: the RAM zram holds is in no meminfo field, so without
/// it a recorded machine picture has the pool in `unexplained`.
fn record_zram(from: &ProcRoot, out: &Dir) -> Result<crate::usecase::cgroup::Recorded> {
    let (mut written, mut skipped) = (Vec::new(), Vec::new());
    for name in crate::source::zram::names(from) {
        let rel = Path::new("sys/block").join(&name);
        match crate::source::zram::read_raw(from, &name) {
            Ok(bytes) => {
                let dir = out.beneath(&rel)?;
                dir.write_file("mm_stat".as_ref(), &bytes)?;
                written.push(dir.path().join("mm_stat"));
            }
            Err(e) => skipped.push((rel.join("mm_stat"), e.to_string())),
        }
    }
    Ok((written, skipped))
}

/// Records what `nvidia-smi -q -x` says of the live machine into
/// `out/nvidia-smi.xml`: NVIDIA's driver publishes no per-process memory
/// in /proc, so without it a recording of a CUDA process has no GPU
/// figures. Nothing is recorded where the tool is not on PATH.
fn record_nvidia(from: &ProcRoot, out: &Dir) -> Result<crate::usecase::cgroup::Recorded> {
    use crate::source::gpu::nvidia;
    let name = Path::new(nvidia::RECORDED);
    match nvidia::report(nvidia::TIMEOUT).filter(|_| from.is_live()) {
        None => Ok((Vec::new(), Vec::new())),
        Some(Ok(bytes)) => {
            out.write_file(name.as_os_str(), &bytes)?;
            Ok((vec![out.path().join(name)], Vec::new()))
        }
        Some(Err(why)) => Ok((Vec::new(), vec![(name.to_path_buf(), why)])),
    }
}

/// Why one process was not recorded: itself (skipped in a selection), or
/// the output directory (never skipped: no other process would fare
/// better).
enum Failed {
    Process(Error),
    Output(Error),
}

impl From<Error> for Failed {
    fn from(e: Error) -> Failed {
        Failed::Process(e)
    }
}

/// Records one process into `out/PID`, and the machine files into `out`.
///
/// The process's files are written into a fresh private directory with a
/// random name inside `out` ([`Staged`]), then that directory takes the
/// name `out/PID` in one rename: nothing is ever written through a
/// symlink planted at `out/PID` or inside it. An earlier capture of the
/// same PID is replaced whole (exchanged, then removed without following
/// its links); whatever sits at `out/PID` (a symlink, a file) is removed,
/// never followed.
///
/// A live process is stamped before and after (see
/// [`crate::source::stamp`]): one that exec'd while being recorded is
/// recorded once more; one that exited (or exec'd again) is kept with an
/// [`INCOMPLETE`] mark saying so, so a tree cut short is never left
/// behind as if complete.
fn capture_process(
    from: &ProcRoot,
    t: &Target,
    out: &Path,
    dir: &mut Option<Dir>,
    selected: usize,
) -> std::result::Result<CaptureReport, Failed> {
    let mut tries = 0;
    let (staging, mut report) = loop {
        let (staging, mut report, change) = record(from, t, out, dir, selected)?;
        let why = match change {
            stamp::Change::Same => break (staging, report),
            // Dropped: the new directory goes with it.
            stamp::Change::Execed if tries == 0 => {
                tries += 1;
                continue;
            }
            stamp::Change::Execed => "ran a new program while being recorded, twice",
            stamp::Change::Gone => "exited while being recorded",
        };
        // Written into the new directory before it is installed: the
        // recording never appears without its mark.
        keep(staging.dir(), INCOMPLETE, format!("{why}\n").as_bytes(), &mut report)?;
        report.incomplete = Some(why.to_string());
        break (staging, report);
    };
    // Private (0700) where it holds another user's or root's addresses.
    staging.install(&t.pid.to_string(), crate::usecase::output_access(from))?;
    // `record` made `dir`.
    for (dir, file) in dir.iter().flat_map(|d| MACHINE_FILES.iter().map(move |f| (d, f))) {
        let src = from.path().join(file);
        match from.read_path(&src) {
            Ok(bytes) => keep(dir, file, &bytes, &mut report)?,
            Err(e) => report.skipped.push((src, e.to_string())),
        }
    }
    Ok(report)
}

/// Records one process into a new directory inside `out` (made, and held
/// in `dir`, if it is not yet): the directory (removed if anything fails
/// or it is dropped), what was written, named by the paths the files get
/// once installed, and whether the process stayed the same meanwhile.
fn record(
    from: &ProcRoot,
    t: &Target,
    out: &Path,
    dir: &mut Option<Dir>,
    selected: usize,
) -> std::result::Result<(Staged, CaptureReport, stamp::Change), Failed> {
    let pid = t.pid;
    let before = stamp::stamp(from, pid)?;
    // The process the selection chose, not another that took its PID
    // since (its owner read after the stamp: while the stamps agree, the
    // PID is that process's).
    if let Some(info) = &t.selected {
        let status = from.read(pid, "status").ok().and_then(|b| status::parse(&b).ok());
        if !stamp::same_life(info, before.as_ref(), status.and_then(|s| s.uid)) {
            return Err(Failed::Process(Error::Exited { pid, comm: info.comm.clone() }));
        }
    }
    // smaps first: if it cannot be read there is nothing worth keeping.
    let smaps = SmapsCopy::open(from, pid)?;
    let out_dir = match dir {
        Some(d) => d,
        None => {
            let made = dir.insert(Dir::create(out).map_err(Failed::Output)?);
            mark(made, selected).map_err(Failed::Output)?;
            made
        }
    };
    let staging = Staged::new(out_dir, out.join(pid.to_string())).map_err(Failed::Output)?;
    let mut report = CaptureReport::default();
    smaps.keep(staging.dir(), &mut report)?;
    for file in PROCESS_FILES.iter().filter(|f| **f != "smaps") {
        match from.read(pid, file) {
            Ok(bytes) => keep(staging.dir(), file, &bytes, &mut report)?,
            Err(e) => report.skipped.push((from.pid_file(pid, file), e.to_string())),
        }
    }
    // GPU: link targets and fdinfo of DRM and dma-buf fds (see source::gpu).
    match gpu::recording(from, pid) {
        Ok(Some(rec)) => {
            if !rec.fdinfo.is_empty() {
                let fdinfo = staging.dir().beneath(Path::new("fdinfo"))?;
                for (fd, bytes) in &rec.fdinfo {
                    keep(&fdinfo, &fd.to_string(), bytes, &mut report)?;
                }
            }
            // Always written, even empty: it says "this process had no GPU fds".
            keep(staging.dir(), FD_TARGETS, rec.fd_targets.as_bytes(), &mut report)?;
        }
        Ok(None) => {}
        Err(e) => report.skipped.push((from.pid_file(pid, "fd"), e.to_string())),
    }
    let comm =
        String::from_utf8_lossy(&from.read(pid, "comm").unwrap_or_default()).trim().to_string();
    let change = match stamp::check(from, pid, &comm, before.as_ref()) {
        Ok(c) => c,
        Err(Error::Exited { .. }) => stamp::Change::Gone,
        Err(e) => return Err(e.into()),
    };
    Ok((staging, report, change))
}

/// A process's `smaps` copied into a recording a chunk at a time, so
/// memory does not grow with it: opened, and its first chunk read, before
/// anything is made. At most [`MAX_SMAPS`] bytes, as a recording's
/// reader takes; past that it is refused as too large.
struct SmapsCopy<'a> {
    from: &'a ProcRoot,
    pid: u32,
    file: std::fs::File,
    chunk: Vec<u8>,
    /// The bytes in `chunk`.
    read: usize,
}

impl<'a> SmapsCopy<'a> {
    fn open(from: &'a ProcRoot, pid: u32) -> Result<SmapsCopy<'a>> {
        let file = from.open(pid, "smaps")?;
        let mut copy = SmapsCopy { from, pid, file, chunk: vec![0u8; 64 << 10], read: 0 };
        // A recorded one past the bound is refused before anything is made
        // (procfs gives its files no size).
        if copy.file.metadata().is_ok_and(|m| m.len() > MAX_SMAPS as u64) {
            return Err(copy.failed(too_big(MAX_SMAPS as u64)));
        }
        copy.next()?;
        Ok(copy)
    }

    /// Reads the next chunk (none at the end).
    fn next(&mut self) -> Result<()> {
        self.read = read_chunk(&mut self.file, &mut self.chunk).map_err(|e| self.failed(e))?;
        Ok(())
    }

    /// A failed read, named as the process's smaps.
    fn failed(&self, e: std::io::Error) -> Error {
        self.from.explain(self.pid, self.from.pid_file(self.pid, "smaps"), e)
    }

    /// Writes the rest of the file as `smaps` in `dir` and reports it.
    fn keep(mut self, dir: &Dir, report: &mut CaptureReport) -> Result<()> {
        let shown = dir.path().join("smaps");
        let mut to = NewFile::create_in(dir, "smaps".as_ref(), &shown, Access::Umask)?;
        let mut total = 0;
        while self.read > 0 {
            total += self.read;
            if total > MAX_SMAPS {
                return Err(self.failed(too_big(MAX_SMAPS as u64)));
            }
            to.write_all(&self.chunk[..self.read]).map_err(|e| Error::io(&shown, e))?;
            self.next()?;
        }
        to.commit()?;
        report.written.push(shown);
        Ok(())
    }
}

/// Writes `name` in `dir` (errors name where it goes) and reports it.
fn keep(dir: &Dir, name: &str, bytes: &[u8], report: &mut CaptureReport) -> Result<()> {
    dir.write_file(name.as_ref(), bytes)?;
    report.written.push(dir.path().join(name));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process a selection chose is recorded only while its PID names
    /// it: a PID now naming a process started at another time (or owned
    /// by another user) is the selected one's exit, and nothing is kept.
    #[test]
    fn a_pid_now_naming_another_process_is_not_recorded() {
        let root = ProcRoot::live();
        let Some(mut child) = crate::source::stamp::sleeping_child() else {
            eprintln!("skipped: cannot start sleep");
            return;
        };
        let sel = Selection::of_pids(vec![child.id()]);
        let info = select(&root, &sel, Needs::default()).unwrap().infos.remove(0);
        assert!(info.start_time.is_some());
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("rec");
        let mut dir = None;
        for other in [
            ProcInfo { start_time: info.start_time.map(|t| t + 1), ..info.clone() },
            ProcInfo { uid: info.uid.map(|u| u ^ 1), ..info.clone() },
        ] {
            let t = Target { pid: info.pid, selected: Some(other) };
            let got = capture_process(&root, &t, &out, &mut dir, 1);
            assert!(matches!(got, Err(Failed::Process(Error::Exited { .. }))));
        }
        assert!(!out.exists());
        let t = Target { pid: info.pid, selected: Some(info) };
        assert!(capture_process(&root, &t, &out, &mut dir, 1).is_ok());
        assert!(out.join(child.id().to_string()).join("smaps").is_file());
        let _ = child.kill();
        let _ = child.wait();
    }
}
