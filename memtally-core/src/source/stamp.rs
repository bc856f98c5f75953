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

/// Compares a stamp taken before a read with one taken now: `Ok(Same)`,
/// `Ok(Execed)`, or the error that says the process is gone.
pub fn check(root: &ProcRoot, pid: u32, comm: &str, before: Option<&Stamp>) -> Result<Change> {
    let Some(before) = before else { return Ok(Change::Same) };
    let gone = || Error::Exited { pid, comm: comm.to_string() };
    let after = match stamp(root, pid) {
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
