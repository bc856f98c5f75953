//! Reads a snapshot back from JSON: a `memtally snapshot` document, or the
//! JSON of `memtally show` or `memtally vmmap`, so any of them can be
//! compared with `diff` and drawn with `plot`.

use serde::Deserialize;
use serde_json::Value;

use crate::model::snapshot::{
    SnapProcess, SnapPurgeable, SnapRegion, Snapshot, SnapshotKind, SNAPSHOT_VERSION,
};
use crate::model::{Group, Purge, SizeSource, Sizes};
use crate::source::parse::ParseError;

/// Turns a JSON document into a snapshot, or says what it is not.
pub fn from_json(value: Value) -> std::result::Result<Snapshot, ParseError> {
    snapshot(value).map_err(|message| ParseError::at(0, message))
}

/// A JSON document's bytes into a [`Snapshot`], as [`from_json`] reads it.
pub fn parse(input: &[u8]) -> std::result::Result<Snapshot, ParseError> {
    let value = serde_json::from_slice(input)
        .map_err(|e| ParseError::at(e.line(), format!("not valid JSON: {e}")))?;
    from_json(value)
}

/// The documents a snapshot is read from.
enum Shape {
    /// A `memtally snapshot` document.
    Snapshot,
    /// The JSON of one process shown.
    ShowProcess,
    /// The JSON of several processes shown.
    ShowSelection,
    /// The JSON of a vmmap report.
    Vmmap,
}

/// Which document `value` is, if it is one memtally writes.
fn shape(value: &Value) -> Option<Shape> {
    if value.get("memtally_snapshot").is_some() {
        Some(Shape::Snapshot)
    } else if value.get("regions").is_some() && value.get("pid").is_some() {
        Some(Shape::ShowProcess)
    } else if value.get("processes").is_some_and(Value::is_array)
        && value.get("categories").is_some()
    {
        Some(Shape::ShowSelection)
    } else if value.get("regions_read").is_some() && value.get("header").is_some() {
        Some(Shape::Vmmap)
    } else {
        None
    }
}

/// Whether `value` is a document memtally can compare (its reading may
/// still fail on a damaged one).
pub fn is_comparable(value: &Value) -> bool {
    shape(value).is_some()
}

fn snapshot(value: Value) -> std::result::Result<Snapshot, String> {
    match shape(&value) {
        Some(Shape::Snapshot) => {
            let version = value["memtally_snapshot"].as_u64().unwrap_or(0);
            if version != SNAPSHOT_VERSION as u64 {
                return Err(format!(
                    "snapshot format {version} is not the one this memtally reads ({SNAPSHOT_VERSION})"
                ));
            }
            serde_json::from_value(value).map_err(|e| format!("not a valid snapshot: {e}"))
        }
        Some(Shape::ShowProcess) => Ok(Snapshot::of(vec![show_process(&value)?], SnapshotKind::Linux)),
        Some(Shape::ShowSelection) => {
            let procs = value["processes"].as_array().into_iter().flatten();
            let processes = procs.map(show_process).collect::<std::result::Result<Vec<_>, _>>()?;
            Ok(Snapshot::of(processes, SnapshotKind::Linux))
        }
        Some(Shape::Vmmap) => vmmap_json(&value),
        None => Err("a JSON document memtally cannot compare: expected a snapshot, or the JSON of a process or of a vmmap report".into()),
    }
}

/// The JSON view of a vmmap report (docs/vmmap-json.md).
fn vmmap_json(v: &Value) -> std::result::Result<Snapshot, String> {
    let num = |o: &Value, k: &str| o.get(k).and_then(Value::as_u64);
    let regions: Vec<SnapRegion> = v["regions"]
        .as_array()
        .map(|rs| {
            rs.iter()
                .map(|r| -> std::result::Result<SnapRegion, String> {
                    let region_type = r
                        .get("region_type")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string();
                    Ok(SnapRegion {
                        start: num(r, "start"),
                        end: num(r, "end"),
                        perms: r
                            .get("protection")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_string(),
                        path: r.get("detail").and_then(Value::as_str).map(String::from),
                        category: region_type.clone(),
                        region_type: Some(region_type),
                        purge: match r.get("purge") {
                            Some(p) => Some(
                                Purge::deserialize(p)
                                    .map_err(|e| format!("regions: purge: {e}"))?,
                            ),
                            None => None,
                        },
                        offset: None,
                        inode: None,
                        sizes: Sizes {
                            size: num(r, "vsize"),
                            rss: num(r, "resident"),
                            dirty: num(r, "dirty"),
                            swap: num(r, "swap"),
                            ..Default::default()
                        },
                    })
                })
                .collect()
        })
        .transpose()?
        .unwrap_or_default();
    let categories = if regions.is_empty() {
        v["summary"]
            .as_array()
            .map(|rows| {
                rows.iter()
                    .map(|s| Group {
                        key: s
                            .get("region_type")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_string(),
                        regions: num(s, "count").unwrap_or(0) as usize,
                        sizes: Sizes {
                            size: num(s, "virtual"),
                            rss: num(s, "resident"),
                            dirty: num(s, "dirty"),
                            swap: num(s, "swapped"),
                            ..Default::default()
                        },
                    })
                    .collect()
            })
            .unwrap_or_default()
    } else {
        SnapProcess::categories_of(&regions)
    };
    let mut totals = Sizes::default();
    for c in &categories {
        totals.add(&c.sizes);
    }
    let purgeable = match regions.is_empty() {
        true => v["summary"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|s| SnapPurgeable {
                region_type: s["region_type"].as_str().unwrap_or_default().to_string(),
                volatile: num(s, "volatile"),
                nonvol: num(s, "nonvol"),
                empty: num(s, "empty"),
            })
            .collect(),
        false => Vec::new(),
    };
    let h = &v["header"];
    let process = SnapProcess {
        pid: num(h, "pid").map(|p| p as u32),
        ppid: None,
        user: None,
        comm: h.get("process").and_then(Value::as_str).unwrap_or_default().to_string(),
        command: h
            .get("path")
            .or_else(|| h.get("process"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        source: SizeSource::Vmmap,
        totals,
        categories,
        regions,
        purgeable,
        physical_footprint: num(h, "physical_footprint"),
        exclusive: None,
    };
    let mut snap = Snapshot::of(vec![process], SnapshotKind::Vmmap);
    snap.kernel = h.get("os_version").and_then(Value::as_str).map(String::from);
    Ok(snap)
}

/// A process object of the JSON show view (top level or in `processes`).
fn show_process(v: &Value) -> std::result::Result<SnapProcess, String> {
    let regions: Vec<SnapRegion> =
        serde_json::from_value(v.get("regions").cloned().unwrap_or(Value::Array(vec![])))
            .map_err(|e| format!("regions: {e}"))?;
    let totals: Sizes = serde_json::from_value(
        v.get("totals").cloned().unwrap_or(Value::Object(Default::default())),
    )
    .map_err(|e| format!("totals: {e}"))?;
    let categories = SnapProcess::categories_of(&regions);
    Ok(SnapProcess {
        pid: v.get("pid").and_then(Value::as_u64).map(|p| p as u32),
        ppid: None,
        user: None,
        comm: v.get("comm").and_then(Value::as_str).unwrap_or_default().to_string(),
        command: v.get("command").and_then(Value::as_str).unwrap_or_default().to_string(),
        source: match v.get("source") {
            Some(s) => serde_json::from_value(s.clone()).map_err(|e| format!("source: {e}"))?,
            None => SizeSource::Smaps,
        },
        totals,
        categories,
        regions,
        purgeable: Vec::new(),
        physical_footprint: None,
        exclusive: None,
    })
}
