//! A region's JSON object, the one way every document writes it: `show`
//! (streamed and whole), `snapshot`'s regions and `vmmap`. Each document
//! lists its keys once ([`RegionDoc`]: a name, the mapping's value it
//! holds, whether it is `null` or left out when unknown), and takes the
//! figures the mapping has from the figure list `Sizes` is generated
//! from (`known_sizes!`, [`KNOWN_KEYS`]); from that one list come the
//! bytes ([`RegionWriter`], straight into the output buffer), the serde
//! object of a document held whole ([`RegionObject`]) and its schema. A
//! new figure reaches every one of them from its line in `known_sizes!`.
//!
//! The documents differ in their keys and in their order: `show`'s
//! objects have their keys sorted (the order of every document
//! `--format json` prints), `snapshot`'s and `vmmap`'s the order their
//! keys are listed in; a sorted document's key order is worked out once
//! for each shape of region (which attributes and figures it has) and
//! reused while the next region has the same shape, as nearly all do.

mod bytes;
mod docs;
mod values;
mod writer;

use std::marker::PhantomData;

use serde::ser::{Serialize, SerializeMap, Serializer};

use self::docs::left_out;
pub use self::docs::{Document, RegionDoc, ShowRegion, SnapshotRegion, VmmapRegion};
pub use self::values::RegionRef;
pub(crate) use self::writer::write_linux_region;
pub use self::writer::RegionWriter;
use super::sizes::KNOWN_KEYS;
use super::snapshot::SnapRegion;

/// A region as the serde object of document `D`: for a document held
/// whole (`show` of several processes, a snapshot in memory). Its keys
/// in the order listed; a sorted document sorts them as it sorts all
/// of its keys (`serde_json::Value`).
#[derive(Debug, Clone, Copy)]
pub struct RegionObject<'a, D> {
    r: RegionRef<'a>,
    doc: PhantomData<D>,
}

impl<'a, D: RegionDoc> RegionObject<'a, D> {
    /// `r` as document `D`'s object.
    pub fn new(r: RegionRef<'a>) -> RegionObject<'a, D> {
        RegionObject { r, doc: PhantomData }
    }
}

impl<D: RegionDoc> Serialize for RegionObject<'_, D> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let r = &self.r;
        let mut map = serializer.serialize_map(None)?;
        for key in D::DOC.keys {
            let got = r.get(key.value);
            if !(key.omitted && got.is_none()) {
                map.serialize_entry(key.name, &got)?;
            }
        }
        if D::DOC.attributes {
            for (name, value) in r.attributes {
                map.serialize_entry(name, value)?;
            }
        }
        if let Some(s) = r.sizes().filter(|_| D::DOC.figures.is_some()) {
            for (i, (k, value)) in KNOWN_KEYS.iter().zip(s.known()).enumerate() {
                if let Some(value) = value.filter(|_| const { left_out(&D::DOC) } & 1 << i == 0) {
                    map.serialize_entry(k.name, &value)?;
                }
            }
            for (name, value) in &s.extra {
                map.serialize_entry(name, value)?;
            }
        }
        map.end()
    }
}

/// The object's schema, from the same keys: each key's type (and
/// description), those never left out required; the figures as
/// [`Sizes`](crate::model::Sizes) describes them, any other name a
/// figure too (or, beside the attributes, a string).
#[cfg(feature = "schema")]
impl<D: RegionDoc> schemars::JsonSchema for RegionObject<'_, D> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        D::DOC.name.into()
    }

    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        use self::docs::Kind;
        use super::region::Purge;
        use super::sizes::Sizes;
        use serde_json::{json, Map, Value as Json};
        let mut properties = Map::new();
        let mut additional = None;
        if D::DOC.figures.is_some() {
            let sizes = <Sizes as schemars::JsonSchema>::json_schema(g);
            if let Some(Json::Object(figures)) = sizes.get("properties") {
                properties.extend(figures.clone());
            }
            additional = sizes.get("additionalProperties").cloned();
        }
        if D::DOC.attributes {
            additional = Some(json!({ "type": ["string", "integer"] }));
        }
        for key in D::DOC.keys {
            let mut schema = match key.kind {
                Kind::Count => g.subschema_for::<usize>(),
                Kind::Number => g.subschema_for::<Option<u64>>(),
                Kind::Text => g.subschema_for::<&str>(),
                Kind::TextOrEmpty => {
                    let mut s = g.subschema_for::<String>();
                    s.insert("default".into(), "".into());
                    s
                }
                Kind::MaybeText => g.subschema_for::<Option<&str>>(),
                Kind::MaybePurge => g.subschema_for::<Option<Purge>>(),
            };
            if let Some(doc) = key.doc {
                schema.insert("description".into(), doc.into());
            }
            properties.insert(key.name.into(), schema.to_value());
        }
        let required: Vec<&str> =
            D::DOC.keys.iter().filter(|k| !k.omitted).map(|k| k.name).collect();
        let mut schema = Map::new();
        schema.insert("type".into(), "object".into());
        schema.insert("properties".into(), properties.into());
        schema.insert("required".into(), json!(required));
        if let Some(additional) = additional {
            schema.insert("additionalProperties".into(), additional);
        }
        if let Some(description) = D::DOC.description {
            schema.insert("description".into(), description.into());
        }
        schema.into()
    }
}

/// A snapshot's region, written from the same keys as `snapshot` streams
/// them.
impl Serialize for SnapRegion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        RegionObject::<SnapshotRegion>::new(RegionRef::snapshot(self)).serialize(s)
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for SnapRegion {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        <RegionObject<SnapshotRegion> as schemars::JsonSchema>::schema_name()
    }

    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        <RegionObject<SnapshotRegion> as schemars::JsonSchema>::json_schema(g)
    }
}

#[cfg(test)]
mod tests;
