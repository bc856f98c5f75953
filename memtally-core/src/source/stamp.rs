//! Whether a live process stayed the same process while its files were
//! read. A process that exits while its `smaps` is read does not make the
//! read fail: the kernel just ends the file early, at a mapping boundary,
//! once the address space is gone. One that execs ends it the same way
//! (the old address space is dropped). So the reader takes a stamp from
//! `/proc/PID/stat` before and compares one taken after:
//!
//! - the start time (field 22) changed: the PID was reused, the process is gone;
//! - the state is `Z` or `X`, or the virtual size (field 23) is 0 (the
//!   address space has been released: the process is exiting);
//! - the addresses the kernel picks anew at every exec (start of code,
//!   stack, heap, arguments and environment, fields 26-28 and 45-51)
//!   changed: it exec'd.
//!
//! The order makes this sound: an `smaps` cut short by an exit ends only
//! after the task let go of its address space, so a stamp taken after the
//! read sees that.

use crate::error::{Error, Result};
use crate::model::ProcInfo;
pub use crate::source::parse::stat::{self, Change, Stamp};
use crate::source::ProcRoot;

/// The stamp of a live process; `Ok(None)` for a recorded tree (which
/// does not change) or when `stat` cannot be parsed.
pub fn stamp(root: &ProcRoot, pid: u32) -> Result<Option<Stamp>> {
    if !root.is_procfs() {
        return Ok(None);
    }
    let raw = root.read(pid, "stat")?;
    Ok(stat::parse(&raw).ok())
}

/// Whether the process a stamp `now` was taken of is the one its
/// selection identified (`info`): the same start time, and the same
/// owner where `uid` was read of it now. A PID another process took
/// meanwhile (the selected one exited) is not. True where the selection
/// kept no start time (a recorded tree, every process) or no stamp could
/// be taken.
pub(crate) fn same_life(info: &ProcInfo, now: Option<&Stamp>, uid: Option<u32>) -> bool {
    let started = match (info.start_time, now) {
        (Some(then), Some(now)) => then == now.start_time,
        _ => true,
    };
    let owner = match (info.uid, uid) {
        (Some(then), Some(now)) => then == now,
        _ => true,
    };
    started && owner
}

/// Compares a stamp taken before a read with one taken now: `Ok(Same)`,
/// `Ok(Execed)`, or the error that says the process is gone.
pub fn check(root: &ProcRoot, pid: u32, comm: &str, before: Option<&Stamp>) -> Result<Change> {
    let Some(before) = before else { return Ok(Change::Same) };
    judge(before, stamp(root, pid), pid, comm)
}

/// The verdict on the stamp taken after a read (`after`, as its read
/// went), against the one taken before: a process no longer there, or
/// whose stamp says it is gone, is the error that says it exited.
fn judge(before: &Stamp, after: Result<Option<Stamp>>, pid: u32, comm: &str) -> Result<Change> {
    let gone = || Error::Exited { pid, comm: comm.to_string() };
    let after = match after {
        Ok(Some(s)) => s,
        Ok(None) => return Ok(Change::Same),
        Err(Error::NoSuchProcess { .. }) => return Err(gone()),
        Err(e) => return Err(e),
    };
    match before.compare(&after) {
        Change::Gone => Err(gone()),
        c => Ok(c),
    }
}

/// `/proc/PID/stat` held open for both stamps of one read: each is a
/// `pread` at offset 0 (procfs prints the file anew for a read from the
/// start), so the file is opened once, not twice (issue 25). The open file
/// stays bound to the process it was opened for: once that process is
/// reaped the second read fails (`ESRCH`) rather than show another process
/// that took its PID.
pub(crate) struct StatFile {
    file: std::fs::File,
    pid: u32,
}

/// The most a `stat` line holds: 52 numbers and a name of at most 64
/// bytes come to about 1.2 KiB.
const STAT_MAX: usize = 4096;

impl StatFile {
    /// Opens the live process's `stat`; `Ok(None)` for a recorded tree
    /// (which does not change: no stamps are taken).
    pub fn open(root: &ProcRoot, pid: u32) -> Result<Option<StatFile>> {
        if !root.is_procfs() {
            return Ok(None);
        }
        Ok(Some(StatFile { file: root.open(pid, "stat")?, pid }))
    }

    /// The file's text as it is now, into `buf` (emptied first).
    pub fn read(&self, root: &ProcRoot, buf: &mut Vec<u8>) -> Result<()> {
        use std::os::unix::fs::FileExt;
        let path = || root.pid_file(self.pid, "stat");
        buf.clear();
        buf.resize(STAT_MAX, 0);
        let n = loop {
            match self.file.read_at(buf, 0) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(root.explain(self.pid, path(), e)),
            }
        };
        buf.truncate(n);
        if n == STAT_MAX {
            let message = format!("longer than {STAT_MAX} bytes: not a stat line");
            return Err(Error::Parse { path: path(), message });
        }
        Ok(())
    }

    /// The stamp of the process now, and its name: the bytes of `comm`
    /// (field 2 is printed as `comm` prints it, unescaped; `status`'s
    /// `Name` escapes `\` and newlines). `None` for either that cannot be read.
    pub fn stamp(&self, root: &ProcRoot) -> Result<(Option<Stamp>, Option<String>)> {
        let mut buf = Vec::new();
        self.read(root, &mut buf)?;
        Ok((stat::parse(&buf).ok(), comm_of(&buf)))
    }

    /// [`check`] with the second stamp read through this file.
    pub fn check(&self, root: &ProcRoot, comm: &str, before: Option<&Stamp>) -> Result<Change> {
        let Some(before) = before else { return Ok(Change::Same) };
        judge(before, self.stamp(root).map(|(after, _)| after), self.pid, comm)
    }
}

/// The name in a `stat` line (`pid (comm) state ...`: from the first `(`
/// to the last `)`, the name may hold both), as `comm`'s reader takes it:
/// lossy UTF-8, trailing newlines cut.
fn comm_of(line: &[u8]) -> Option<String> {
    let open = line.iter().position(|&b| b == b'(')?;
    let close = line.iter().rposition(|&b| b == b')')?;
    let name = line.get(open + 1..close)?;
    Some(String::from_utf8_lossy(name).trim_end_matches('\n').to_string())
}

/// A `sleep 60` child for tests, once its exec is done (named `sleep`,
/// its address space built); `None` where it cannot be started.
#[cfg(test)]
pub(crate) fn sleeping_child() -> Option<std::process::Child> {
    let child = std::process::Command::new("sleep").arg("60").spawn().ok()?;
    let root = ProcRoot::live();
    for _ in 0..500 {
        let named = root.read(child.id(), "comm").is_ok_and(|c| c == b"sleep\n");
        let built =
            stamp(&root, child.id()).ok().flatten().is_some_and(|s| !s.under_construction());
        if named && built {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    std::thread::sleep(std::time::Duration::from_millis(20));
    Some(child)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_in_stat_is_taken_whole_with_parentheses_and_newlines() {
        assert_eq!(comm_of(b"12 (a) b) (c) S 1 2").as_deref(), Some("a) b) (c"));
        assert_eq!(comm_of(b"12 (x\n) S 1").as_deref(), Some("x"));
        assert_eq!(comm_of(b"12 () S 1").as_deref(), Some(""));
        assert_eq!(comm_of(b"12 x S 1"), None);
        assert_eq!(comm_of(b"12 )x( S 1"), None);
    }

    #[test]
    fn the_name_in_stat_is_the_bytes_of_comm_and_both_stamps_read_one_file() {
        let root = ProcRoot::live();
        let me = std::process::id();
        let file = StatFile::open(&root, me).unwrap().unwrap();
        let (before, comm) = file.stamp(&root).unwrap();
        let raw = root.read(me, "comm").unwrap();
        let from_comm = String::from_utf8_lossy(&raw).trim_end_matches('\n').to_string();
        assert_eq!(comm, Some(from_comm));
        let before = before.unwrap();
        assert!(!before.exited());
        assert_eq!(file.check(&root, "me", Some(&before)).unwrap(), Change::Same);
    }

    #[test]
    fn a_reaped_process_reads_as_gone_through_its_open_stat() {
        let root = ProcRoot::live();
        let Ok(mut child) = std::process::Command::new("sleep").arg("1000").spawn() else {
            eprintln!("skipped: cannot start sleep");
            return;
        };
        let file = StatFile::open(&root, child.id()).unwrap().unwrap();
        let (before, _) = file.stamp(&root).unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
        let got = file.check(&root, "sleep", before.as_ref());
        assert!(matches!(got, Err(Error::Exited { .. })), "{got:?}");
    }
}
