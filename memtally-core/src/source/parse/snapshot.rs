//! Reads a snapshot back from JSON: a `memtally snapshot` file (JSON Lines,
//! format 2, `snapshot_lines`; or one object, format 1: what a report page
//! embeds and what files were before), or the JSON of `memtally show` or
//! `memtally vmmap`, so any of them can be compared with `diff` and drawn
//! with `plot`. Every shape is read by serde into its own typed structs,
//! never into a tree of JSON values (about 17 times a document's size).

use serde::de::IgnoredAny;
use serde::Deserialize;

use crate::model::snap_lines::LINES_VERSION;
use crate::model::snapshot::{SnapProcess, SnapRegion, Snapshot, SnapshotKind, DOCUMENT_VERSION};
use crate::model::{SizeSource, Sizes};
use crate::source::parse::snapshot_lines::{self, LinesError};
use crate::source::parse::{vmmap_json, ParseError};

/// How a document starts: as a snapshot of some format, or otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Start {
    /// `{"memtally_snapshot":2`: a file of JSON Lines.
    Lines,
    /// `{"memtally_snapshot":1` (or not a number: serde says what is wrong).
    Document,
    /// `{"memtally_snapshot":N` of a format this build does not read.
    Unknown(u64),
    /// Anything else.
    Other,
}

/// What the first bytes of a document say it is (blanks skipped).
pub(crate) fn start_of(head: &[u8]) -> Start {
    const KEY: &[u8] = b"{\"memtally_snapshot\":";
    let mut bytes = head.iter().copied().filter(|b| !b.is_ascii_whitespace());
    if !KEY.iter().all(|&k| bytes.next() == Some(k)) {
        return Start::Other;
    }
    let digits: Vec<u8> = bytes.take_while(u8::is_ascii_digit).take(20).collect();
    match std::str::from_utf8(&digits).ok().and_then(|d| d.parse::<u64>().ok()) {
        Some(v) if v == u64::from(LINES_VERSION) => Start::Lines,
        Some(v) if v == u64::from(DOCUMENT_VERSION) => Start::Document,
        Some(v) => Start::Unknown(v),
        None => Start::Document,
    }
}

/// The words for a format this build does not read.
pub(crate) fn unknown_format(version: u64) -> String {
    format!(
        "snapshot format {version} is not one this memtally reads ({DOCUMENT_VERSION} or {LINES_VERSION})"
    )
}

/// A JSON document's bytes into a [`Snapshot`]: any document `diff` reads.
pub fn parse(input: &[u8]) -> Result<Snapshot, ParseError> {
    match start_of(input) {
        Start::Lines => snapshot_lines::snapshot(input).map_err(lines_error),
        Start::Unknown(v) => Err(ParseError::at(1, unknown_format(v))),
        Start::Document | Start::Other => match document(input)? {
            Some(snap) => Ok(snap),
            None => Err(ParseError::at(0, NOT_COMPARABLE)),
        },
    }
}

/// What a JSON document of no comparable shape is told.
pub(crate) const NOT_COMPARABLE: &str = "a JSON document memtally cannot compare: expected a snapshot, or the JSON of a process or of a vmmap report";

/// A snapshot file's error as a parser's: the line and what is wrong.
pub(crate) fn lines_error(e: LinesError) -> ParseError {
    match e {
        LinesError::Io(e) => {
            ParseError { line: 0, message: e.to_string(), os_error: e.raw_os_error() }
        }
        LinesError::Line { line, error } => {
            // serde_json counts lines and columns within the line.
            let whole = error.to_string();
            let place = format!(" at line {} column {}", error.line(), error.column());
            let message = whole.strip_suffix(&place).unwrap_or(&whole).to_string();
            let message = match error.classify() {
                serde_json::error::Category::Data => format!("not a valid snapshot: {message}"),
                _ => format!("not valid JSON: {message}"),
            };
            ParseError::at(line as usize, format!("{message} (column {})", error.column()))
        }
        LinesError::Order { line, what } => {
            ParseError::at(line as usize, format!("not a valid snapshot: expected {what}"))
        }
        LinesError::Version(v) => ParseError::at(1, unknown_format(u64::from(v))),
    }
}

/// A one-object JSON document into a snapshot; `None` for JSON of a shape
/// memtally cannot compare.
pub(crate) fn document(input: &[u8]) -> Result<Option<Snapshot>, ParseError> {
    let keys: Keys = serde_json::from_slice(input)
        .map_err(|e| ParseError::at(0, format!("not valid JSON: {e}")))?;
    let typed =
        |what: &str, e: serde_json::Error| ParseError::at(0, format!("not a valid {what}: {e}"));
    let snap = match keys.shape() {
        None => return Ok(None),
        Some(Shape::Snapshot) => {
            let snap: Snapshot = serde_json::from_slice(input).map_err(|e| typed("snapshot", e))?;
            check_document(snap.memtally_snapshot).map_err(|m| ParseError::at(0, m))?;
            snap
        }
        Some(Shape::ShowProcess) => {
            let p: ShowProcess =
                serde_json::from_slice(input).map_err(|e| typed("show document", e))?;
            Snapshot::of(vec![p.into()], SnapshotKind::Linux)
        }
        Some(Shape::ShowSelection) => {
            let s: ShowSelection =
                serde_json::from_slice(input).map_err(|e| typed("show document", e))?;
            Snapshot::of(s.processes.into_iter().map(Into::into).collect(), SnapshotKind::Linux)
        }
        Some(Shape::Vmmap) => {
            vmmap_json::snapshot(input).map_err(|e| typed("vmmap document", e))?
        }
    };
    Ok(Some(snap))
}

/// A one-object snapshot's format version, checked.
pub(crate) fn check_document(version: u32) -> Result<(), String> {
    match version == DOCUMENT_VERSION {
        true => Ok(()),
        false => Err(unknown_format(u64::from(version))),
    }
}

/// The documents a snapshot is read from.
enum Shape {
    /// A `memtally snapshot` document of one object.
    Snapshot,
    /// The JSON of one process shown.
    ShowProcess,
    /// The JSON of several processes shown.
    ShowSelection,
    /// The JSON of a vmmap report.
    Vmmap,
}

/// Which top-level keys a document has (their values skipped, not kept):
/// what tells the shapes apart.
#[derive(Deserialize)]
struct Keys {
    memtally_snapshot: Option<IgnoredAny>,
    pid: Option<IgnoredAny>,
    regions: Option<IgnoredAny>,
    processes: Option<IgnoredAny>,
    categories: Option<IgnoredAny>,
    regions_read: Option<IgnoredAny>,
    header: Option<IgnoredAny>,
}

impl Keys {
    fn shape(&self) -> Option<Shape> {
        if self.memtally_snapshot.is_some() {
            Some(Shape::Snapshot)
        } else if self.regions.is_some() && self.pid.is_some() {
            Some(Shape::ShowProcess)
        } else if self.processes.is_some() && self.categories.is_some() {
            Some(Shape::ShowSelection)
        } else if self.regions_read.is_some() && self.header.is_some() {
            Some(Shape::Vmmap)
        } else {
            None
        }
    }
}

/// A process object of the JSON show view (top level or in `processes`):
/// what a snapshot takes of it.
#[derive(Deserialize)]
pub(crate) struct ShowProcess {
    pid: Option<u64>,
    comm: Option<String>,
    command: Option<String>,
    source: Option<SizeSource>,
    #[serde(default)]
    totals: Sizes,
    #[serde(default)]
    regions: Vec<SnapRegion>,
}

/// The JSON show view of several processes.
#[derive(Deserialize)]
struct ShowSelection {
    processes: Vec<ShowProcess>,
}

impl From<ShowProcess> for SnapProcess {
    fn from(p: ShowProcess) -> SnapProcess {
        SnapProcess {
            pid: p.pid.map(|p| p as u32),
            ppid: None,
            user: None,
            comm: p.comm.unwrap_or_default(),
            command: p.command.unwrap_or_default(),
            source: p.source.unwrap_or(SizeSource::Smaps),
            totals: p.totals,
            categories: SnapProcess::categories_of(&p.regions),
            regions: p.regions,
            purgeable: Vec::new(),
            physical_footprint: None,
            exclusive: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_is_told_by_its_first_key_and_version() {
        assert_eq!(start_of(b"{\"memtally_snapshot\":2,\"kind\":"), Start::Lines);
        assert_eq!(start_of(b" {\n \"memtally_snapshot\" : 1 ,"), Start::Document);
        assert_eq!(start_of(b"{\"memtally_snapshot\":12,"), Start::Unknown(12));
        assert_eq!(start_of(b"{\"memtally_snapshot\":\"x\""), Start::Document);
        assert_eq!(start_of(b"{\"pid\":1}"), Start::Other);
        assert!(parse(b"{\"memtally_snapshot\":3}").unwrap_err().message.contains("format 3"));
    }

    #[test]
    fn shapes_are_told_apart_by_their_keys_whatever_their_values() {
        let shape =
            |json: &str| serde_json::from_str::<Keys>(json).unwrap().shape().map(|s| s as u8);
        assert_eq!(shape(r#"{"pid":1,"regions":[]}"#), Some(Shape::ShowProcess as u8));
        assert_eq!(shape(r#"{"processes":[],"categories":1}"#), Some(Shape::ShowSelection as u8));
        assert_eq!(shape(r#"{"header":{},"regions_read":0}"#), Some(Shape::Vmmap as u8));
        assert_eq!(shape(r#"{"regions":[],"x":{"pid":1}}"#), None);
        assert!(parse(br#"{"hello":1}"#).unwrap_err().message.contains("cannot compare"));
        let bad = parse(br#"{"pid":1,"regions":[{"start":1}]}"#).unwrap_err();
        assert!(bad.message.starts_with("not a valid show document"), "{bad:?}");
    }
}
