//! `diff --format json`: the head (totals, processes, categories, paths,
//! purgeable changes) as one JSON tree, the regions that appeared or
//! vanished streamed one at a time; and the schemas of both.

use std::collections::BTreeMap;

use serde::Serialize;

use memtally_core::analyze::diff::{Change, Diff, PurgeChange, RegionChange};
use memtally_core::analyze::diff_regions::RegionsLeft;
use memtally_core::analyze::vmmap::FootprintDiff;
use memtally_core::model::snapshot::SnapRegion;
use memtally_core::model::{Figure, Named, Sizes};

use crate::render::json;
use crate::render::notes::words;

/// One changed thing (the totals, a process, a category, a path): its
/// key under the name of what it is, both sides and the difference.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct ChangeJson<'a> {
    #[serde(flatten)]
    key: KeyJson<'a>,
    label: &'a str,
    status: &'static str,
    before: Option<&'a Sizes>,
    after: Option<&'a Sizes>,
    delta: DeltaJson<'a>,
}

/// The name a change's key goes by.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
enum KeyJson<'a> {
    Key(&'a str),
    Category(&'a str),
    Path(&'a str),
}

impl<'a> ChangeJson<'a> {
    fn of(c: &'a Change, key: fn(&'a str) -> KeyJson<'a>) -> ChangeJson<'a> {
        ChangeJson {
            key: key(&c.key),
            label: &c.label,
            status: c.status().name(),
            before: c.before.as_ref(),
            after: c.after.as_ref(),
            delta: DeltaJson(c),
        }
    }
}

/// A process's change, with its PID and command line.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct ProcessChangeJson<'a> {
    #[serde(flatten)]
    change: ChangeJson<'a>,
    pid: Option<u32>,
    command: &'a str,
}

/// `delta`: every figure either side has, after − before (signed bytes);
/// null where one side of a pair does not know it.
struct DeltaJson<'a>(&'a Change);

impl Serialize for DeltaJson<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let c = self.0;
        let signed = |d: Option<i128>| d.map(|d| d as i64);
        let mut m: BTreeMap<&str, Option<i64>> = BTreeMap::new();
        for s in [&c.before, &c.after].into_iter().flatten() {
            for &f in Figure::ALL.iter().filter(|&&f| s.field(f).is_some()) {
                m.insert(f.name(), signed(c.delta(f)));
            }
            for (n, _) in &s.extra {
                m.insert(n, signed(c.delta_extra(n)));
            }
        }
        for derived in [Figure::Dirty, Figure::Uss] {
            m.insert(derived.name(), signed(c.delta(derived)));
        }
        serializer.collect_map(m)
    }
}

/// The schema of that map: each figure signed bytes or null, and a size
/// key this build does not know ([`Sizes::extra`](memtally_core::model::Sizes)) the same.
#[cfg(feature = "schema")]
impl schemars::JsonSchema for DeltaJson<'_> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Delta".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let signed = || serde_json::json!({ "type": ["integer", "null"] });
        let properties: serde_json::Map<String, serde_json::Value> =
            Figure::ALL.iter().map(|f| (f.name().to_string(), signed())).collect();
        schemars::json_schema!({
            "type": "object",
            "properties": properties,
            "additionalProperties": signed(),
        })
    }
}

/// The JSON document without its regions (see [`Document`]).
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct DiffHead<'a> {
    seconds: Option<f64>,
    totals: ChangeJson<'a>,
    processes: Vec<ProcessChangeJson<'a>>,
    categories: Vec<ChangeJson<'a>>,
    paths: Vec<ChangeJson<'a>>,
    purge_changes: Vec<PurgeJson<'a>>,
    /// Only when some regions that appeared or vanished are not listed
    /// (`--regions`): how many, and their sizes summed.
    #[serde(skip_serializing_if = "Option::is_none")]
    regions_left: Option<RegionsLeftJson<'a>>,
    /// Only for two vmmap reports: their footprints (docs/json.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    vmmap: Option<&'a FootprintDiff>,
    /// Only when both snapshots were taken with `--exact` (docs/json.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    exact: Option<super::diff_exact::ExactDiffJson<'a>>,
    /// Only when there are some: the document of two sound snapshots
    /// stays as it was.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    notes: Vec<String>,
}

/// The head of `d`, `left` its regions not listed as one change
/// ([`left_change`](left_change)).
fn json_head<'a>(d: &'a Diff, left: Option<&'a Change>) -> DiffHead<'a> {
    DiffHead {
        seconds: d.seconds,
        totals: ChangeJson::of(&d.totals, KeyJson::Key),
        processes: d
            .processes
            .iter()
            .map(|c| ProcessChangeJson {
                change: ChangeJson::of(c, KeyJson::Key),
                pid: c.pid,
                command: &c.label,
            })
            .collect(),
        categories: d.categories.iter().map(|c| ChangeJson::of(c, KeyJson::Category)).collect(),
        paths: d.paths.iter().map(|c| ChangeJson::of(c, KeyJson::Path)).collect(),
        purge_changes: d.purge_changes.iter().map(PurgeJson::of).collect(),
        regions_left: d.regions_left.as_ref().zip(left).map(|(l, c)| RegionsLeftJson {
            appeared: l.appeared,
            vanished: l.vanished,
            change: ChangeJson::of(c, KeyJson::Key),
        }),
        vmmap: d.vmmap.as_ref(),
        exact: d.exact.as_ref().map(super::diff_exact::ExactDiffJson::of),
        notes: words(&d.notes),
    }
}

/// The regions not listed: how many appeared and vanished; `before` the
/// vanished ones' sizes summed, `after` the appeared ones', `delta` after
/// − before (a side with none is null, and counts as zero).
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct RegionsLeftJson<'a> {
    appeared: u64,
    vanished: u64,
    #[serde(flatten)]
    change: ChangeJson<'a>,
}

/// The regions not listed as one change: key `regions_left`, its label
/// how many appeared and vanished; before the vanished ones' sizes
/// summed, after the appeared ones'.
pub(super) fn left_change(l: &RegionsLeft) -> Change {
    Change {
        key: "regions_left".into(),
        label: format!("{} appeared, {} vanished", l.appeared, l.vanished),
        pid: None,
        before: l.before.clone(),
        after: l.after.clone(),
    }
}

/// A region whose purgeable state changed.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct PurgeJson<'a> {
    pid: Option<u32>,
    start: Option<u64>,
    end: Option<u64>,
    region_type: Option<&'a str>,
    path: Option<&'a str>,
    purge_before: &'static str,
    purge_after: &'static str,
    before: &'a Sizes,
    after: &'a Sizes,
}

impl PurgeJson<'_> {
    fn of(c: &PurgeChange) -> PurgeJson<'_> {
        let (before, after) = c.states();
        PurgeJson {
            pid: c.pid,
            start: c.after.start,
            end: c.after.end,
            region_type: c.after.region_type.as_deref(),
            path: c.after.path.as_deref(),
            purge_before: before,
            purge_after: after,
            before: &c.before.sizes,
            after: &c.after.sizes,
        }
    }
}

/// A region that appeared or vanished: the snapshot's region and whose.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct RegionChangeJson<'a> {
    #[serde(flatten)]
    region: &'a SnapRegion,
    pid: Option<u32>,
    status: &'static str,
}

/// The whole diff as JSON: the head as one JSON tree, the regions (there
/// can be hundreds of thousands) one at a time, never as one tree (so
/// it is written straight, not through [`json::line`]). Keys in sorted
/// order, as a JSON tree of it all would print them.
pub(super) struct Document<'a>(pub(super) &'a Diff);

impl Serialize for Document<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeMap};
        let left = self.0.regions_left.as_ref().map(left_change);
        let head =
            match json::sorted(&json_head(self.0, left.as_ref())).map_err(S::Error::custom)? {
                serde_json::Value::Object(mut head) => {
                    json::with_schema(&mut head);
                    head
                }
                _ => return Err(S::Error::custom("the diff's head is not a JSON object")),
            };
        let mut m = s.serialize_map(Some(head.len() + 1))?;
        let mut regions_done = false;
        for (k, v) in &head {
            if !regions_done && k.as_str() > "regions" {
                m.serialize_entry("regions", &Regions(&self.0.regions))?;
                regions_done = true;
            }
            m.serialize_entry(k, v)?;
        }
        if !regions_done {
            m.serialize_entry("regions", &Regions(&self.0.regions))?;
        }
        m.end()
    }
}

struct Regions<'a>(&'a [RegionChange]);

impl Serialize for Regions<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for r in self.0 {
            let region = RegionChangeJson {
                region: &r.region,
                pid: r.pid,
                status: if r.appeared { "appeared" } else { "vanished" },
            };
            seq.serialize_element(&json::sorted(&region).map_err(S::Error::custom)?)?;
        }
        seq.end()
    }
}

/// The schemas of the document's parts: its head (every key but the
/// regions) and one region (docs/schema/, [`crate::render::schema`]).
#[cfg(feature = "schema")]
pub(crate) fn schemas(g: &mut schemars::SchemaGenerator) -> [schemars::Schema; 2] {
    [
        <DiffHead as schemars::JsonSchema>::json_schema(g),
        <RegionChangeJson as schemars::JsonSchema>::json_schema(g),
    ]
}
