//! Reads a snapshot back from JSON: a `memtally snapshot` file (JSON Lines,
//! format 2, `snapshot_lines`; or one object, format 1: what a report page
//! embeds and what files were before), or the JSON of `memtally show` or
//! `memtally vmmap`, so any of them can be compared with `diff` and drawn
//! with `plot`. Every shape is read by serde as it streams into its own
//! typed structs, never into a tree of JSON values (about 17 times a
//! document's size), its regions handed to a feed (`snapshot_feed`).

use std::io::Read;

use serde::de::IgnoredAny;
use serde::Deserialize;

use crate::model::snap_lines::LINES_VERSION;
use crate::model::snapshot::{Snapshot, DOCUMENT_VERSION};
use crate::source::parse::snapshot_feed::{
    self, FeedShape, Kept, LinesFeed, RegionFeed, VmmapFeed,
};
use crate::source::parse::snapshot_lines::{self, LinesError};
use crate::source::parse::vmmap_json::{self, OtherKeys};
use crate::source::parse::ParseError;

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

/// A JSON document's bytes into a [`Snapshot`]: any document `diff` reads
/// but saved vmmap text and a report page.
pub fn parse(input: &[u8]) -> Result<Snapshot, ParseError> {
    let mut kept = Kept::default();
    let snap = parse_feeding(input, &mut kept)?;
    Ok(kept.into_snapshot(snap))
}

/// [`parse`], the regions handed to `feed` (the snapshot returned has none).
pub(crate) fn parse_feeding(
    input: &[u8],
    feed: &mut impl LinesFeed,
) -> Result<Snapshot, ParseError> {
    match start_of(input) {
        Start::Lines => snapshot_lines::read_feeding(input, feed, false).map_err(lines_error),
        Start::Unknown(v) => Err(ParseError::at(1, unknown_format(v))),
        Start::Document | Start::Other => match document(|| Ok(input), feed) {
            Ok(Some(snap)) => Ok(snap),
            Ok(None) => Err(ParseError::at(0, NOT_COMPARABLE)),
            Err(ReadError::Parse(e)) => Err(e),
            Err(ReadError::Io(e)) => {
                Err(ParseError { line: 0, message: e.to_string(), os_error: e.raw_os_error() })
            }
        },
    }
}

/// Why a document read from a stream gave no snapshot.
#[derive(Debug)]
pub enum ReadError {
    /// Reading failed.
    Io(std::io::Error),
    /// The document is not one memtally reads, as [`parse`] says.
    Parse(ParseError),
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

/// A one-object JSON document into a snapshot, its regions handed to
/// `feed`; `None` for JSON of a shape memtally cannot compare. It is read
/// twice, from what `open` gives each time: its keys (their values passed
/// over) tell its shape, then it is read so.
pub(crate) fn document<R: Read>(
    mut open: impl FnMut() -> std::io::Result<R>,
    feed: &mut impl RegionFeed,
) -> Result<Option<Snapshot>, ReadError> {
    let json = |what: &str, e: serde_json::Error| match e.classify() {
        serde_json::error::Category::Io => ReadError::Io(e.into()),
        _ => ReadError::Parse(ParseError::at(0, format!("{what}: {e}"))),
    };
    let keys: Keys = serde_json::from_reader(open().map_err(ReadError::Io)?)
        .map_err(|e| json("not valid JSON", e))?;
    let Some(shape) = keys.shape() else { return Ok(None) };
    let r = open().map_err(ReadError::Io)?;
    let typed = |what: &'static str| move |e| json(&format!("not a valid {what}"), e);
    let snap = match shape {
        Shape::Snapshot => {
            let snap =
                snapshot_feed::read(r, FeedShape::Snapshot, feed).map_err(typed("snapshot"))?;
            check_document(snap.memtally_snapshot)
                .map_err(|m| ReadError::Parse(ParseError::at(0, m)))?;
            snap
        }
        Shape::ShowProcess => {
            snapshot_feed::read(r, FeedShape::ShowProcess, feed).map_err(typed("show document"))?
        }
        Shape::ShowSelection => snapshot_feed::read(r, FeedShape::ShowSelection, feed)
            .map_err(typed("show document"))?,
        Shape::Vmmap => {
            let mut vmmap = VmmapFeed::new(feed);
            let doc = vmmap_json::read(r, OtherKeys::Skipped, &mut vmmap)
                .map_err(typed("vmmap document"))?;
            vmmap.finish(&doc)
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
#[derive(Clone, Copy)]
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
