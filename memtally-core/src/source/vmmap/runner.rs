//! Runs `vmmap -noCoalesce PID` or `vmmap -summary PID` (found on PATH, no
//! shell) with a time limit and returns what it printed. The parser never
//! knows where its lines came from.

use std::path::Path;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::source::tool::{describe, find_on_path, run_bounded, Ran};

fn first_line(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let line = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("").to_string();
    if line.len() > 300 {
        let mut end = 300;
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}...", &line[..end])
    } else {
        line
    }
}

/// Which report `vmmap` is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VmmapForm {
    /// `-noCoalesce`: every region line, then the summary table.
    #[default]
    Regions,
    /// `-summary`: the summary table only (much faster: no region list).
    Summary,
}

impl VmmapForm {
    /// The option that asks `vmmap` for it.
    pub fn flag(self) -> &'static str {
        match self {
            VmmapForm::Regions => "-noCoalesce",
            VmmapForm::Summary => "-summary",
        }
    }
}

/// Runs `vmmap FLAG PID`, waiting at most `timeout`.
pub(crate) fn run_vmmap(pid: u32, timeout: Duration, form: VmmapForm) -> Result<Vec<u8>> {
    let exe = find_on_path("vmmap", std::env::var_os("PATH").as_deref()).ok_or(Error::NoVmmap)?;
    run_tool(&exe, pid, timeout, form)
}

/// Runs `exe FLAG PID`; split out so tests can name the tool.
pub(crate) fn run_tool(
    exe: &Path,
    pid: u32,
    timeout: Duration,
    form: VmmapForm,
) -> Result<Vec<u8>> {
    let what = format!("vmmap {} {pid}", form.flag());
    let pid_arg = pid.to_string();
    // vmmap of a large process is tens of megabytes; a gigabyte is not vmmap.
    let ran = run_bounded(exe, &[form.flag(), &pid_arg], timeout, 1 << 30)
        .map_err(|e| Error::Tool(format!("{what}: {e}")))?;
    let (status, stdout, stderr) = match ran {
        Ran::Exited { status, stdout, stderr } => (status, stdout, stderr),
        Ran::TimedOut => return Err(Error::TimedOut { what, limit: timeout }),
    };
    let said = |bytes: &[u8]| {
        let text = String::from_utf8_lossy(&bytes[..bytes.len().min(1 << 16)]).into_owned();
        text.lines().find(|l| l.contains("cannot examine process")).map(|l| l.trim().to_string())
    };
    if let Some(line) = said(&stderr).or_else(|| said(&stdout)) {
        return Err(Error::Tool(format!(
            "vmmap cannot examine process {pid}: check that it exists, and run memtally as its user or with sudo (vmmap said: {line})"
        )));
    }
    if !status.success() {
        let msg = first_line(&stderr);
        let msg = if msg.is_empty() { first_line(&stdout) } else { msg };
        let code = describe(status);
        return Err(Error::Tool(format!(
            "{what} failed with {code}: {}",
            if msg.is_empty() { "it printed nothing" } else { &msg }
        )));
    }
    Ok(stdout)
}
