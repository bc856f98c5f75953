//! Prints the `show` view: a table for people, JSON and CSV with exact bytes.

use memtally_core::model::Named;
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
        [p] => format!(
            "pid {}  {}  (from {})\n",
            p.pid,
            crate::render::table::escape_controls(p.command()),
            source_name(p)
        ),
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
    let gpu = report.gpu.as_ref().filter(|_| report.by == crate::analyze::report::ShowBy::Category);
    for (label, sizes) in gpu.map(gpu_rows).unwrap_or_default() {
        let mut c = cells(&label, 0, &sizes);
        let regions = if report.by == crate::analyze::report::ShowBy::Path {
            c.len() - 2
        } else {
            c.len() - 1
        };
        c[regions] = "-".into();
        t.row(c);
    }
    t.footer(cells("total", report.region_count, &report.totals));
    out.write_all(heading(report.processes).as_bytes())?;
    out.write_all(t.render().as_bytes())?;
    if let Some(g) = gpu {
        writeln!(
            out,
            "GPU rows (not in the total): RSS = drm-resident, PSS = resident shared among the client's processes, VIRTUAL = drm-total; dma-buf: RSS = size, PSS = size / holders. reclaimable (LazyFree + drm-purgeable): {}. More: memtally gpu",
            human_opt(g.reclaimable)
        )?;
        for note in &g.notes {
            writeln!(out, "note: {note}")?;
        }
    }
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

/// The GPU rows of the category table: one per device and region, then
/// the dma-bufs (docs/gpu-json.md).
fn gpu_rows(g: &crate::analyze::gpu::GpuShow) -> Vec<(String, Sizes)> {
    let mut rows: Vec<(String, Sizes)> = g
        .entries
        .iter()
        .map(|e| {
            let sizes = Sizes {
                rss: e.memory.resident,
                pss: e.proportional,
                size: e.memory.total,
                ..Default::default()
            };
            (format!("GPU {} {} {}", e.driver, e.device, e.region), sizes)
        })
        .collect();
    if g.dmabuf.count > 0 {
        let sizes =
            Sizes { rss: Some(g.dmabuf.size), pss: Some(g.dmabuf.pss), ..Default::default() };
        rows.push((format!("GPU dma-buf ({})", g.dmabuf.count), sizes));
    }
    rows
}

/// Prints regions as they are read (`--regions` tables and CSV, and the
/// JSON document, whose regions come first), so memory stays bounded by
/// one region however large the smaps; [`RegionStream::finish`] prints
/// what needs every region (totals, rows, notes).
pub struct RegionStream {
    kind: StreamKind,
    started: bool,
    first: bool,
    buf: Vec<u8>,
    writer: RegionWriter,
    /// The terminal's width, asked once (tables are cut to it).
    width: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StreamKind {
    /// The single-process JSON document.
    Json,
    /// `--regions --format csv`.
    Csv,
    /// `--regions` table, fixed widths (like `pmap -X`).
    Table,
    /// Grouped table or CSV: nothing per region.
    Grouped(crate::render::Format),
}

/// Bytes gathered before a write to the output.
const FLUSH_AT: usize = 128 * 1024;

/// Column widths of the streamed regions table: wide enough for a
/// 48-bit address and `1023.9M`; a longer figure just pushes the row.
const ADDRESS_WIDTH: usize = 12;
const FIGURE_WIDTH: usize = 10;
const CATEGORY_WIDTH: usize = 14;

impl RegionStream {
    pub fn new(format: crate::render::Format, regions: bool) -> RegionStream {
        use crate::render::Format;
        let kind = match (format, regions) {
            (Format::Json, _) => StreamKind::Json,
            (Format::Csv, true) => StreamKind::Csv,
            (Format::Table, true) => StreamKind::Table,
            (f, false) => StreamKind::Grouped(f),
        };
        RegionStream {
            kind,
            started: false,
            first: true,
            buf: Vec::with_capacity(FLUSH_AT + 4096),
            writer: RegionWriter::default(),
            width: if kind == StreamKind::Table {
                crate::render::table::terminal_width()
            } else {
                None
            },
        }
    }

    /// Prints one region of process `p`.
    pub fn region(&mut self, p: &Process, r: &Region, out: &mut dyn Write) -> std::io::Result<()> {
        if !self.started {
            self.start(std::slice::from_ref(p))?;
        }
        match self.kind {
            StreamKind::Json => {
                if !self.first {
                    self.buf.push(b',');
                }
                self.writer.write(r, &mut self.buf)?;
            }
            StreamKind::Csv => {
                let mut rec = vec![
                    p.pid.to_string(),
                    csv_cell(r.start),
                    csv_cell(r.end),
                    r.perms.clone(),
                    categorize(r).key().to_string(),
                    r.path.clone().unwrap_or_default(),
                ];
                rec.extend(CSV_FIGURES.iter().map(|f| csv_cell(r.sizes.figure(f))));
                let mut w = csv::WriterBuilder::new().has_headers(false).from_writer(&mut self.buf);
                w.write_record(&rec)?;
                w.flush()?;
            }
            StreamKind::Table => {
                let start = r.start.map_or_else(|| "-".into(), |s| format!("{s:012x}"));
                let mut line = format!("{start:<ADDRESS_WIDTH$}  {:<5}", r.perms);
                for cell in figures(&r.sizes) {
                    line.push_str(&format!("{cell:>FIGURE_WIDTH$}"));
                }
                let category = categorize(r).key();
                line.push_str(&format!("  {category:<CATEGORY_WIDTH$}  "));
                line.push_str(r.path.as_deref().unwrap_or(""));
                let line = crate::render::table::escape_controls(line.trim_end().to_string());
                self.buf.extend_from_slice(fit_line(&line, self.width).as_bytes());
                self.buf.push(b'\n');
            }
            StreamKind::Grouped(_) => {}
        }
        self.first = false;
        if self.buf.len() >= FLUSH_AT {
            out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// What comes before the first region; called by the first
    /// [`region`](Self::region) with its process when not called before.
    pub fn start(&mut self, processes: &[Process]) -> std::io::Result<()> {
        self.started = true;
        match self.kind {
            StreamKind::Json => {
                let mut head = Map::new();
                if let [p] = processes {
                    head.insert("pid".into(), json!(p.pid));
                    head.insert("comm".into(), json!(p.comm));
                    head.insert("command".into(), json!(p.command()));
                    head.insert("source".into(), json!(p.source));
                }
                let text = serde_json::to_string(&Value::Object(head))?;
                // `{...}` without its closing brace, then the regions.
                self.buf.extend_from_slice(&text.as_bytes()[..text.len() - 1]);
                if text.len() > 2 {
                    self.buf.push(b',');
                }
                self.buf.extend_from_slice(b"\"regions\":[");
            }
            StreamKind::Csv => {
                let mut header = vec!["pid", "start", "end", "perms", "category", "path"];
                header.extend(CSV_FIGURES);
                let mut w = csv::Writer::from_writer(&mut self.buf);
                w.write_record(&header)?;
                w.flush()?;
            }
            StreamKind::Table => {
                self.buf.extend_from_slice(heading(processes).as_bytes());
                let mut line = format!("{:<ADDRESS_WIDTH$}  {:<5}", "ADDRESS", "PERMS");
                for (h, _) in COLUMNS {
                    line.push_str(&format!("{h:>FIGURE_WIDTH$}"));
                }
                line.push_str(&format!("  {:<CATEGORY_WIDTH$}  MAPPING", "CATEGORY"));
                self.buf.extend_from_slice(fit_line(&line, self.width).as_bytes());
                self.buf.push(b'\n');
            }
            StreamKind::Grouped(_) => {}
        }
        Ok(())
    }

    /// Prints what needs every region, and flushes.
    pub fn finish(mut self, report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
        if !self.started {
            self.start(report.processes)?;
        }
        match self.kind {
            StreamKind::Json => {
                self.buf.push(b']');
                for (k, v) in json_doc(report) {
                    if matches!(k.as_str(), "pid" | "comm" | "command" | "source") {
                        continue;
                    }
                    self.buf.push(b',');
                    serde_json::to_writer(&mut self.buf, &k)?;
                    self.buf.push(b':');
                    serde_json::to_writer(&mut self.buf, &v)?;
                }
                self.buf.extend_from_slice(b"}\n");
            }
            StreamKind::Csv => {}
            StreamKind::Table => {
                let mut line = format!("{:<ADDRESS_WIDTH$}  {:<5}", "total", "");
                for cell in figures(&report.totals) {
                    line.push_str(&format!("{cell:>FIGURE_WIDTH$}"));
                }
                line.push_str(&format!("  {} regions", report.region_count));
                self.buf.extend_from_slice(fit_line(&line, self.width).as_bytes());
                self.buf.push(b'\n');
                for note in &report.notes {
                    self.buf.extend_from_slice(format!("note: {note}\n").as_bytes());
                }
            }
            StreamKind::Grouped(crate::render::Format::Csv) => {
                out.write_all(&self.buf)?;
                return csv(report, false, out);
            }
            StreamKind::Grouped(_) => {
                out.write_all(&self.buf)?;
                return table(report, out);
            }
        }
        out.write_all(&self.buf)
    }
}

/// Cuts a line to `width` (the terminal's, when stdout is one).
fn fit_line(line: &str, width: Option<usize>) -> std::borrow::Cow<'_, str> {
    match width {
        Some(w) if line.chars().count() > w => line.chars().take(w).collect::<String>().into(),
        _ => line.into(),
    }
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

/// The top level of the JSON document, without the regions (which
/// [`json_value`] and [`json`] add, each its own way).
fn json_doc(report: &Report) -> Map<String, Value> {
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
    if let [p] = report.processes {
        doc.insert("pid".into(), json!(p.pid));
        doc.insert("comm".into(), json!(p.comm));
        doc.insert("command".into(), json!(p.command()));
        doc.insert("source".into(), json!(p.source));
    }
    doc.insert("partial".into(), json!(!report.notes.is_empty()));
    doc.insert("notes".into(), json!(report.notes));
    doc.insert("gpu".into(), json!(report.gpu));
    doc.insert("totals".into(), serde_json::to_value(&report.totals).unwrap_or(Value::Null));
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
    match report.processes {
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
                        "totals": crate::analyze::group::process_total(p),
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

/// Which value of a region a JSON key takes.
#[derive(Debug, Clone, Copy)]
enum Field {
    Start,
    End,
    Perms,
    Offset,
    Device,
    Inode,
    Path,
    Category,
    VmFlags,
    Attribute(usize),
    Known(usize),
    Extra(usize),
}

/// The keys of a region's JSON object in print order, worked out once for
/// each shape of region (which attributes and figures it has) and reused
/// while the next region has the same shape, as nearly all do.
#[derive(Default)]
struct RegionWriter {
    attributes: Vec<String>,
    extras: Vec<String>,
    known: u64,
    /// (`"key":` as JSON, field); `None` until the first region.
    layout: Option<Vec<(Vec<u8>, Field)>>,
}

impl RegionWriter {
    fn same_shape(&self, r: &Region, known: u64) -> bool {
        self.layout.is_some()
            && self.known == known
            && self.attributes.len() == r.attributes.len()
            && self.attributes.iter().zip(&r.attributes).all(|(a, (b, _))| a == b)
            && self.extras.len() == r.sizes.extra.len()
            && self.extras.iter().zip(&r.sizes.extra).all(|(a, (b, _))| a == b)
    }

    /// The key order `region_json`'s map gives: sorted, a later insert of
    /// the same key replacing the earlier value.
    fn relayout(&mut self, r: &Region, known: u64) -> std::io::Result<()> {
        let mut keys: std::collections::BTreeMap<&str, Field> = std::collections::BTreeMap::new();
        for (k, f) in [
            ("start", Field::Start),
            ("end", Field::End),
            ("perms", Field::Perms),
            ("offset", Field::Offset),
            ("device", Field::Device),
            ("inode", Field::Inode),
            ("path", Field::Path),
            ("category", Field::Category),
            ("vm_flags", Field::VmFlags),
        ] {
            keys.insert(k, f);
        }
        for (i, (k, _)) in r.attributes.iter().enumerate() {
            keys.insert(k, Field::Attribute(i));
        }
        for (i, k) in crate::model::sizes::KNOWN_KEYS.iter().enumerate() {
            if known & (1 << i) != 0 {
                keys.insert(k.name, Field::Known(i));
            }
        }
        for (i, (k, _)) in r.sizes.extra.iter().enumerate() {
            keys.insert(k, Field::Extra(i));
        }
        let mut layout = Vec::with_capacity(keys.len());
        for (k, f) in keys {
            let mut key = Vec::with_capacity(k.len() + 3);
            serde_json::to_writer(&mut key, k)?;
            key.push(b':');
            layout.push((key, f));
        }
        self.layout = Some(layout);
        self.known = known;
        self.attributes = r.attributes.iter().map(|(k, _)| k.clone()).collect();
        self.extras = r.sizes.extra.iter().map(|(k, _)| k.clone()).collect();
        Ok(())
    }

    fn write(&mut self, r: &Region, w: &mut Vec<u8>) -> std::io::Result<()> {
        let known_values = r.sizes.known();
        let known =
            known_values.iter().enumerate().fold(0, |m, (i, v)| m | ((v.is_some() as u64) << i));
        if !self.same_shape(r, known) {
            self.relayout(r, known)?;
        }
        let layout = self.layout.as_deref().unwrap_or_default();
        w.push(b'{');
        for (i, (key, field)) in layout.iter().enumerate() {
            if i > 0 {
                w.push(b',');
            }
            w.extend_from_slice(key);
            match *field {
                Field::Start => opt_u64(w, r.start),
                Field::End => opt_u64(w, r.end),
                Field::Offset => opt_u64(w, r.offset),
                Field::Inode => opt_u64(w, r.inode),
                Field::Perms => string(w, &r.perms)?,
                Field::Device => opt_string(w, r.device.as_deref())?,
                Field::Path => opt_string(w, r.path.as_deref())?,
                Field::VmFlags => opt_string(w, r.vm_flags.as_deref())?,
                Field::Category => string(w, categorize(r).key())?,
                Field::Attribute(i) => string(w, &r.attributes[i].1)?,
                Field::Known(i) => opt_u64(w, known_values[i]),
                Field::Extra(i) => opt_u64(w, Some(r.sizes.extra[i].1)),
            }
        }
        w.push(b'}');
        Ok(())
    }
}

fn opt_u64(w: &mut Vec<u8>, v: Option<u64>) {
    match v {
        Some(v) => {
            // Decimal digits, as serde_json prints integers.
            let mut digits = [0u8; 20];
            let mut i = digits.len();
            let mut v = v;
            loop {
                i -= 1;
                digits[i] = b'0' + (v % 10) as u8;
                v /= 10;
                if v == 0 {
                    break;
                }
            }
            w.extend_from_slice(&digits[i..]);
        }
        None => w.extend_from_slice(b"null"),
    }
}

fn string(w: &mut Vec<u8>, s: &str) -> std::io::Result<()> {
    // Plain text (as nearly every path, permission and flag is) needs no
    // escaping; anything else goes through serde_json's escaper.
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\' && b < 0x7f) {
        w.push(b'"');
        w.extend_from_slice(s.as_bytes());
        w.push(b'"');
        Ok(())
    } else {
        serde_json::to_writer(&mut *w, s).map_err(std::io::Error::from)
    }
}

fn opt_string(w: &mut Vec<u8>, s: Option<&str>) -> std::io::Result<()> {
    match s {
        Some(s) => string(w, s),
        None => {
            w.extend_from_slice(b"null");
            Ok(())
        }
    }
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
    if regions {
        let mut stream = RegionStream::new(crate::render::Format::Csv, true);
        stream.start(report.processes)?;
        for p in report.processes {
            for r in &p.regions {
                stream.region(p, r, out)?;
            }
        }
        return stream.finish(report, out);
    }
    let mut w = csv::Writer::from_writer(out);
    let mut header = vec![report.by.name(), "regions"];
    header.extend(CSV_FIGURES);
    w.write_record(&header)?;
    for row in &report.rows {
        let mut rec = vec![row.key.clone(), row.regions.to_string()];
        rec.extend(CSV_FIGURES.iter().map(|f| csv_cell(row.sizes.figure(f))));
        w.write_record(&rec)?;
    }
    let mut rec = vec!["total".to_string(), report.region_count.to_string()];
    rec.extend(CSV_FIGURES.iter().map(|f| csv_cell(report.totals.figure(f))));
    w.write_record(&rec)?;
    // GPU rows after the total, which they are not part of (docs/gpu-json.md).
    let gpu = report.gpu.as_ref().filter(|_| report.by == crate::analyze::report::ShowBy::Category);
    for (label, sizes) in gpu.map(gpu_rows).unwrap_or_default() {
        let mut rec = vec![label, String::new()];
        rec.extend(CSV_FIGURES.iter().map(|f| csv_cell(sizes.figure(f))));
        w.write_record(&rec)?;
    }
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::report::{build, ShowBy};
    use crate::model::{Backing, SizeSource};
    use crate::source::ProcRoot;

    fn slow(report: &Report) -> Value {
        json_value(report)
    }

    /// The streamed JSON of a one-process report, parsed back.
    fn fast(report: &Report) -> Value {
        let mut out = Vec::new();
        let mut stream = RegionStream::new(crate::render::Format::Json, false);
        for p in report.processes {
            for r in &p.regions {
                stream.region(p, r, &mut out).unwrap();
            }
        }
        stream.finish(report, &mut out).unwrap();
        serde_json::from_slice(&out).unwrap()
    }

    /// Streams a recorded process the way `show PID` does.
    fn streamed(
        root: &ProcRoot,
        pid: u32,
        by: ShowBy,
        format: crate::render::Format,
        regions: bool,
    ) -> Vec<u8> {
        let mut out = Vec::new();
        let mut stream = RegionStream::new(format, regions);
        let mut fold = crate::analyze::report::Fold::new(by);
        let p = root
            .process_with(pid, |p, r| {
                fold.add(&r);
                stream.region(p, &r, &mut out).unwrap();
            })
            .unwrap();
        let ps = [p];
        let report =
            crate::analyze::report::finish(&ps, fold, &["dirty".into(), "rss".into()], Some(5));
        stream.finish(&report, &mut out).unwrap();
        out
    }

    #[test]
    fn streaming_prints_what_the_in_memory_view_prints() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/fixtures/linux");
        let mut seen = 0;
        for tree in std::fs::read_dir(dir).unwrap() {
            let root = ProcRoot::new(tree.unwrap().path().join("proc"));
            let Ok(pids) = root.pids() else { continue };
            for pid in pids {
                let p = [root.process(pid).unwrap()];
                for by in [ShowBy::Category, ShowBy::Path, ShowBy::Perms] {
                    let report = build(&p, by, &["dirty".into(), "rss".into()], Some(5));
                    // JSON: the same document (keys in another order).
                    let got: Value = serde_json::from_slice(&streamed(
                        &root,
                        pid,
                        by,
                        crate::render::Format::Json,
                        false,
                    ))
                    .unwrap();
                    assert_eq!(got, json_value(&report), "pid {pid} by {}", by.name());
                    // Grouped table and CSV: the same bytes.
                    let mut want = Vec::new();
                    table(&report, &mut want).unwrap();
                    assert_eq!(streamed(&root, pid, by, crate::render::Format::Table, false), want);
                    let mut want = Vec::new();
                    csv(&report, false, &mut want).unwrap();
                    assert_eq!(streamed(&root, pid, by, crate::render::Format::Csv, false), want);
                    let mut want = Vec::new();
                    csv(&report, true, &mut want).unwrap();
                    assert_eq!(streamed(&root, pid, by, crate::render::Format::Csv, true), want);
                }
                let text = String::from_utf8(streamed(
                    &root,
                    pid,
                    ShowBy::Category,
                    crate::render::Format::Table,
                    true,
                ))
                .unwrap();
                assert_eq!(
                    text.lines().count(),
                    2 + p[0].regions.len() + 1,
                    "heading, header, a line per region, total"
                );
                assert!(text.lines().nth(1).unwrap().starts_with("ADDRESS"));
                seen += 1;
            }
        }
        assert!(seen >= 4, "recorded trees found: {seen}");
    }

    #[test]
    fn streamed_json_handles_every_region_shape() {
        let mut regions = Vec::new();
        for i in 0..40u64 {
            let mut r = Region::new(if i % 2 == 0 { Backing::File } else { Backing::Anonymous });
            r.start = Some(0x1000 * i);
            r.end = if i % 7 == 0 { None } else { Some(0x1000 * (i + 1)) };
            r.perms = "rw-p".into();
            r.device = (i % 3 != 0).then(|| "08:01".into());
            r.inode = Some(i);
            r.path = match i % 5 {
                0 => None,
                1 => Some("/tmp/a \"quoted\" name\\with\tcontrol\u{1}".into()),
                2 => Some("/tmp/caf\u{e9} \u{fffd}".into()),
                _ => Some("[anon:glibc: malloc arena]".into()),
            };
            r.vm_flags = (i % 4 != 0).then(|| "rd wr mr mw me ac".into());
            r.sizes.size = Some(4096);
            if i % 3 == 1 {
                r.sizes.rss = Some(4096 * i);
                r.sizes.swap_pss = Some(0);
            }
            if i % 6 == 2 {
                r.sizes.extra.push(("new_kernel_key".into(), i));
                r.sizes.extra.push(("another".into(), 1));
            }
            if i % 4 == 1 {
                r.attributes.push(("thp_eligible".into(), "1".into()));
                // A kernel key whose name collides with one of ours: the
                // later value wins, as in the map.
                r.attributes.push(("path".into(), "shadow".into()));
            }
            regions.push(r);
        }
        let p = [Process {
            pid: 7,
            comm: "t\"e\\st".into(),
            cmdline: "t a b".into(),
            source: SizeSource::Smaps,
            regions,
            rollup: None,
            streamed: None,
        }];
        let report = build(&p, ShowBy::Path, &["dirty".into()], None);
        assert_eq!(fast(&report), slow(&report));
        let mut none = p.clone();
        none[0].regions.clear();
        let empty = build(&none, ShowBy::Category, &[], None);
        assert_eq!(fast(&empty), slow(&empty));
        assert_eq!(fast(&empty)["regions"], Value::Array(vec![]));
    }
}
