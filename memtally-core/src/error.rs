//! Errors as values. Every message is one line: what failed, on what, and
//! what would fix it. Which exit code an error maps to is the command
//! line's choice, not the library's.

use std::path::PathBuf;
use std::time::Duration;

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

    /// The request itself is wrong (an unknown sort field, a directory
    /// where a file is wanted).
    #[error("{0}")]
    Usage(String),

    /// An external tool (`vmmap`) failed.
    #[error("{0}")]
    Tool(String),

    /// The name pattern of a selection is not a valid regular expression.
    #[error("name pattern {pattern:?}: not a valid regular expression: {why}")]
    BadPattern {
        /// The pattern as given.
        pattern: String,
        /// What the regular expression compiler said, on one line.
        why: String,
    },

    /// A user of a selection is neither a numeric uid nor a name in
    /// `/etc/passwd`.
    #[error("user {user}: no such user in /etc/passwd (give a name or a numeric uid)")]
    NoSuchUser {
        /// The user as given.
        user: String,
    },

    /// A use case that reads chosen processes was given no selection
    /// (every process).
    #[error("{use_case} needs a PID or a selection that narrows")]
    NoSelection {
        /// Which use case.
        use_case: UseCase,
    },

    /// A selection that narrows found no process.
    #[error("no process matches the selection{}", because(why))]
    NoMatch {
        /// The selection, selector by selector.
        asked: Vec<Selector>,
        /// Why nothing matched, as far as known (may be empty).
        why: Vec<Unmatched>,
    },

    /// Every process a narrowed selection found exited, or could not be
    /// read, before its memory was read.
    #[error("no process of the selection was read")]
    NoneRead {
        /// The selection, selector by selector.
        asked: Vec<Selector>,
        /// The first process that could not be read, and why; none when
        /// every one exited.
        first_failure: Option<(u32, String)>,
    },

    /// Input read strictly has lines that could not be read.
    #[error("{path}: {count} unreadable line(s): {}", samples.join("; "))]
    UnreadableLines {
        /// The file (or `standard input`).
        path: PathBuf,
        /// How many lines.
        count: u64,
        /// The first few, as `line N: why`.
        samples: Vec<String>,
    },

    /// A document to compare is none of those memtally compares.
    #[error(
        "{path}: not a snapshot, nor the JSON of a process or of vmmap output, nor vmmap text"
    )]
    NotComparable {
        /// The file (or `standard input`).
        path: PathBuf,
        /// What it is instead.
        input: Uncomparable,
    },

    /// There is no `vmmap` on `PATH` to read a live process with.
    #[error("vmmap not found on PATH (part of the Xcode command line tools)")]
    NoVmmap,

    /// Page frame numbers are hidden from memtally (it lacks
    /// CAP_SYS_ADMIN), and the figure asked for is made of them.
    #[error(
        "{figure} needs page frame numbers (/proc/PID/pagemap, /proc/kpagecount, /proc/kpageflags), which the kernel shows only to CAP_SYS_ADMIN: {why}; run memtally as root (sudo) for them"
    )]
    FramesHidden {
        /// The figure asked for.
        figure: PageFigure,
        /// What was refused or hidden, as found.
        why: String,
    },

    /// Resetting a process's referenced bits (`clear_refs`, for the
    /// working set) was refused: the file is its owner's.
    #[error(
        "cannot reset the referenced bits of process {pid} ({}): permission denied; it belongs to {owner}, and writing clear_refs takes its own user or root",
        path.display()
    )]
    ResetDenied {
        /// The process.
        pid: u32,
        /// Its `clear_refs`.
        path: PathBuf,
        /// Who owns the process, as `user NAME (uid N)` or `uid N`.
        owner: String,
    },

    /// Idle page tracking was asked for and cannot run here.
    #[error("idle page tracking cannot run: {why}; the referenced bits (clear_refs) measure the working set without it")]
    NoIdleTracking {
        /// What is missing: the bitmap, or the privilege to use it.
        why: String,
        /// Whether it is a matter of privilege (root would have it).
        denied: bool,
    },

    /// A figure only the live system can give was asked of a recorded
    /// tree (a recording holds no referenced bits to reset, and no page
    /// tables behind it).
    #[error("{what} is measured on live processes only: {} is a recorded tree, not the kernel's /proc", root.display())]
    LiveOnly {
        /// The recorded tree.
        root: PathBuf,
        /// What was asked for.
        what: LiveOnly,
    },

    /// What only Linux gives was asked of another system.
    #[error("{what}: Linux only")]
    LinuxOnly {
        /// What was asked for, and what it takes of Linux.
        what: &'static str,
    },

    /// A recorded tree (`--proc-root DIR`) holds no process directory.
    #[error("no process directories under {}{}", root.display(), nested_hint(root, *nested))]
    NoProcessDirs {
        /// The directory given.
        root: PathBuf,
        /// Process directories in `root/proc`, where a recording often keeps them.
        nested: usize,
    },

    /// Two documents to compare are of different systems: a Linux
    /// snapshot and a vmmap report.
    #[error(
        "cannot compare a {before_kind} snapshot ({}) with a {after_kind} one ({}): compare two Linux snapshots or two vmmap reports",
        before.display(),
        after.display()
    )]
    KindsDiffer {
        /// The earlier document.
        before: PathBuf,
        /// Its kind, as in JSON (`linux`, `vmmap`).
        before_kind: &'static str,
        /// The later document.
        after: PathBuf,
        /// Its kind.
        after_kind: &'static str,
    },

    /// Page faults cannot be sampled here (`perf_event_open` refused).
    #[error(
        "cannot sample the page faults of process {pid}: {why}; run memtally as root, give it CAP_PERFMON, or set kernel.perf_event_paranoid to 1 or less (0 to see faults the kernel takes for it); another user's process needs root or CAP_PERFMON either way"
    )]
    FaultsDenied {
        /// The process.
        pid: u32,
        /// What perf_event_open answered, and the paranoid setting.
        why: String,
    },

    /// A thread memtally started to read stopped with a panic: a bug, not
    /// the input's fault; nothing it read is used.
    #[error("{what} stopped with a panic: a bug in memtally; please report it with the command that ran")]
    ThreadPanicked {
        /// Which thread (`a pagemap reader`).
        what: &'static str,
    },

    /// An external tool ran past its time limit and was stopped.
    #[error("{what} did not finish within {}s and was stopped", limit.as_secs())]
    TimedOut {
        /// The command, as `vmmap -noCoalesce PID`.
        what: String,
        /// The limit it ran under.
        limit: Duration,
    },
}

// The enums an error carries are exhaustive on purpose: a front end words
// each of their values, and one added must fail to compile there until it
// is worded, rather than fall to a catch-all.

/// The use cases that refuse to read every process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UseCase {
    /// Show processes' memory by category.
    Show,
    /// Record processes into a directory.
    Capture,
    /// Measure processes' working set (it resets their referenced bits).
    Wss,
    /// Sample processes' page faults.
    Faults,
}

impl std::fmt::Display for UseCase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            UseCase::Show => "show",
            UseCase::Capture => "capture",
            UseCase::Wss => "wss",
            UseCase::Faults => "faults",
        })
    }
}

/// Figures only the live system gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LiveOnly {
    /// The working set (`wss`): pages touched during an interval.
    WorkingSet,
    /// A page-level figure, read from the live page tables (pagemap,
    /// kpagecount, kpageflags).
    Pages(PageFigure),
    /// A page-fault recording (`faults`).
    Faults,
}

impl std::fmt::Display for LiveOnly {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LiveOnly::WorkingSet => f.write_str("the working set"),
            LiveOnly::Pages(figure) => write!(f, "{figure}"),
            LiveOnly::Faults => f.write_str("a page-fault recording"),
        }
    }
}

/// The page-level figures, for the errors that name one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageFigure {
    /// What a group gives back (`exclusive`).
    Exclusive,
    /// Who shares resident pages with whom.
    Sharing,
    /// Page states per category.
    PageStates,
}

impl std::fmt::Display for PageFigure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PageFigure::Exclusive => "the exclusive figure (what a group gives back)",
            PageFigure::Sharing => "sharing between processes",
            PageFigure::PageStates => "page states",
        })
    }
}

/// One selector of a selection, with its values, in the order a
/// selection lists them: for a message to state what was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    /// These PIDs.
    Pids(Vec<u32>),
    /// Command name or line matching this pattern.
    Name(String),
    /// Owned by one of these uids.
    Uids(Vec<u32>),
    /// This process and its descendants.
    Tree(u32),
    /// In this cgroup or below it.
    Cgroup(String),
}

/// Why a narrowed selection matched nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unmatched {
    /// PIDs named that do not exist.
    Missing(Vec<u32>),
    /// Kernel threads left out (they have no memory map).
    KernelThreads(usize),
    /// Processes that exited while being listed.
    Vanished(usize),
    /// Only memtally's own process matched, and it is left out.
    OnlySelf,
}

/// What a document that cannot be compared is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Uncomparable {
    /// JSON, but not of a shape memtally writes.
    Json,
    /// Neither JSON nor vmmap text.
    Text,
}

/// `: ` and the reasons, for the library's own wording of [`Error::NoMatch`].
fn because(why: &[Unmatched]) -> String {
    if why.is_empty() {
        return String::new();
    }
    let words: Vec<String> = why
        .iter()
        .map(|w| match w {
            Unmatched::Missing(pids) => format!("missing PIDs {pids:?}"),
            Unmatched::KernelThreads(n) => format!("{n} kernel thread(s) left out"),
            Unmatched::Vanished(n) => format!("{n} exited while listed"),
            Unmatched::OnlySelf => "only memtally itself matched".into(),
        })
        .collect();
    format!(": {}", words.join("; "))
}

impl Error {
    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io { path: path.into(), source }
    }

    /// The open failed because memtally has as many files open as it may
    /// (EMFILE, or the system's ENFILE): says nothing of the process.
    pub(crate) fn is_out_of_descriptors(&self) -> bool {
        matches!(self, Error::Io { source, .. }
            if matches!(source.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)))
    }
}

/// A result whose error is [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

/// What `root/proc` holds, when it holds process directories: the
/// directory that was meant.
fn nested_hint(root: &std::path::Path, nested: usize) -> String {
    match nested {
        0 => String::new(),
        n => format!(" ({} has {n}: give that directory)", root.join("proc").display()),
    }
}
