//! Prints the `show` view: a table for people, JSON and CSV with exact bytes.

use std::io::Write;

use serde_json::{json, Map, Value};

use crate::analyze::categorize;
use crate::analyze::report::{Report, Row};
use crate::model::{Process, Region, Sizes};
use crate::render::table::{Align, Table};
use crate::render::units::human_opt;

/// The size columns of `show`, dirty first: it is what the seed says matters.
const COLUMNS: &[(&str, &str)] = &[
    ("PRIV DIRTY", "private_dirty"),
    ("SHR DIRTY", "shared_dirty"),
    ("RSS", "rss"),
    ("PSS", "pss"),
    ("CLEAN", "clean"),
    ("SWAP", "swap"),
    ("VIRTUAL", "size"),
];

fn figures(sizes: &Sizes) -> Vec<String> {
    COLUMNS.iter().map(|(_, f)| human_opt(sizes.figure(f))).collect()
}

/// The heading line: who, and where the figures came from.
fn heading(processes: &[Process]) -> String {
    match processes {
        [p] => format!("pid {}  {}  (from {})\n", p.pid, p.command(), source_name(p)),
        many => format!("{} processes\n", many.len()),
    }
}

fn source_name(p: &Process) -> &'static str {
    match p.source {
        crate::model::SizeSource::Smaps => "smaps",
        crate::model::SizeSource::SmapsRollup => "smaps_rollup",
        crate::model::SizeSource::Maps => "maps: virtual sizes only",
        crate::model::SizeSource::Status => "status: totals only",
        crate::model::SizeSource::Vmmap => "vmmap",
    }
}

/// The grouped table.
pub fn table(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    let first = report.by.name().to_uppercase();
    let mut headers: Vec<(&str, Align)> = vec![(first.as_str(), Align::Left)];
    headers.extend(COLUMNS.iter().map(|(h, _)| (*h, Align::Right)));
    headers.push(("REGIONS", Align::Right));
    // Paths are long: put them last so the numbers line up.
    if report.by == crate::analyze::report::ShowBy::Path {
        headers.rotate_left(1);
    }
    let mut t = Table::new(&headers);
    let cells = |label: &str, regions: usize, sizes: &Sizes| {
        let mut c = vec![label.to_string()];
        c.extend(figures(sizes));
        c.push(regions.to_string());
        if report.by == crate::analyze::report::ShowBy::Path {
            c.rotate_left(1);
        }
        c
    };
    for row in &report.rows {
        t.row(cells(&row.label, row.regions, &row.sizes));
    }
    let count: usize = report.processes.iter().map(|p| p.regions.len()).sum();
    t.footer(cells("total", count, &report.totals));
    out.write_all(heading(report.processes).as_bytes())?;
    out.write_all(t.render().as_bytes())?;
    if report.omitted > 0 {
        writeln!(
            out,
            "({} more rows not shown; totals include them. --top to change.)",
            report.omitted
        )?;
    }
    for note in &report.notes {
        writeln!(out, "note: {note}")?;
    }
    Ok(())
}

/// Every mapping, like `pmap -X`.
pub fn regions_table(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    let mut headers: Vec<(&str, Align)> = vec![("ADDRESS", Align::Left), ("PERMS", Align::Left)];
    headers.extend(COLUMNS.iter().map(|(h, _)| (*h, Align::Right)));
    headers.push(("CATEGORY", Align::Left));
    headers.push(("MAPPING", Align::Left));
    let mut t = Table::new(&headers);
    for p in report.processes {
        for r in &p.regions {
            let mut c =
                vec![r.start.map_or_else(|| "-".into(), |s| format!("{s:012x}")), r.perms.clone()];
            c.extend(figures(&r.sizes));
            c.push(categorize(r).key().to_string());
            c.push(r.path.clone().unwrap_or_default());
            t.row(c);
        }
    }
    let mut f = vec!["total".to_string(), String::new()];
    f.extend(figures(&report.totals));
    t.footer(f);
    out.write_all(heading(report.processes).as_bytes())?;
    out.write_all(t.render().as_bytes())?;
    for note in &report.notes {
        writeln!(out, "note: {note}")?;
    }
    Ok(())
}

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

/// The documented JSON document (see docs/json.md).
pub fn json_value(report: &Report) -> Value {
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
    let processes: Vec<Value> = report
        .processes
        .iter()
        .map(|p| {
            json!({
                "pid": p.pid,
                "comm": p.comm,
                "command": p.command(),
                "source": p.source,
                "totals": crate::analyze::group::process_total(p),
                "regions": p.regions.iter().map(region_json).collect::<Vec<_>>(),
            })
        })
        .collect();
    let mut doc = Map::new();
    if let [p] = report.processes {
        doc.insert("pid".into(), json!(p.pid));
        doc.insert("comm".into(), json!(p.comm));
        doc.insert("command".into(), json!(p.command()));
        doc.insert("source".into(), json!(p.source));
    }
    doc.insert("partial".into(), json!(!report.notes.is_empty()));
    doc.insert("notes".into(), json!(report.notes));
    doc.insert("totals".into(), serde_json::to_value(&report.totals).unwrap_or(Value::Null));
    doc.insert("categories".into(), Value::Array(categories));
    doc.insert("by".into(), json!(report.by.name()));
    doc.insert(
        "rows".into(),
        Value::Array(report.rows.iter().map(|r| row_json("key", r)).collect()),
    );
    doc.insert("rows_omitted".into(), json!(report.omitted));
    match processes.as_slice() {
        [one] => {
            doc.insert("regions".into(), one["regions"].clone());
        }
        _ => {
            doc.insert("processes".into(), Value::Array(processes));
        }
    }
    Value::Object(doc)
}

pub fn json(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, &json_value(report))?;
    out.write_all(b"\n")
}

/// CSV columns: every row has the same ones, in bytes; an unknown figure
/// is an empty cell.
const CSV_FIGURES: &[&str] = &[
    "size",
    "rss",
    "pss",
    "shared_clean",
    "shared_dirty",
    "private_clean",
    "private_dirty",
    "swap",
    "swap_pss",
    "anonymous",
    "locked",
];

fn csv_cell(v: Option<u64>) -> String {
    v.map_or_else(String::new, |v| v.to_string())
}

/// The grouped rows (or, with `regions`, every mapping) as CSV.
pub fn csv(report: &Report, regions: bool, out: &mut dyn Write) -> std::io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    if regions {
        let mut header = vec!["pid", "start", "end", "perms", "category", "path"];
        header.extend(CSV_FIGURES);
        w.write_record(&header)?;
        for p in report.processes {
            for r in &p.regions {
                let mut rec = vec![
                    p.pid.to_string(),
                    csv_cell(r.start),
                    csv_cell(r.end),
                    r.perms.clone(),
                    categorize(r).key().to_string(),
                    r.path.clone().unwrap_or_default(),
                ];
                rec.extend(CSV_FIGURES.iter().map(|f| csv_cell(r.sizes.figure(f))));
                w.write_record(&rec)?;
            }
        }
    } else {
        let mut header = vec![report.by.name(), "regions"];
        header.extend(CSV_FIGURES);
        w.write_record(&header)?;
        for row in &report.rows {
            let mut rec = vec![row.key.clone(), row.regions.to_string()];
            rec.extend(CSV_FIGURES.iter().map(|f| csv_cell(row.sizes.figure(f))));
            w.write_record(&rec)?;
        }
        let count: usize = report.processes.iter().map(|p| p.regions.len()).sum();
        let mut rec = vec!["total".to_string(), count.to_string()];
        rec.extend(CSV_FIGURES.iter().map(|f| csv_cell(report.totals.figure(f))));
        w.write_record(&rec)?;
    }
    w.flush()
}
