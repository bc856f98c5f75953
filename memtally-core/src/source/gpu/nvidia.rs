//! NVIDIA's proprietary driver publishes no memory in fdinfo; where
//! `nvidia-smi` is on PATH, its per-process used memory is read instead:
//! `nvidia-smi -q -x` (no shell, with a time limit), the XML report that
//! lists graphics and compute processes of each GPU by its UUID (the
//! `--query-compute-apps` CSV lists compute processes only). A missing
//! tool is silently not used; a hang, a failure or output that is not
//! its XML report becomes one note.
//!
//! `capture` keeps the report in the recording ([`RECORDED`], beside
//! `meminfo`), so a recorded tree shows what the live machine showed.

use std::path::Path;
use std::time::Duration;

use crate::model::gpu::NvidiaMemory;
use crate::source::parse::nvidia::parse;
use crate::source::tool::{describe, find_on_path, run_bounded, Ran};
use crate::source::ProcRoot;

/// The arguments, as the NVIDIA documentation gives them: the whole
/// report (`-q`) as XML (`-x`).
pub const ARGS: &[&str] = &["-q", "-x"];

/// The file of a recorded tree that holds `nvidia-smi -q -x`'s report.
pub const RECORDED: &str = "nvidia-smi.xml";

/// The most of the report kept: a few KiB per GPU and process.
const MAX_REPORT: usize = 4 << 20;

/// How long `nvidia-smi` may take before it is stopped.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(5);

/// What asking `nvidia-smi` gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Nvidia {
    /// Not on PATH: nothing to say.
    Missing,
    /// It answered: (pid, its memory on one GPU), one entry per process
    /// and GPU.
    Usage(Vec<(u32, NvidiaMemory)>),
    /// It hung, failed, or printed something else: one line for a note.
    Failed(String),
}

/// Runs `nvidia-smi` from PATH, when it is there.
pub fn query(timeout: Duration) -> Nvidia {
    match find_on_path("nvidia-smi", std::env::var_os("PATH").as_deref()) {
        Some(exe) => query_with(&exe, timeout),
        None => Nvidia::Missing,
    }
}

/// Runs `exe` with [`ARGS`], waiting at most `timeout`.
pub(crate) fn query_with(exe: &Path, timeout: Duration) -> Nvidia {
    match run(exe, timeout) {
        Ok(out) => usage(&out),
        Err(why) => Nvidia::Failed(why),
    }
}

/// The report as `nvidia-smi` printed it, for a recording: `None` when
/// the tool is not on PATH, else its bytes or why there are none.
pub fn report(timeout: Duration) -> Option<Result<Vec<u8>, String>> {
    let exe = find_on_path("nvidia-smi", std::env::var_os("PATH").as_deref())?;
    Some(run(&exe, timeout))
}

/// What the recording in `root` kept of `nvidia-smi` ([`RECORDED`]):
/// `Missing` where it kept nothing (the tool was not there, or the tree
/// was not made by `capture`).
pub fn recorded(root: &ProcRoot) -> Nvidia {
    match root.read_rel(Path::new(RECORDED), MAX_REPORT) {
        Ok(out) => usage(&out),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Nvidia::Missing,
        Err(e) => Nvidia::Failed(format!("{RECORDED}: {e}; NVIDIA figures left out")),
    }
}

fn usage(report: &[u8]) -> Nvidia {
    match parse(report) {
        Ok(usage) => Nvidia::Usage(usage),
        Err(why) => Nvidia::Failed(why.message),
    }
}

/// Runs the tool (see `source::tool`), keeping at most [`MAX_REPORT`]
/// of what it prints.
fn run(exe: &Path, timeout: Duration) -> Result<Vec<u8>, String> {
    let what = "nvidia-smi -q -x";
    let ran =
        run_bounded(exe, ARGS, timeout, MAX_REPORT as u64).map_err(|e| format!("{what}: {e}"))?;
    let (status, stdout, stderr) = match ran {
        Ran::Exited { status, stdout, stderr } => (status, stdout, stderr),
        Ran::TimedOut => {
            return Err(format!(
                "{what} did not answer within {timeout:?} and was stopped; NVIDIA figures left out"
            ))
        }
    };
    if !status.success() {
        let said = first_line(&stderr).or_else(|| first_line(&stdout));
        return Err(format!(
            "{what} failed with {}: {}; NVIDIA figures left out",
            describe(status),
            said.as_deref().unwrap_or("it printed nothing")
        ));
    }
    Ok(stdout)
}

fn first_line(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    Some(line.chars().take(200).collect())
}
