//! What every JSON document shares: its printed key order, and the
//! figure maps the row structs flatten into themselves.
//!
//! Each printer says which keys a document has with `#[derive(Serialize)]`
//! structs borrowing from the reports; [`line`] prints them with the keys
//! of every object sorted, the order these documents have always had
//! (they were built as `serde_json::Map`s, a `BTreeMap` here) and the one
//! a row's flattened figures can keep beside its own keys. The streamed
//! documents (`show`, `vmmap`) print their regions first instead
//! ([`stream_doc`](super::stream_doc)).

use std::io::{self, Write};

use serde::ser::{Serialize, SerializeMap, Serializer};

use memtally_core::model::{Figure, Named, Sizes};

/// `doc` as a JSON value: every object's keys sorted.
pub fn sorted(doc: &impl Serialize) -> io::Result<serde_json::Value> {
    serde_json::to_value(doc).map_err(io::Error::other)
}

/// Prints `doc` with its keys sorted, and a newline.
pub fn line(out: &mut dyn Write, doc: &impl Serialize) -> io::Result<()> {
    serde_json::to_writer(&mut *out, &sorted(doc)?)?;
    out.write_all(b"\n")
}

/// These figures of `sizes` as a map, each key there and `null` where
/// unknown (the fixed columns of `top`'s rows and `watch`'s samples);
/// `#[serde(flatten)]` puts them beside a row's own keys.
pub struct Figures<'a> {
    pub sizes: &'a Sizes,
    pub figures: &'a [Figure],
}

impl Serialize for Figures<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.figures.len()))?;
        for &f in self.figures {
            map.serialize_entry(f.name(), &self.sizes.figure(f))?;
        }
        map.end()
    }
}
