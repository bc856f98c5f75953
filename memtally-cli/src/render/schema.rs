//! The JSON Schema (2020-12) of every document `--format json` prints and
//! of snapshot files, built from the very structs that print them
//! (`#[derive(JsonSchema)]` beside `#[derive(Serialize)]`, schemars reading
//! serde's attributes), so a type that serializes without a schema does
//! not compile. `memtally schema NAME` prints one; docs/schema/NAME.json
//! holds each, and tests/cli/schemas.rs fails when they drift apart
//! (`MEMTALLY_BLESS=1` rewrites them) and validates real outputs.
//!
//! Every object with known keys is closed (`unevaluatedProperties:
//! false`): a key the docs do not name fails validation. The maps whose
//! keys come from the data (size keys a newer kernel adds, smaps
//! attributes, classic counters) say what their values are instead.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{json, Map, Value};

use memtally_core::analyze::fault_report::FaultReport;

use crate::render::cgroup::CgroupJson;
use crate::render::files::FilesJson;
use crate::render::gpu::GpuJson;
use crate::render::json::{SCHEMA_KEY, SCHEMA_VERSION};
use crate::render::machine::MachineJson;
use crate::render::pages::{exact::ExactJson, shared::SharedJson, states::PagesJson};
use crate::render::show::ShowJson;
use crate::render::top_json::TopJson;
use crate::render::wss::WssJson;

/// One documented JSON output: its file name in docs/schema/ (`NAME.json`),
/// what prints it, and how its schema is built.
pub struct Document {
    pub name: &'static str,
    pub title: &'static str,
    build: fn(&mut SchemaGenerator) -> Schema,
    /// Whether the document carries the [`SCHEMA_KEY`] (snapshot files
    /// carry `memtally_snapshot` instead).
    versioned: bool,
}

/// Every document, in docs/json.md's order.
pub const DOCUMENTS: &[Document] = &[
    doc("top", "memtally top --format json (and --by)", TopJson::json_schema),
    doc("show", "memtally show --format json", ShowJson::json_schema),
    doc("files", "memtally files --format json", FilesJson::json_schema),
    doc("show-classic", "memtally show --classic --format json", crate::render::classic::schema),
    doc("machine", "memtally machine --format json", MachineJson::json_schema),
    doc("cgroup", "memtally cgroup --format json", CgroupJson::json_schema),
    doc("gpu", "memtally gpu --format json", GpuJson::json_schema),
    doc("wss", "memtally wss --format json", WssJson::json_schema),
    doc("faults", "memtally faults --format json", FaultReport::json_schema),
    doc("shared", "memtally shared --format json", SharedJson::json_schema),
    doc("show-pages", "memtally show PID --pages --format json", PagesJson::json_schema),
    doc("show-exact", "memtally show SELECTION --exact --format json", ExactJson::json_schema),
    doc("vmmap", "memtally vmmap --format json", vmmap),
    doc("diff", "memtally diff --format json", diff),
    doc("watch", "memtally watch --format json: each line, a sample or the summary", watch),
    Document {
        name: "snapshot",
        title: "each line of a snapshot file (memtally snapshot): the head line, then one record a line",
        build: snapshot,
        versioned: false,
    },
];

const fn doc(
    name: &'static str,
    title: &'static str,
    build: fn(&mut SchemaGenerator) -> Schema,
) -> Document {
    Document { name, title, build, versioned: true }
}

/// The document named `name`, if there is one.
pub fn find(name: &str) -> Option<&'static Document> {
    DOCUMENTS.iter().find(|d| d.name == name)
}

impl Document {
    /// The whole schema: its definitions inside, every known object closed.
    pub fn schema(&self) -> Value {
        let mut g = SchemaSettings::draft2020_12().for_serialize().into_generator();
        let mut root = (self.build)(&mut g);
        if self.versioned {
            for branch in top_objects(&mut root) {
                with_schema_key(branch);
            }
        }
        let defs = g.take_definitions(true);
        let mut root = root.to_value();
        if let Value::Object(o) = &mut root {
            let mut head = Map::new();
            head.insert("$schema".into(), json!("https://json-schema.org/draft/2020-12/schema"));
            head.insert("title".into(), json!(self.title));
            head.extend(std::mem::take(o));
            if !defs.is_empty() {
                head.insert("$defs".into(), Value::Object(defs));
            }
            *o = head;
        }
        close(&mut root, false);
        root
    }
}

/// The objects a document's top level is: the schema itself, or each
/// branch of a `oneOf` (the kinds of `watch` line).
fn top_objects(root: &mut Schema) -> Vec<&mut Map<String, Value>> {
    let o = root.ensure_object();
    if o.contains_key("oneOf") {
        match o.get_mut("oneOf") {
            Some(Value::Array(branches)) => {
                branches.iter_mut().filter_map(Value::as_object_mut).collect()
            }
            _ => Vec::new(),
        }
    } else {
        vec![o]
    }
}

/// Adds the required `schema` key, always [`SCHEMA_VERSION`].
fn with_schema_key(o: &mut Map<String, Value>) {
    let props = o.entry("properties").or_insert_with(|| json!({}));
    if let Value::Object(p) = props {
        p.insert(
            SCHEMA_KEY.into(),
            json!({ "description": "the version of this document's shape (CHANGELOG.md, \"Compatibility\")", "const": SCHEMA_VERSION }),
        );
    }
    let required = o.entry("required").or_insert_with(|| json!([]));
    if let Value::Array(r) = required {
        r.push(json!(SCHEMA_KEY));
    }
}

/// Adds the array `key` of `item`s, required, to the object `o` (a
/// streamed document's regions, printed apart from its other keys).
fn with_array(o: &mut Schema, key: &str, item: Schema) {
    let o = o.ensure_object();
    if let Value::Object(p) = o.entry("properties").or_insert_with(|| json!({})) {
        p.insert(key.into(), json!({ "type": "array", "items": item }));
    }
    if let Value::Array(r) = o.entry("required").or_insert_with(|| json!([])) {
        r.push(json!(key));
    }
}

/// vmmap's streamed document: the regions, then the other keys.
fn vmmap(g: &mut SchemaGenerator) -> Schema {
    let [region, mut rest] = crate::render::vmmap::schemas(g);
    with_array(&mut rest, "regions", region);
    rest
}

/// diff's document: the head, with the regions written one at a time.
fn diff(g: &mut SchemaGenerator) -> Schema {
    let [mut head, region] = crate::render::diff_json::schemas(g);
    with_array(&mut head, "regions", region);
    head
}

/// One line of `watch --format json`: a sample or the closing summary.
fn watch(g: &mut SchemaGenerator) -> Schema {
    let [sample, summary] = crate::render::watch::schemas(g);
    schemars::json_schema!({ "oneOf": [sample, summary] })
}

/// A line of a snapshot file: the head, or a record (the library's own
/// types, as it writes them).
fn snapshot(g: &mut SchemaGenerator) -> Schema {
    use memtally_core::model::snap_lines::{SnapHead, SnapLine};
    use memtally_core::model::snapshot::SnapRegion;
    let head = <SnapHead as schemars::JsonSchema>::json_schema(g);
    let line = <SnapLine<SnapRegion> as schemars::JsonSchema>::json_schema(g);
    schemars::json_schema!({ "oneOf": [head, line] })
}

/// Closes every object schema that lists its keys: `unevaluatedProperties:
/// false` where it says nothing of other keys. A branch of `allOf`/`anyOf`/
/// `oneOf` beside its parent's own keys stays open (the parent closes
/// over both); one that stands alone (an `Option` of a struct) is closed.
fn close(v: &mut Value, beside_parent_keys: bool) {
    let Value::Object(o) = v else { return };
    let has_keys = o.contains_key("properties");
    if has_keys
        && !beside_parent_keys
        && !o.contains_key("additionalProperties")
        && !o.contains_key("unevaluatedProperties")
    {
        o.insert("unevaluatedProperties".into(), Value::Bool(false));
    }
    for (k, child) in o.iter_mut() {
        match k.as_str() {
            "properties" | "$defs" | "patternProperties" => {
                if let Value::Object(m) = child {
                    m.values_mut().for_each(|c| close(c, false));
                }
            }
            "items" | "additionalProperties" | "not" | "contains" => close(child, false),
            "prefixItems" => {
                if let Value::Array(a) = child {
                    a.iter_mut().for_each(|c| close(c, false));
                }
            }
            "allOf" | "anyOf" | "oneOf" => {
                if let Value::Array(a) = child {
                    a.iter_mut().for_each(|c| close(c, has_keys));
                }
            }
            _ => {}
        }
    }
}
