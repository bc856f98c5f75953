//! What a report's reader must know to trust its figures: what was left
//! out, what could not be read, where a source disagreed with itself.
//!
//! A note is data (who, how many, why); its wording belongs to whoever
//! prints it (the command line words every note once, for every format),
//! so the library never writes a sentence a front end cannot change.

use std::path::PathBuf;

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
    /// Processes read from `status` only (permission denied on
    /// `smaps_rollup`): RSS, no PSS, not in the PSS totals.
    Restricted {
        /// How many processes.
        count: usize,
        /// What would let memtally read them, from its own credentials.
        hint: String,
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
    /// `nvidia-smi` listed a process without a used-memory figure.
    NvidiaWithoutFigure {
        /// The process.
        pid: u32,
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
}

/// Which of two compared documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The first (before).
    First,
    /// The second (after).
    Second,
}
