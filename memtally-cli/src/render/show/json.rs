//! The JSON document of `show` (docs/json.md).

use std::io::Write;

use serde_json::{json, Map, Value};

use memtally_core::analyze::categorize;
use memtally_core::analyze::group::process_total;
use memtally_core::analyze::show::{Report, Row};
use memtally_core::model::{Named, Region, Sizes};

use crate::render::notes::{words, WithNotes};

/// A region as JSON: addresses as integers, sizes flattened in bytes.
pub fn region_json(r: &Region) -> Value {
    let mut m = Map::new();
    m.insert("start".into(), json!(r.start));
    m.insert("end".into(), json!(r.end));
    m.insert("perms".into(), json!(r.perms));
    m.insert("offset".into(), json!(r.offset));
    m.insert("device".into(), json!(r.device));
    m.insert("inode".into(), json!(r.inode));
    m.insert("path".into(), json!(r.path));
    m.insert("category".into(), json!(categorize(r).key()));
    m.insert("vm_flags".into(), json!(r.vm_flags));
    for (k, v) in &r.attributes {
        m.insert(k.clone(), json!(v));
    }
    flatten_sizes(&mut m, &r.sizes);
    Value::Object(m)
}

fn flatten_sizes(m: &mut Map<String, Value>, sizes: &Sizes) {
    for (k, v) in sizes.present() {
        m.insert(k.to_string(), json!(v));
    }
}

fn row_json(name: &str, row: &Row) -> Value {
    let mut m = Map::new();
    m.insert(name.into(), json!(row.key));
    m.insert("label".into(), json!(row.label));
    m.insert("regions".into(), json!(row.regions));
    flatten_sizes(&mut m, &row.sizes);
    Value::Object(m)
}

/// The top level of the JSON document, without the regions (which
/// [`json_value`] and [`json`] add, each its own way).
pub(super) fn json_doc(report: &Report) -> Map<String, Value> {
    let categories: Vec<Value> = report
        .categories
        .iter()
        .map(|(c, g)| {
            let row = Row {
                key: g.key.clone(),
                label: c.label().into(),
                regions: g.regions,
                sizes: g.sizes.clone(),
            };
            row_json("category", &row)
        })
        .collect();
    let mut doc = Map::new();
    if let [p] = report.processes.as_slice() {
        doc.insert("pid".into(), json!(p.pid));
        doc.insert("comm".into(), json!(p.comm));
        doc.insert("command".into(), json!(p.command()));
        doc.insert("source".into(), json!(p.source));
    }
    doc.insert("partial".into(), json!(!report.notes.is_empty()));
    doc.insert("notes".into(), json!(words(&report.notes)));
    doc.insert("gpu".into(), json!(report.gpu.as_ref().map(|g| WithNotes::new(g, &g.notes))));
    doc.insert("totals".into(), serde_json::to_value(&report.totals).unwrap_or(Value::Null));
    let mut shmem = Map::new();
    flatten_sizes(&mut shmem, &report.shmem);
    shmem.insert("uss".into(), json!(report.shmem.uss()));
    doc.insert("shmem".into(), Value::Object(shmem));
    doc.insert("categories".into(), Value::Array(categories));
    doc.insert("by".into(), json!(report.by.name()));
    doc.insert(
        "rows".into(),
        Value::Array(report.rows.iter().map(|r| row_json("key", r)).collect()),
    );
    doc.insert("rows_omitted".into(), json!(report.omitted));
    doc
}

/// The documented JSON document (see docs/json.md).
pub fn json_value(report: &Report) -> Value {
    let mut doc = json_doc(report);
    match report.processes.as_slice() {
        [one] => {
            doc.insert(
                "regions".into(),
                Value::Array(one.regions.iter().map(region_json).collect()),
            );
        }
        many => {
            let processes = many
                .iter()
                .map(|p| {
                    json!({
                        "pid": p.pid,
                        "comm": p.comm,
                        "command": p.command(),
                        "source": p.source,
                        "totals": process_total(p),
                        "regions": p.regions.iter().map(region_json).collect::<Vec<_>>(),
                    })
                })
                .collect();
            doc.insert("processes".into(), Value::Array(processes));
        }
    }
    Value::Object(doc)
}

/// Prints [`json_value`]'s document: several processes, each with its
/// regions in memory (`show --tree`). One process streams instead, through
/// [`RegionStream`], printing each region straight from the model.
pub fn json(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, &json_value(report))?;
    out.write_all(b"\n")
}
