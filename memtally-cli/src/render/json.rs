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
/// among them, and a newline. A document must have a JSON Schema
/// (docs/schema/, [`crate::render::schema`]): a printed type without
/// `#[derive(JsonSchema)]` does not compile.
pub fn line(out: &mut dyn Write, doc: &(impl Serialize + schemars::JsonSchema)) -> io::Result<()> {
    let mut doc = sorted(doc)?;
    if let serde_json::Value::Object(keys) = &mut doc {
        with_schema(keys);
    }
    serde_json::to_writer(&mut *out, &doc)?;
    out.write_all(b"\n")
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
