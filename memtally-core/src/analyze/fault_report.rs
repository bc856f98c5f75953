//! What `memtally faults` found: the page faults of a selection, sampled
//! with their call stacks, as bytes per category of the faulting
//! address's mapping and per stack.

use serde::{Deserialize, Serialize};

use crate::analyze::Category;
pub use crate::model::faults::FaultAccess;

/// Faulted bytes, split by [`FaultAccess`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FaultBytes {
    /// Every faulted byte: read + write + unknown.
    pub bytes: u64,
    /// Read faults' bytes.
    pub read: u64,
    /// Write faults' bytes.
    pub write: u64,
    /// Bytes of faults not told read or write.
    pub unknown: u64,
}

impl FaultBytes {
    /// Adds `bytes` of `access`.
    pub fn add(&mut self, access: FaultAccess, bytes: u64) {
        self.bytes += bytes;
        match access {
            FaultAccess::Read => self.read += bytes,
            FaultAccess::Write => self.write += bytes,
            FaultAccess::Unknown => self.unknown += bytes,
        }
    }

    /// Adds another's figures.
    pub fn merge(&mut self, other: &FaultBytes) {
        self.bytes += other.bytes;
        self.read += other.read;
        self.write += other.write;
        self.unknown += other.unknown;
    }
}

/// One call stack and the bytes its faults made resident or dirtied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FaultStack {
    /// Function names, the faulting one first (innermost first). A frame
    /// without a symbol is `MODULE+0xOFFSET`, or `[unknown]` outside any
    /// file mapping.
    pub frames: Vec<String>,
    /// Its faulted bytes.
    #[serde(flatten)]
    pub bytes: FaultBytes,
}

/// One mapping the faults of a category fell in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FaultMapping {
    /// Its path or name (`[heap]`, a file, `[anon]` for an unnamed one).
    pub mapping: String,
    /// Its faulted bytes.
    #[serde(flatten)]
    pub bytes: FaultBytes,
    /// The stacks whose faults fell in it, most bytes first (the top
    /// ones: see `stacks_total`).
    #[serde(default)]
    pub stacks: Vec<FaultStack>,
    /// How many distinct stacks there were in all.
    #[serde(default)]
    pub stacks_total: usize,
}

/// The faults whose addresses fell in one category's mappings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FaultCategory {
    /// The category; null for addresses in no mapping memtally could read
    /// (the process unmapped it, or exited, before it was looked up).
    pub category: Option<Category>,
    /// Its faulted bytes.
    #[serde(flatten)]
    pub bytes: FaultBytes,
    /// Its stacks, most bytes first (the top ones: see `stacks_total`).
    pub stacks: Vec<FaultStack>,
    /// How many distinct stacks there were in all.
    pub stacks_total: usize,
    /// Its mappings, most bytes first.
    pub mappings: Vec<FaultMapping>,
}

/// One traced process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FaultProcess {
    /// Its PID.
    pub pid: u32,
    /// Its short name (comm).
    pub command: String,
    /// Its faulted bytes.
    #[serde(flatten)]
    pub bytes: FaultBytes,
}

/// A sample buffer smaller than asked: the locked-memory limit of a
/// user without CAP_IPC_LOCK (`kernel.perf_event_mlock_kb` a CPU, then
/// RLIMIT_MEMLOCK) refused the size asked, and it was halved until mapped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BufferCut {
    /// Data pages a CPU asked for.
    pub asked_pages: u64,
    /// Data pages a CPU mapped (the smallest ring's).
    pub pages: u64,
}

/// The whole recording.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FaultReport {
    /// How long the faults were recorded, in seconds.
    pub seconds: f64,
    /// One sample was taken every this many faults; bytes are scaled by it.
    pub sample_period: u64,
    /// Bytes a fault stands for (the base page size; a fault that maps a
    /// transparent huge page counts one base page).
    pub page_size: u64,
    /// Samples read.
    pub samples: u64,
    /// Samples the kernel dropped (its buffer was full): not in any figure.
    pub lost: u64,
    /// Whether faults the kernel takes on the process's behalf (a `read()`
    /// into a new buffer) were seen: false where memtally may watch user
    /// mode only (`perf_event_paranoid` 2 without CAP_PERFMON).
    pub kernel_faults_seen: bool,
    /// The sample buffer the kernel allowed, where smaller than asked;
    /// absent where it was as asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer_cut: Option<BufferCut>,
    /// Its faulted bytes.
    #[serde(flatten)]
    pub bytes: FaultBytes,
    /// Per process (those started meanwhile included).
    pub processes: Vec<FaultProcess>,
    /// Per category, most bytes first.
    pub categories: Vec<FaultCategory>,
}
