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

/// The key every JSON document printed with `--format json` carries at
/// its top level, whose value is [`SCHEMA_VERSION`].
pub const SCHEMA_KEY: &str = "schema";

/// The version of memtally's JSON documents: raised when a document
/// loses or renames a key, or a key changes its type or meaning; a new
/// key does not raise it (CHANGELOG.md, "Compatibility"). Snapshot files carry their own format
/// version, `memtally_snapshot`, instead.
pub const SCHEMA_VERSION: u64 = 1;

/// A document [`line`] and the streamed documents print. With the
/// `schema` feature (the schema test's build, tests/cli/schemas.rs) it
/// must also have a JSON Schema (docs/schema/, `memtally schema`): a
/// printed type without `#[derive(JsonSchema)]` does not compile there.
/// The installed binary, built without it, carries no schema code.
#[cfg(feature = "schema")]
pub trait Doc: Serialize + schemars::JsonSchema {}
#[cfg(feature = "schema")]
impl<T: Serialize + schemars::JsonSchema + ?Sized> Doc for T {}
/// A document [`line`] and the streamed documents print (with the
/// `schema` feature, one that has a JSON Schema too).
#[cfg(not(feature = "schema"))]
pub trait Doc: Serialize {}
#[cfg(not(feature = "schema"))]
impl<T: Serialize + ?Sized> Doc for T {}

/// `doc` as a JSON value: every object's keys sorted.
pub fn sorted(doc: &impl Serialize) -> io::Result<serde_json::Value> {
    serde_json::to_value(doc).map_err(io::Error::other)
}

/// Adds the [`SCHEMA_KEY`] to a document's top-level keys (the one place
/// every printer's document gets it: [`line`], the streamed documents'
/// closing keys, the diff's head).
pub fn with_schema(keys: &mut serde_json::Map<String, serde_json::Value>) {
    keys.insert(SCHEMA_KEY.into(), SCHEMA_VERSION.into());
}

/// Prints the document `doc` with its keys sorted, the [`SCHEMA_KEY`]
/// among them, and a newline. A [`Doc`]: with the `schema` feature, a
/// printed type without `#[derive(JsonSchema)]` does not compile.
pub fn line(out: &mut dyn Write, doc: &impl crate::render::json::Doc) -> io::Result<()> {
    let mut doc = sorted(doc)?;
    if let serde_json::Value::Object(keys) = &mut doc {
        with_schema(keys);
    }
    serde_json::to_writer(&mut *out, &doc)?;
    out.write_all(b"\n")
}

/// [`line`] for a document with long arrays (one entry per process):
/// `doc`'s own keys go through a JSON value, sorted, and each array named
/// in `arrays` is written in its key's place entry by entry from its
/// iterator (`doc` holds it empty), so no copy of it is built.
pub fn line_with_arrays(
    out: &mut dyn Write,
    doc: &impl crate::render::json::Doc,
    arrays: &mut [(&str, &mut dyn Entries)],
) -> io::Result<()> {
    let mut doc = sorted(doc)?;
    let serde_json::Value::Object(keys) = &mut doc else {
        return Err(io::Error::other("a document is a JSON object"));
    };
    with_schema(keys);
    out.write_all(b"{")?;
    for (i, (key, value)) in keys.iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        serde_json::to_writer(&mut *out, key)?;
        out.write_all(b":")?;
        match arrays.iter_mut().find(|(name, _)| name == key) {
            Some((_, entries)) => entries.write_array(out)?,
            None => serde_json::to_writer(&mut *out, value)?,
        }
    }
    out.write_all(b"}\n")
}

/// An array [`line_with_arrays`] writes one entry at a time.
pub trait Entries {
    /// Writes `[`, the entries, `]`.
    fn write_array(&mut self, out: &mut dyn Write) -> io::Result<()>;
}

/// The entries of an iterator, each serialized as it comes, its keys
/// sorted as every document's.
pub struct Each<I>(I);

/// The entries of `items` as an array for [`line_with_arrays`].
pub fn each<I: Iterator<Item = T>, T: Serialize>(items: I) -> Each<I> {
    Each(items)
}

impl<I: Iterator<Item = T>, T: Serialize> Entries for Each<I> {
    fn write_array(&mut self, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(b"[")?;
        for (i, item) in self.0.by_ref().enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            serde_json::to_writer(&mut *out, &sorted(&item)?)?;
        }
        out.write_all(b"]")
    }
}

/// These figures of `sizes` as a map, each key there and `null` where
/// unknown (the fixed columns of `top`'s rows and `watch`'s samples);
/// `#[serde(flatten)]` puts them beside a row's own keys.
pub struct Figures<'a> {
    pub sizes: &'a Sizes,
    pub figures: &'a [Figure],
}

/// The schema of those maps: any figure by name, bytes or null. Which
/// figures a view prints is chosen at run time (`--sort`, `wss`), so each
/// is allowed and none required; a key that is no figure is not.
#[cfg(feature = "schema")]
impl schemars::JsonSchema for Figures<'_> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Figures".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let properties: serde_json::Map<String, serde_json::Value> = Figure::ALL
            .iter()
            .map(|f| {
                (
                    f.name().to_string(),
                    serde_json::json!({ "type": ["integer", "null"], "minimum": 0 }),
                )
            })
            .collect();
        schemars::json_schema!({ "type": "object", "properties": properties })
    }
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
