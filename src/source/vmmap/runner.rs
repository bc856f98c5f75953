//! Runs `vmmap -noCoalesce PID` (found on PATH, no shell) with a time limit
//! and returns what it printed. The parser never knows where its lines
//! came from.

use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use wait_timeout::ChildExt;

use crate::error::{Error, Result};

/// Finds an executable named `name` on `path` (a PATH value).
pub fn find_on_path(name: &str, path: Option<&OsStr>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = path?;
    std::env::split_paths(path)
        .map(|dir| dir.join(name))
        .find(|p| p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
}

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

fn reader<R: Read + Send + 'static>(mut r: R) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = r.read_to_end(&mut buf);
        buf
    })
}

/// Runs `vmmap -noCoalesce PID`, waiting at most `timeout`.
pub fn run_vmmap(pid: u32, timeout: Duration) -> Result<Vec<u8>> {
    let exe = find_on_path("vmmap", std::env::var_os("PATH").as_deref()).ok_or_else(|| {
        Error::Tool(
            "vmmap not found on PATH: --pid runs macOS's vmmap (part of the Xcode command line tools); elsewhere, save `vmmap -noCoalesce PID > FILE` on the Mac and run `memtally vmmap FILE`".into(),
        )
    })?;
    run_tool(&exe, pid, timeout)
}

/// Runs `exe -noCoalesce PID`; split out so tests can name the tool.
pub fn run_tool(exe: &Path, pid: u32, timeout: Duration) -> Result<Vec<u8>> {
    let what = format!("vmmap -noCoalesce {pid}");
    let mut child = Command::new(exe)
        .arg("-noCoalesce")
        .arg(pid.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group, so a timeout can stop whatever it started.
        .process_group(0)
        .spawn()
        .map_err(|e| Error::Tool(format!("{what}: cannot start {}: {e}", exe.display())))?;
    let out = reader(child.stdout.take().expect("piped stdout"));
    let err = reader(child.stderr.take().expect("piped stderr"));
    let status = match child.wait_timeout(timeout) {
        Ok(Some(status)) => status,
        Ok(None) => {
            // SAFETY: kill(2) on the child's own process group; no memory involved.
            unsafe {
                libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL);
            }
            let _ = child.kill();
            let _ = child.wait();
            let _ = (out.join(), err.join());
            return Err(Error::Tool(format!(
                "{what} did not finish within {}s and was stopped; a large process can take longer: raise --timeout",
                timeout.as_secs()
            )));
        }
        Err(e) => return Err(Error::Tool(format!("{what}: waiting for it failed: {e}"))),
    };
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
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
        let code = status.code().map_or_else(|| "a signal".to_string(), |c| format!("status {c}"));
        return Err(Error::Tool(format!(
            "{what} failed with {code}: {}",
            if msg.is_empty() { "it printed nothing" } else { &msg }
        )));
    }
    Ok(stdout)
}
