//! Errors as values, each with the exit code it maps to. Every message is
//! one line: what failed, on what, and what would fix it.

use std::path::PathBuf;

/// Exit codes, documented in the README.
pub mod exit {
    /// Success.
    pub const OK: i32 = 0;
    /// An I/O or other runtime failure.
    pub const FAILURE: i32 = 1;
    /// Bad command-line usage (clap uses 2 as well).
    pub const USAGE: i32 = 2;
    /// The process or file named does not exist.
    pub const NOT_FOUND: i32 = 3;
    /// Not allowed to read what was asked for.
    pub const PERMISSION: i32 = 4;
    /// The input is not what it claims to be (parse error).
    pub const BAD_INPUT: i32 = 5;
    /// An external tool (vmmap, nvidia-smi) failed or timed out.
    pub const TOOL_FAILED: i32 = 6;
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "no process {pid}: {path} does not exist (the process has exited, or the PID is wrong)"
    )]
    NoSuchProcess { pid: u32, path: PathBuf },

    #[error(
        "cannot read {path}: permission denied; process {pid} belongs to {owner}: run memtally as that user, as root, or with CAP_SYS_PTRACE"
    )]
    PermissionDenied { pid: u32, path: PathBuf, owner: String },

    #[error(
        "process {pid} ({comm}) has exited (a zombie waiting for its parent to reap it): it has no memory left to show"
    )]
    Exited { pid: u32, comm: String },

    #[error(
        "process {pid} ({comm}) ran a new program (exec) while being read: what was read is cut short; run again"
    )]
    Changed { pid: u32, comm: String },

    #[error(
        "process {pid} ({comm}) is a kernel thread: it has no user address space, so there is no memory map to show"
    )]
    KernelThread { pid: u32, comm: String },

    #[error("{path}: {message}")]
    Parse { path: PathBuf, message: String },

    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },

    #[error("{0}")]
    NotFound(String),

    #[error("{0}")]
    Usage(String),

    #[error("{0}")]
    Tool(String),
}

impl Error {
    /// The process exit code for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::NoSuchProcess { .. }
            | Error::Exited { .. }
            | Error::Changed { .. }
            | Error::NotFound(_) => exit::NOT_FOUND,
            Error::PermissionDenied { .. } => exit::PERMISSION,
            Error::KernelThread { .. } | Error::Parse { .. } => exit::BAD_INPUT,
            Error::Io { source, .. } => match source.kind() {
                std::io::ErrorKind::NotFound => exit::NOT_FOUND,
                std::io::ErrorKind::PermissionDenied => exit::PERMISSION,
                _ => exit::FAILURE,
            },
            Error::Usage(_) => exit::USAGE,
            Error::Tool(_) => exit::TOOL_FAILED,
        }
    }

    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io { path: path.into(), source }
    }
}

pub type Result<T> = std::result::Result<T, Error>;
