//! One sampled page fault as the recorder hands it on: where it fell,
//! whether it read or wrote, what it stands for, and its call stack.

use serde::Serialize;

use crate::model::Region;

/// Whether a fault read a page in or dirtied one, as told from the page
/// afterwards (see `source::faults` for how, and its limits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum FaultAccess {
    /// A read: the mapping is not writable, or the page found is the
    /// file's page (private file mapping) or the shared zero page
    /// (anonymous memory read before written): no dirty byte added.
    Read,
    /// A write: the page found is a private anonymous page of a private
    /// mapping (the copy a write made, or a new page written).
    Write,
    /// Not told: a shared writable mapping (file or shared memory; its
    /// pages are the same whether read or written), or the page was gone
    /// when looked at.
    Unknown,
}

/// One sampled fault, placed in the mapping its address fell in.
#[derive(Debug, Clone, Copy)]
pub struct FaultSample<'a> {
    /// The process it was taken in.
    pub pid: u32,
    /// The mapping the address fell in; `None`: none known.
    pub region: Option<&'a Region>,
    /// Read or write.
    pub access: FaultAccess,
    /// The bytes it stands for (sample period × page size).
    pub bytes: u64,
    /// Its call stack, innermost first (return addresses moved back into
    /// their calls).
    pub stack: &'a [u64],
}
