//! Reads selected processes in full (every region), the one way: a
//! process that exits meanwhile is counted as vanished, a kernel thread
//! is left out, and any other failure is kept to be reported.

use crate::error::{Error, Result};
use crate::model::{ProcInfo, Process};
use crate::source::ProcRoot;
use crate::usecase::Progress;

/// The processes read, and what happened to the rest.
#[derive(Debug, Default)]
pub struct ReadProcesses {
    pub processes: Vec<Process>,
    /// Exited (or became zombies) before they could be read.
    pub vanished: usize,
    /// Kernel threads: no memory map.
    pub kernel_threads: usize,
    /// Why the others could not be read (permission denied, bad input).
    pub failed: Vec<Error>,
}

/// Reads every process of `infos` with all its regions.
pub fn read_processes(
    root: &ProcRoot,
    infos: &[ProcInfo],
    progress: &dyn Progress,
) -> ReadProcesses {
    let mut out = ReadProcesses::default();
    progress.start("reading processes", infos.len());
    for info in infos {
        match root.process(info.pid) {
            Ok(p) => out.processes.push(p),
            Err(Error::NoSuchProcess { .. } | Error::Exited { .. }) => out.vanished += 1,
            Err(Error::KernelThread { .. }) => out.kernel_threads += 1,
            Err(e) => out.failed.push(e),
        }
        progress.step();
    }
    progress.finish();
    out
}

impl ReadProcesses {
    /// The processes, or when none could be read, the reason: the first
    /// failure (permission denied says who owns it and what would fix it),
    /// else that every selected process had exited.
    pub fn require_some(mut self) -> Result<ReadProcesses> {
        if self.processes.is_empty() {
            if !self.failed.is_empty() {
                return Err(self.failed.swap_remove(0));
            }
            return Err(Error::NotFound(format!(
                "no selected process could be read ({} exited before it was read)",
                self.vanished
            )));
        }
        Ok(self)
    }

    /// Notes that say what the figures leave out.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        let denied =
            self.failed.iter().filter(|e| matches!(e, Error::PermissionDenied { .. })).count();
        if denied > 0 {
            notes.push(format!(
                "{denied} selected processes could not be read (permission denied) and are not in these figures; {}.", crate::source::access::read_hint()
            ));
        }
        let other = self.failed.len() - denied;
        if other > 0 {
            notes.push(format!(
                "{other} selected processes could not be read and are not in these figures (first: {})",
                self.failed.iter().find(|e| !matches!(e, Error::PermissionDenied { .. })).map_or_else(String::new, |e| e.to_string())
            ));
        }
        if self.vanished > 0 {
            notes.push(format!("{} selected processes exited while being read", self.vanished));
        }
        notes
    }
}
