//! Runs an external tool (`vmmap`, `nvidia-smi`): found on PATH, started
//! without a shell in its own process group, its output collected on two
//! threads (so neither pipe can fill and stall it), and the whole group
//! killed when it overruns its time limit.

use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

use wait_timeout::ChildExt;

/// Finds an executable named `name` on `path` (a PATH value).
pub(crate) fn find_on_path(name: &str, path: Option<&OsStr>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = path?;
    std::env::split_paths(path)
        .map(|dir| dir.join(name))
        .find(|p| p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
}

/// How a run ended.
#[derive(Debug)]
pub(crate) enum Ran {
    /// It exited (successfully or not) within the limit.
    Exited { status: ExitStatus, stdout: Vec<u8>, stderr: Vec<u8> },
    /// It was still running at the limit and was killed, with its group.
    TimedOut,
}

/// Runs `exe args…`, waiting at most `timeout`; each output stream is
/// kept up to `max_output` bytes (the rest is read and dropped).
pub fn run_bounded(
    exe: &Path,
    args: &[&str],
    timeout: Duration,
    max_output: u64,
) -> Result<Ran, String> {
    let mut child = Command::new(exe)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group, so a timeout can stop whatever it started.
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
    let reader = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut r) = r {
                let _ = r.by_ref().take(max_output).read_to_end(&mut buf);
                let _ = std::io::copy(&mut r, &mut std::io::sink());
            }
            buf
        })
    };
    let out = reader(child.stdout.take().map(|s| Box::new(s) as Box<dyn Read + Send>));
    let err = reader(child.stderr.take().map(|s| Box::new(s) as Box<dyn Read + Send>));
    match child.wait_timeout(timeout) {
        Ok(Some(status)) => Ok(Ran::Exited {
            status,
            stdout: out.join().unwrap_or_default(),
            stderr: err.join().unwrap_or_default(),
        }),
        Ok(None) => {
            // The child's own process group: whatever it started goes too.
            let _ = crate::sys::kill_group(child.id());
            let _ = child.kill();
            let _ = child.wait();
            let _ = (out.join(), err.join());
            Ok(Ran::TimedOut)
        }
        Err(e) => Err(format!("waiting for {} failed: {e}", exe.display())),
    }
}

/// `status 3` or `a signal`, for messages.
pub fn describe(status: ExitStatus) -> String {
    status.code().map_or_else(|| "a signal".to_string(), |c| format!("status {c}"))
}
