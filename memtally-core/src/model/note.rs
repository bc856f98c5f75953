//! What a report's reader must know to trust its figures: what was left
//! out, what could not be read, where a source disagreed with itself.
//!
//! A note is data (who, how many, why); its wording belongs to whoever
//! prints it (the command line words every note once, for every format),
//! so the library never writes a sentence a front end cannot change.

use std::path::PathBuf;

/// A kind of figure memtally's privileges (its uid and effective
/// capabilities, read from `/proc/self/status`) keep it from reading for
/// processes of other users, and the capabilities that give it on Linux
/// 6.x (docs/privileges.md has the table, tests/cli/privileges.rs proves
/// it row by row).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Withheld {
    /// PSS, USS, swap, dirty and every per-mapping figure (`smaps`,
    /// `smaps_rollup`, `maps`): the kernel's ptrace read check, passed by
    /// `CAP_SYS_PTRACE`, or by `CAP_PERFMON` (or `CAP_SYS_ADMIN`).
    Detail,
    /// GPU memory (listing `/proc/PID/fd`, mode 0500, and reading
    /// `fdinfo`): `CAP_DAC_READ_SEARCH` and `CAP_SYS_PTRACE`.
    Gpu,
    /// Page frame numbers (`pagemap` PFNs, `/proc/kpageflags`,
    /// `kpagecount`): `CAP_SYS_ADMIN`, and `CAP_DAC_READ_SEARCH` unless
    /// memtally runs as uid 0 (the files are root's, mode 0400).
    PageFrames,
}

impl Withheld {
    /// Whether `top`, `serve` and `export` have figures of this kind: page
    /// frames serve page-level reads only, so those commands never name
    /// them (a line telling an operator to grant `CAP_SYS_ADMIN` for
    /// figures the exporter never reads would undo least privilege).
    pub fn in_process_figures(self) -> bool {
        !matches!(self, Withheld::PageFrames)
    }
}

/// One thing the figures leave out or could not check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    /// Selected processes whose full map could not be read (permission
    /// denied): not in the figures.
    Denied {
        /// How many processes.
        count: usize,
        /// What would let memtally read them, from its own credentials.
        hint: String,
    },
    /// Selected processes that could not be read for another reason: not
    /// in the figures; `first` is the first reason.
    Unreadable {
        /// How many processes.
        count: usize,
        /// The first one's reason.
        first: String,
    },
    /// Selected processes that exited while being read in full.
    Exited {
        /// How many processes.
        count: usize,
    },
    /// A recorded process its capture marked incomplete, and why.
    RecordedIncomplete {
        /// The process.
        pid: u32,
        /// Why, as the source says.
        why: String,
    },
    /// A recorded tree whose capture did not finish (a signal, a kill, a
    /// failed write): processes it selected are missing, and why.
    RecordingCutShort {
        /// Why, as the mark says.
        why: String,
    },
    /// Exclusive figures count pages of large folios whose map count the
    /// kernel may give as the folio's average (`CONFIG_NO_PAGE_MAPCOUNT`,
    /// or a kernel whose configuration memtally could not read).
    LargeFolioAverage {
        /// Bytes of such pages in the exclusive figures.
        bytes: u64,
    },
    /// KSM pages in the exclusive figures (their map count joins
    /// processes that share nothing else) and zero-page mappings left out
    /// of them (the zero page is no one's).
    KsmAndZeroPages {
        /// Bytes of KSM pages counted.
        ksm: u64,
        /// Bytes of zero-page mappings left out.
        zero: u64,
    },
    /// Pages whose map count fell below the group's own mappings of them
    /// while being read: the processes changed during the read; left out.
    PagesChanged {
        /// Bytes left out.
        bytes: u64,
    },
    /// Processes whose pages could not be read (exited during the read,
    /// or refused): rows holding them have no exclusive figure.
    PagesUnread {
        /// How many processes.
        count: usize,
        /// The first one's reason.
        first: String,
    },
    /// The page flags (kpageflags) could not be read: only the states
    /// `PAGEMAP_SCAN` gives any reader are shown.
    PageFlagsHidden {
        /// What was refused, as found.
        why: String,
    },
    /// Frames mapped by more groups than the sharing analysis pairs up
    /// (a page nearly every process maps): left out of the pairs.
    SharedTooWidely {
        /// How many frames.
        frames: u64,
    },
    /// Swap slots are counted against the processes read only: the
    /// selection leaves out processes that may hold some of them.
    SwapAgainstSelection,
    /// A process whose smaps could not be read, only its maps: virtual
    /// sizes only.
    MapsOnly {
        /// The process.
        pid: u32,
    },
    /// The kernel gives no `Pss_Dirty` (before Linux 6.0): `top`'s dirty
    /// column is private dirty pages only.
    NoPssDirty,
    /// Bytes of the PSS that are tmpfs / shared memory (`Pss_Shmem`).
    PssShmem {
        /// Bytes.
        bytes: u64,
    },
    /// macOS: processes of other users, whose memory libproc gives to
    /// root alone; listed without figures.
    OthersMemory {
        /// How many processes.
        count: usize,
    },
    /// Processes read from `status` only (permission denied on
    /// `smaps_rollup`): RSS, no PSS, not in the PSS totals.
    Restricted {
        /// How many processes.
        count: usize,
        /// What would let memtally read them, from its own credentials.
        hint: String,
        /// The figures memtally's own privileges leave out of every
        /// other user's process (empty when they leave out none, and
        /// the processes were refused for another reason).
        withheld: Vec<Withheld>,
    },
    /// The reader of a process was told to stop (its output closed): the
    /// figures cover the regions read until then.
    ReadStopped {
        /// The process.
        pid: u32,
        /// Regions read before the stop.
        regions: usize,
    },
    /// Rows are whole subtrees (`top` by tree).
    SubtreeRows,
    /// Cgroups outside the reader's cgroup namespace, named only from
    /// inside it (`/../…`), the host's tree not being found to rebase them.
    CgroupsOutsideNamespace {
        /// How many rows are so named.
        rows: usize,
    },
    /// Some grouped row's PSS leaves out processes without PSS.
    RowsWithoutPss,
    /// PIDs asked for that were not there.
    NoSuchProcess {
        /// The PIDs.
        pids: Vec<u32>,
    },
    /// Processes listed, then gone before the scan read them.
    ExitedDuringScan {
        /// How many processes.
        count: usize,
    },
    /// One process that could not be read as asked, and why (the reason
    /// says whether it is still listed).
    Failed {
        /// The process.
        pid: u32,
        /// Why, as the source says.
        why: String,
    },
    /// `nvidia-smi` failed, and why.
    NvidiaFailed {
        /// Why, as the source says.
        why: String,
    },
    /// `nvidia-smi` listed processes without a used-memory figure: their
    /// figure is unknown (one note per word it printed instead).
    NvidiaWithoutFigure {
        /// How many processes.
        count: usize,
        /// What it printed instead (`N/A`, `[Insufficient Permissions]`).
        why: String,
    },
    /// `nvidia-smi` listed processes this /proc does not show.
    NvidiaUnknown {
        /// The PIDs.
        pids: Vec<u32>,
    },
    /// Processes whose open files could not be listed: GPU memory left out.
    GpuRestricted {
        /// How many processes.
        count: usize,
    },
    /// A GPU fdinfo that is not one (too big, not a regular file): not counted.
    NotAnFdinfo {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// A line of a GPU fdinfo that could not be read.
    FdinfoProblem {
        /// The file.
        path: PathBuf,
        /// What could not be read.
        problem: String,
    },
    /// A recorded process with no record of its open files (a recording
    /// made before GPU support): GPU fds not counted.
    NoFdRecord {
        /// The process's directory in the recording.
        path: PathBuf,
        /// The file a recording keeps the open files' targets in.
        record: &'static str,
    },
    /// Several recorded processes with no record of their open files: one
    /// note for all of them (the same sentence per process said nothing
    /// more), naming the first.
    NoFdRecords {
        /// How many processes.
        count: usize,
        /// The first such process's directory in the recording.
        first: PathBuf,
        /// The file a recording keeps the open files' targets in.
        record: &'static str,
    },
    /// A snapshot process whose stored totals disagree with its own
    /// regions' sums (an edited or damaged file): the sums are used.
    TotalsDisagree {
        /// Which document.
        side: Side,
        /// `pid N`, or the command where the document has no PID.
        who: String,
        /// The first figure that disagrees.
        figure: String,
        /// Its stored total.
        stored: Option<u64>,
        /// Its regions' sum.
        summed: Option<u64>,
    },
    /// A snapshot's stored total disagrees with its processes' sum: the
    /// sum is used.
    TotalDisagrees {
        /// Which document.
        side: Side,
    },
    /// `diff` of a snapshot taken with `--exact` and one without: the
    /// exclusive figures cannot be compared.
    ExclusiveMissing {
        /// The snapshot that lacks them.
        side: Side,
    },
    /// `diff` of a snapshot taken with `--wss` and one without: the
    /// working-set figures' changes are unknown.
    WorkingSetMissing {
        /// The snapshot that lacks them.
        side: Side,
    },
    /// A process `wss` reset that exited (or ran a new program) before
    /// the interval's end: it has no working set to report.
    ExitedDuringInterval {
        /// The process.
        pid: u32,
        /// Its short name.
        comm: String,
    },
    /// Mappings holding both dirty and clean pages, some touched: smaps
    /// does not say which of them were touched, so the working set counts
    /// the fewest clean ones it can be, and may be up to `bytes` more.
    WorkingSetSpread {
        /// The most the working set may be short by.
        bytes: u64,
        /// How many mappings.
        regions: usize,
    },
    /// Bytes in transparent huge pages: one referenced bit covers a whole
    /// huge page, so a byte touched there counts the huge page touched.
    TouchedHugePages {
        /// Bytes mapped with huge pages.
        bytes: u64,
    },
}

/// Which of two compared documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The first (before).
    First,
    /// The second (after).
    Second,
}

super::named::named! {
    /// Whether a row's subject is in the second snapshot only, the first
    /// only, or both.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Status {
        Appeared => "appeared", "in the second snapshot only";
        Vanished => "vanished", "in the first snapshot only";
        Changed => "changed", "in both snapshots";
    }
}

impl Status {
    /// The status of what is `before` in the first snapshot, `after` in
    /// the second (the total row, in neither, is changed).
    pub(crate) fn of(before: bool, after: bool) -> Status {
        match (before, after) {
            (false, true) => Status::Appeared,
            (true, false) => Status::Vanished,
            (true, true) | (false, false) => Status::Changed,
        }
    }
}
