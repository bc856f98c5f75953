//! The pure parsers: bytes in, the model out, no file opened and no
//! process asked, as `procfs-core` is apart from `procfs`. The system
//! readers (`ProcRoot`, the bounded reader of files, the scans, the
//! `vmmap` runner) read the bytes and hand them here; these are exactly
//! the functions the fuzz targets drive (`fuzz/`, `tests/library/fuzz_bodies.rs`).
//!
//! One signature: each module's `parse(input: &[u8]) -> Result<T,
//! ParseError>` over a whole small file (`status`, `stat`, `meminfo`,
//! `mounts`, cgroup `memory.stat`, zram `mm_stat`, `fd_targets`, `fdinfo` with its fd's
//! link, nvidia-smi XML, snapshot JSON). A format in which every line is
//! optional (status, meminfo, mounts, memory.stat, fd_targets) skips the
//! lines it cannot read and so never fails; it returns `Result` all the
//! same, and says in its comment what it accepts. The two that stream (a
//! `BufRead`, one reused line buffer, no whole-file string) are smaps and
//! maps ([`smaps::SmapsReader`], region by region or all) and
//! vmmap ([`vmmap::parse`] into a
//! [`VRegionSink`](crate::model::vmmap::VRegionSink); it fails only when
//! reading does, for an unreadable line is counted, never fatal).

pub mod fd_targets;
pub mod fdinfo;
pub mod meminfo;
pub mod memory_stat;
pub mod mounts;
pub mod nvidia;
pub(crate) mod pagemap;
pub mod smaps;
mod smaps_fields;
pub(crate) mod smaps_header;
mod smaps_size_line;
pub mod snapshot;
pub(crate) mod snapshot_feed;
pub mod snapshot_html;
pub(crate) mod snapshot_lines;
pub mod stat;
pub mod status;
pub mod vmmap;
pub(crate) mod vmmap_json;
pub mod zram_mm_stat;

/// Input a parser could not read: where, and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line number (for a failed read, the line being read); 0
    /// when the input has no lines to speak of (a JSON document).
    pub line: usize,
    /// What is wrong, in one line.
    pub message: String,
    /// Set when reading failed (rather than the text being wrong):
    /// the OS error, so callers can tell a vanished process from bad data.
    pub os_error: Option<i32>,
}

impl ParseError {
    /// Bad input at `line` (0: the input as a whole).
    pub fn at(line: usize, message: impl Into<String>) -> ParseError {
        ParseError { line, message: message.into(), os_error: None }
    }
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            0 => f.write_str(&self.message),
            n => write!(f, "line {n}: {}", self.message),
        }
    }
}

impl std::error::Error for ParseError {}
