//! Errors as values. Every message is one line: what failed, on what, and
//! what would fix it. Which exit code an error maps to is the command
//! line's choice, not the library's.

use std::path::PathBuf;

/// Everything that can go wrong, as a value; its message is one line.
/// More variants may come, so a match on it needs a wildcard arm.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The process's `/proc` directory is not there (it exited, or the
    /// PID is wrong).
    #[error(
        "no process {pid}: {path} does not exist (the process has exited, or the PID is wrong)"
    )]
    NoSuchProcess {
        /// The PID asked for.
        pid: u32,
        /// The `/proc/PID` directory that does not exist.
        path: PathBuf,
    },

    /// A file of another user's process could not be read.
    #[error("cannot read {path}: permission denied; process {pid} belongs to {owner}: {why}")]
    PermissionDenied {
        /// The process.
        pid: u32,
        /// The file that was refused (`/proc/PID/smaps`).
        path: PathBuf,
        /// Who owns the process, as `user NAME (uid N)`, `uid N`, or
        /// `another user` when that cannot be told.
        owner: String,
        /// What blocked the read and what would allow it, as best known
        /// (memtally's uid and capabilities, a user namespace, a process
        /// that is not dumpable, a security module).
        why: String,
    },

    /// The process is a zombie or being torn down: its memory is gone.
    #[error(
        "process {pid} ({comm}) has exited (a zombie waiting for its parent to reap it): it has no memory left to show"
    )]
    Exited {
        /// The process.
        pid: u32,
        /// Its short name (`/proc/PID/comm`).
        comm: String,
    },

    /// The process ran a new program (exec) while being read, so what was
    /// read is cut short (or a mix of two programs).
    #[error(
        "process {pid} ({comm}) ran a new program (exec) while being read: what was read is cut short; run again"
    )]
    Changed {
        /// The process.
        pid: u32,
        /// Its short name (`/proc/PID/comm`).
        comm: String,
    },

    /// The smaps read summed to much less resident memory than the
    /// smaps_rollup read beside it: the process changed (or was cut short)
    /// while being read.
    #[error(
        "process {pid} ({comm}) changed while being read: its smaps sums to {summed_kib} kB resident, its smaps_rollup read at the same time says {rollup_kib} kB; what was read may be cut short; run again"
    )]
    Unsteady {
        /// The process.
        pid: u32,
        /// Its short name (`/proc/PID/comm`).
        comm: String,
        /// Resident kB of the smaps read, summed.
        summed_kib: u64,
        /// Resident kB of the smaps_rollup.
        rollup_kib: u64,
    },

    /// The process is a kernel thread: it has no user address space.
    #[error(
        "process {pid} ({comm}) is a kernel thread: it has no user address space, so there is no memory map to show"
    )]
    KernelThread {
        /// The process.
        pid: u32,
        /// Its short name (`/proc/PID/comm`).
        comm: String,
    },

    /// The input is not what it claims to be.
    #[error("{path}: {message}")]
    Parse {
        /// The file (or `standard input`, or the command that printed it).
        path: PathBuf,
        /// What is wrong, with the line number where there is one.
        message: String,
    },

    /// Reading or writing `path` failed.
    #[error("{path}: {source}")]
    Io {
        /// What was being read or written (a path, or `standard output`).
        path: PathBuf,
        /// The error the system gave.
        source: std::io::Error,
    },

    /// Something named does not exist (no selected process could be read).
    #[error("{0}")]
    NotFound(String),

    /// The request itself is wrong (an unknown `--sort` field, a bad
    /// regular expression, a directory where a file is wanted).
    #[error("{0}")]
    Usage(String),

    /// An external tool (`vmmap`) is missing, failed, or timed out.
    #[error("{0}")]
    Tool(String),
}

impl Error {
    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io { path: path.into(), source }
    }
}

/// A result whose error is [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
