//! What each document's region object holds: its keys, each the
//! mapping's value it takes, in the document's order, and which figures
//! it has beside them.

use super::bytes::ShortBytes;
use crate::model::sizes::Figure;

/// The value of a mapping a key holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Value {
    /// The input line the region was read from (vmmap).
    Line,
    Start,
    End,
    Perms,
    MaxPerms,
    Offset,
    Device,
    Inode,
    Path,
    RegionType,
    /// The category key (Linux), or the region type (a vmmap snapshot).
    Category,
    /// The purge code (`N`, `V`, `E`, `-`).
    Purge,
    ShareMode,
    VmFlags,
    /// One figure of its sizes.
    Figure(Figure),
}

/// What a key's value is, as its schema says (the type a derived
/// document's field had).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// A count (`usize`).
    Count,
    /// Bytes or an address, or `null` (`Option<u64>`).
    Number,
    /// Text (`&str`).
    Text,
    /// Text, empty when a document read back has none (`String` with
    /// `#[serde(default)]`).
    TextOrEmpty,
    /// Text or `null` (`Option<&str>`).
    MaybeText,
    /// A purge code or `null` (`Option<Purge>`).
    MaybePurge,
}

/// One key of a region's object.
#[derive(Debug)]
pub(super) struct Key {
    pub(super) name: &'static str,
    pub(super) value: Value,
    /// Left out when the mapping has no such value; else `null`.
    pub(super) omitted: bool,
    #[cfg_attr(not(feature = "schema"), allow(dead_code))]
    pub(super) kind: Kind,
    /// The key's description in the document's schema.
    #[cfg_attr(not(feature = "schema"), allow(dead_code))]
    pub(super) doc: Option<&'static str>,
    /// `,"name":`.
    pub(super) bytes: ShortBytes,
}

const fn key(name: &'static str, value: Value, kind: Kind) -> Key {
    Key { name, value, omitted: false, kind, doc: None, bytes: ShortBytes::key(name) }
}

impl Key {
    /// Left out when unknown.
    const fn omitted(self) -> Key {
        Key { omitted: true, ..self }
    }

    const fn doc(self, doc: &'static str) -> Key {
        Key { doc: Some(doc), ..self }
    }
}

/// One document's region object.
#[derive(Debug)]
pub struct Document {
    /// Its schema's name (a definition of the document's schema).
    #[cfg_attr(not(feature = "schema"), allow(dead_code))]
    pub(super) name: &'static str,
    #[cfg_attr(not(feature = "schema"), allow(dead_code))]
    pub(super) description: Option<&'static str>,
    pub(super) keys: &'static [Key],
    /// The mapping's other smaps lines (`THPeligible`), each a key.
    pub(super) attributes: bool,
    /// The figures the mapping has, each a key, and those of its unknown
    /// size keys, but these (`None`: no figure beyond `keys`).
    pub(super) figures: Option<&'static [Figure]>,
    /// Keys sorted by name, else in the order of `keys`, then the
    /// attributes, then the figures.
    pub(super) sorted: bool,
}

/// A document a region object is part of.
pub trait RegionDoc {
    /// Its keys, order and figures.
    const DOC: Document;
}

/// `show --format json`'s regions (docs/json.md): every key there (`null`
/// where unknown), the smaps attributes and the figures the mapping has,
/// sorted.
#[derive(Debug)]
pub enum ShowRegion {}

/// A snapshot's regions (docs/snapshot.md): the figures the mapping has
/// but the page sizes, which describe it and are no bytes.
#[derive(Debug)]
pub enum SnapshotRegion {}

/// `vmmap --format json`'s regions (docs/vmmap-json.md): the four
/// columns of the region line under vmmap's names, each there.
#[derive(Debug)]
pub enum VmmapRegion {}

impl RegionDoc for ShowRegion {
    const DOC: Document = Document {
        name: "RegionJson",
        description: Some(
            "A region as JSON: addresses as integers, its attributes and sizes\n(bytes) beside its own keys.",
        ),
        keys: &[
            key("start", Value::Start, Kind::Number),
            key("end", Value::End, Kind::Number),
            key("perms", Value::Perms, Kind::Text),
            key("offset", Value::Offset, Kind::Number),
            key("device", Value::Device, Kind::MaybeText),
            key("inode", Value::Inode, Kind::Number),
            key("path", Value::Path, Kind::MaybeText),
            key("category", Value::Category, Kind::Text),
            key("vm_flags", Value::VmFlags, Kind::MaybeText),
        ],
        attributes: true,
        figures: Some(&[]),
        sorted: true,
    };
}

impl RegionDoc for SnapshotRegion {
    const DOC: Document = Document {
        name: "SnapRegion",
        description: Some("One region of a snapshot process: where it is, what it is, its sizes."),
        keys: &[
            key("start", Value::Start, Kind::Number)
                .doc("First address; `None` for placeholder ranges."),
            key("end", Value::End, Kind::Number)
                .doc("One past the last address; `None` for placeholder ranges."),
            key("perms", Value::Perms, Kind::TextOrEmpty)
                .doc("Permissions as the source prints them (`rw-p`, `rw-`)."),
            key("path", Value::Path, Kind::MaybeText)
                .doc("Linux pathname or vmmap region detail; `None` when there is none."),
            key("category", Value::Category, Kind::Text)
                .doc("The category key (Linux, `heap`) or region type (vmmap, `MALLOC_SMALL`)."),
            key("region_type", Value::RegionType, Kind::MaybeText)
                .omitted()
                .doc("vmmap's REGION TYPE; `None` on Linux."),
            key("purge", Value::Purge, Kind::MaybePurge)
                .omitted()
                .doc("vmmap's purge code (`N`, `V`, `E`, `-`); `None` on Linux."),
            key("offset", Value::Offset, Kind::Number)
                .omitted()
                .doc("Linux: the file offset of the mapping."),
            key("inode", Value::Inode, Kind::Number)
                .omitted()
                .doc("Linux: the inode of the backing file (0 when anonymous)."),
        ],
        attributes: false,
        figures: Some(&[Figure::KernelPageSize, Figure::MmuPageSize]),
        sorted: false,
    };
}

impl RegionDoc for VmmapRegion {
    const DOC: Document = Document {
        name: "JsonRegion",
        description: None,
        keys: &[
            key("line", Value::Line, Kind::Count),
            key("region_type", Value::RegionType, Kind::MaybeText),
            key("start", Value::Start, Kind::Number),
            key("end", Value::End, Kind::Number),
            key("vsize", Value::Figure(Figure::Size), Kind::Number),
            key("resident", Value::Figure(Figure::Rss), Kind::Number),
            key("dirty", Value::Figure(Figure::Dirty), Kind::Number),
            key("swap", Value::Figure(Figure::Swap), Kind::Number),
            key("purge", Value::Purge, Kind::Text),
            key("share_mode", Value::ShareMode, Kind::MaybeText),
            key("protection", Value::Perms, Kind::Text),
            key("max_protection", Value::MaxPerms, Kind::MaybeText),
            key("detail", Value::Path, Kind::MaybeText),
        ],
        attributes: false,
        figures: None,
        sorted: false,
    };
}

/// The known figures a document leaves out, one bit each (by their
/// place in [`KNOWN_KEYS`], which is their place among the figures).
pub(super) const fn left_out(doc: &Document) -> u64 {
    let except: &[Figure] = match doc.figures {
        Some(except) => except,
        None => &[],
    };
    let mut mask = 0;
    let mut i = 0;
    while i < except.len() {
        mask |= 1 << except[i] as u64;
        i += 1;
    }
    mask
}
