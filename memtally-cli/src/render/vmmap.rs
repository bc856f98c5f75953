//! Printers for `memtally vmmap`: tables for people, JSON and CSV with
//! exact bytes (docs/vmmap-json.md), and the seed's three reports byte for
//! byte (`--seed-view`).

use std::io::{self, Write};

use serde::Serialize;

use crate::analyze::group::Group;
use crate::analyze::vmmap::{CountMismatch, Footprint, Overcommit, SeedView, Tally};
use crate::model::{Purge, Region};
use crate::render::table::{Align, Table};
use crate::render::units::{human, human_opt};
use crate::source::vmmap::{Diagnostics, Document, Header, MallocZoneRow, SummaryRow};

/// Everything one `memtally vmmap` run prints from.
#[derive(Debug)]
pub struct Report<'a> {
    pub source: String,
    pub doc: &'a Document,
    pub tally: &'a Tally,
    /// Kept regions of the selected types, with their line numbers (JSON,
    /// CSV, `--regions`); empty otherwise.
    pub regions: &'a [(usize, Region)],
    pub groups: Option<(&'a str, Vec<Group>)>,
    pub mismatches: Vec<CountMismatch>,
    pub pow2: bool,
    pub list_regions: bool,
}

impl Report<'_> {
    /// True when something in the input could not be read or was elided.
    pub fn partial(&self) -> bool {
        let d = &self.doc.diagnostics;
        d.unreadable > 0 || d.elisions > 0
    }

    fn selected_summary(&self) -> impl Iterator<Item = &SummaryRow> {
        self.doc.summary.iter().filter(|s| self.tally.filter.matches(&s.region_type))
    }
}

/// REGIONS, VSIZE, RESIDENT, DIRTY, SWAP cells.
fn count_and_sizes(regions: u64, s: &crate::model::Sizes) -> [String; 5] {
    [
        regions.to_string(),
        human_opt(s.size),
        human_opt(s.rss),
        human_opt(s.dirty),
        human_opt(s.swap),
    ]
}

fn mb(n: u64) -> String {
    format!("{:7.2} MB", n as f64 / (1024.0 * 1024.0))
}

/// The seed's output, byte for byte, from memtally's figures.
pub fn seed(view: &SeedView, out: &mut dyn Write) -> io::Result<()> {
    for m in &view.mismatches {
        writeln!(out, "memtally: seed parity mismatch at {m}")?;
    }
    if !view.summaries.is_empty() {
        writeln!(out, "=== vmmap Summary Table ===")?;
        writeln!(
            out,
            "{:<26} | {:>5} | {:>10} | {:>10} | {:>10} | {:>10} | {:>10} | {:>10} | {:>10}",
            "REGION TYPE",
            "COUNT",
            "VIRTUAL",
            "RESIDENT",
            "DIRTY",
            "SWAPPED",
            "VOLATILE",
            "NONVOL",
            "EMPTY"
        )?;
        writeln!(out, "{}", "-".repeat(123))?;
        for s in &view.summaries {
            let f = s.figures;
            writeln!(
                out,
                "{:<26} | {:5} | {} | {} | {} | {} | {} | {} | {}",
                s.region_type,
                s.count,
                mb(f[0]),
                mb(f[1]),
                mb(f[2]),
                mb(f[3]),
                mb(f[4]),
                mb(f[5]),
                mb(f[6])
            )?;
        }
        writeln!(out)?;
    }
    if view.entries == 0 {
        return Ok(());
    }
    writeln!(out, "=== Per-Region Purgeability Breakdown ===")?;
    writeln!(
        out,
        "{:<26} | {:<22} | {:>5} | {:>10} | {:>10} | {:>10}",
        "REGION TYPE", "PURGE STATE", "COUNT", "VSIZE", "RSDNT+SWAP", "DIRTY"
    )?;
    writeln!(out, "{}", "-".repeat(98))?;
    let (mut rs, mut dirty, mut v, mut e, mut n) = (0u64, 0u64, 0u64, 0u64, 0u64);
    for ((rtype, purge), b) in &view.breakdown {
        writeln!(
            out,
            "{:<26} | {:<22} | {:5} | {} | {} | {}",
            rtype,
            Purge::from_code(purge).label(),
            b[0],
            mb(b[1]),
            mb(b[2]),
            mb(b[3])
        )?;
        rs += b[2];
        dirty += b[3];
        match *purge {
            "V" => v += b[1],
            "E" => e += b[1],
            "N" => n += b[1],
            _ => {}
        }
    }
    writeln!(out, "{}", "-".repeat(98))?;
    writeln!(
        out,
        "Total entries: {} | Resident+Swap: {} | Dirty: {} | Volatile VSIZE (V): {} | Empty/Purged VSIZE (E): {} | Non-Volatile VSIZE (N): {}",
        view.entries,
        mb(rs).trim(),
        mb(dirty).trim(),
        mb(v).trim(),
        mb(e).trim(),
        mb(n).trim()
    )?;
    for (rtype, sizes) in &view.hist {
        writeln!(out, "\n=== Histogram of {rtype} Regions by Virtual Size Bucket ===")?;
        let max = sizes.iter().map(|(s, c)| s * c.iter().sum::<u64>()).max().unwrap_or(0);
        for (size, p) in sizes {
            let count: u64 = p.iter().sum();
            let bucket_mem = size * count;
            let bar_len = if max > 0 {
                ((40u128 * bucket_mem as u128) as f64 / max as f64) as usize
            } else {
                0
            };
            writeln!(
                out,
                "{:8.1} KB | {:4} entries (N:{:4} V:{:4} E:{:4} -:{:4}) | {:7.2} MB | {}",
                *size as f64 / 1024.0,
                count,
                p[0],
                p[1],
                p[2],
                p[3],
                bucket_mem as f64 / (1024.0 * 1024.0),
                "*".repeat(bar_len)
            )?;
        }
    }
    Ok(())
}

fn header_line(h: &Header) -> String {
    let mut parts = Vec::new();
    match (&h.process, h.pid) {
        (Some(p), Some(pid)) => parts.push(format!("{p} [{pid}]")),
        (Some(p), None) => parts.push(p.clone()),
        (None, Some(pid)) => parts.push(format!("process {pid}")),
        (None, None) => parts.push("process not stated".into()),
    }
    if let Some(os) = &h.os_version {
        parts.push(os.clone());
    }
    if let Some(f) = h.physical_footprint {
        let peak =
            h.physical_footprint_peak.map(|p| format!(" (peak {})", human(p))).unwrap_or_default();
        parts.push(format!("physical footprint {}{peak}", human(f)));
    }
    if let Some(p) = h.page_size {
        parts.push(format!("page size {p}"));
    }
    if h.pages {
        let used = h.page_size_used.map(|p| p.to_string()).unwrap_or_else(|| "?".into());
        let assumed = if h.page_size_assumed { ", assumed" } else { "" };
        parts.push(format!("sizes were page counts (x {used} bytes{assumed})"));
    }
    parts.join(", ")
}

/// The human report.
pub fn table(r: &Report, out: &mut dyn Write) -> io::Result<()> {
    let doc = r.doc;
    writeln!(out, "vmmap: {}", header_line(&doc.header))?;
    let types = r.tally.filter.types();
    writeln!(
        out,
        "types: {}; {} of {} region lines selected",
        if types.is_empty() { "all".to_string() } else { types.join(", ") },
        r.tally.selected,
        r.tally.regions_read
    )?;
    let summary: Vec<&SummaryRow> = r.selected_summary().collect();
    if !summary.is_empty() {
        writeln!(out, "\nSummary table (as vmmap printed it):")?;
        let mut t = Table::new(&[
            ("REGION TYPE", Align::Left),
            ("COUNT", Align::Right),
            ("VIRTUAL", Align::Right),
            ("RESIDENT", Align::Right),
            ("DIRTY", Align::Right),
            ("SWAPPED", Align::Right),
            ("VOLATILE", Align::Right),
            ("NONVOL", Align::Right),
            ("EMPTY", Align::Right),
        ]);
        for s in summary {
            t.row(vec![
                s.region_type.clone(),
                s.count.map_or("-".into(), |c| c.to_string()),
                human_opt(s.virtual_size),
                human_opt(s.resident),
                human_opt(s.dirty),
                human_opt(s.swapped),
                human_opt(s.volatile),
                human_opt(s.nonvol),
                human_opt(s.empty),
            ]);
        }
        out.write_all(t.render().as_bytes())?;
    }
    if let Some((key, groups)) = &r.groups {
        writeln!(out, "\nBy {key}:")?;
        let mut t = Table::new(&[
            (key.to_uppercase().as_str(), Align::Left),
            ("REGIONS", Align::Right),
            ("VSIZE", Align::Right),
            ("RESIDENT", Align::Right),
            ("DIRTY", Align::Right),
            ("SWAP", Align::Right),
        ]);
        for g in groups {
            let mut row = vec![g.key.clone()];
            row.extend(count_and_sizes(g.regions as u64, &g.sizes));
            t.row(row);
        }
        let tot = &r.tally.total;
        let mut footer = vec!["total".to_string()];
        footer.extend(count_and_sizes(tot.regions, &tot.sizes));
        t.footer(footer);
        out.write_all(t.render().as_bytes())?;
    } else if r.tally.selected > 0 {
        writeln!(out, "\nBy region type and purge state:")?;
        let mut t = Table::new(&[
            ("REGION TYPE", Align::Left),
            ("PURGE", Align::Left),
            ("REGIONS", Align::Right),
            ("VSIZE", Align::Right),
            ("RESIDENT", Align::Right),
            ("DIRTY", Align::Right),
            ("SWAP", Align::Right),
        ]);
        for ((rtype, purge), b) in &r.tally.breakdown {
            let mut row = vec![rtype.clone(), Purge::from_code(purge).label().into()];
            row.extend(count_and_sizes(b.regions, &b.sizes));
            t.row(row);
        }
        let tot = &r.tally.total;
        let mut footer = vec!["total".to_string(), String::new()];
        footer.extend(count_and_sizes(tot.regions, &tot.sizes));
        t.footer(footer);
        out.write_all(t.render().as_bytes())?;
        footprint_table(&r.tally.footprint, out)?;
        histograms(r, out)?;
    }
    if r.list_regions && !r.regions.is_empty() {
        writeln!(out, "\nRegions:")?;
        let mut t = Table::new(&[
            ("LINE", Align::Right),
            ("REGION TYPE", Align::Left),
            ("START", Align::Left),
            ("END", Align::Left),
            ("VSIZE", Align::Right),
            ("RESIDENT", Align::Right),
            ("DIRTY", Align::Right),
            ("SWAP", Align::Right),
            ("PRT/MAX", Align::Left),
            ("SM", Align::Left),
            ("PURGE", Align::Left),
            ("DETAIL", Align::Left),
        ]);
        for (line, g) in r.regions {
            t.row(vec![
                line.to_string(),
                g.region_type.clone().unwrap_or_default(),
                g.start.map_or("-".into(), |a| format!("{a:x}")),
                g.end.map_or("-".into(), |a| format!("{a:x}")),
                human_opt(g.sizes.size),
                human_opt(g.sizes.rss),
                human_opt(g.sizes.dirty),
                human_opt(g.sizes.swap),
                format!("{}/{}", g.perms, g.max_perms.as_deref().unwrap_or("?")),
                g.share_mode.clone().unwrap_or_default(),
                g.purge.code().into(),
                g.path.clone().unwrap_or_default(),
            ]);
        }
        out.write_all(t.render().as_bytes())?;
    }
    warnings(r, out)
}

fn footprint_table(
    fp: &std::collections::BTreeMap<String, Footprint>,
    out: &mut dyn Write,
) -> io::Result<()> {
    if fp.values().all(|f| f.footprint.is_none()) {
        return Ok(());
    }
    writeln!(out, "\nFootprint (dirty + swapped) per type:")?;
    let mut t = Table::new(&[
        ("REGION TYPE", Align::Left),
        ("REGIONS", Align::Right),
        ("FOOTPRINT", Align::Right),
        ("RECLAIMABLE (V/E)", Align::Right),
        ("VOLATILE VSIZE", Align::Right),
        ("EMPTY VSIZE", Align::Right),
        ("NONVOL VSIZE", Align::Right),
    ]);
    let mut rows: Vec<(&String, &Footprint)> = fp.iter().collect();
    rows.sort_by(|a, b| b.1.footprint.cmp(&a.1.footprint).then(a.0.cmp(b.0)));
    for (k, f) in rows {
        t.row(vec![
            k.clone(),
            f.regions.to_string(),
            human_opt(f.footprint),
            human_opt(f.reclaimable),
            human(f.volatile_vsize),
            human(f.empty_vsize),
            human(f.nonvol_vsize),
        ]);
    }
    out.write_all(t.render().as_bytes())
}

fn histograms(r: &Report, out: &mut dyn Write) -> io::Result<()> {
    for rtype in r.tally.exact.keys() {
        let rows: Vec<(String, [u64; 4], u64)> = if r.pow2 {
            r.tally.pow2[rtype]
                .iter()
                .map(|(b, (p, bytes))| {
                    let label = if *b <= 1 {
                        format!("<= {b}")
                    } else {
                        format!("{}..{}", human(b / 2 + 1), human(*b))
                    };
                    (label, *p, *bytes)
                })
                .collect()
        } else {
            r.tally.exact[rtype]
                .iter()
                .map(|(s, p)| (human(*s), *p, s.saturating_mul(p.iter().sum())))
                .collect()
        };
        let how = if r.pow2 { "power-of-two size buckets" } else { "exact virtual size" };
        writeln!(out, "\nHistogram of {rtype} regions by {how}:")?;
        let max = rows.iter().map(|x| x.2).max().unwrap_or(0);
        let mut t = Table::new(&[
            ("VSIZE", Align::Right),
            ("REGIONS", Align::Right),
            ("N", Align::Right),
            ("V", Align::Right),
            ("E", Align::Right),
            ("-", Align::Right),
            ("TOTAL VSIZE", Align::Right),
            ("", Align::Left),
        ]);
        for (label, p, bytes) in rows {
            let bar = if max > 0 { (40u128 * bytes as u128 / max as u128) as usize } else { 0 };
            t.row(vec![
                label,
                p.iter().sum::<u64>().to_string(),
                p[0].to_string(),
                p[1].to_string(),
                p[2].to_string(),
                p[3].to_string(),
                human(bytes),
                "*".repeat(bar),
            ]);
        }
        out.write_all(t.render().as_bytes())?;
    }
    Ok(())
}

fn warnings(r: &Report, out: &mut dyn Write) -> io::Result<()> {
    let d = &r.doc.diagnostics;
    let mut lines: Vec<String> = Vec::new();
    if r.tally.overcommits > 0 {
        let s = &r.tally.overcommit_samples[0];
        lines.push(format!(
            "{} region(s) report dirty + swap above their virtual size (first: line {}, {} {} dirty + {} swap > {} vsize)",
            r.tally.overcommits,
            s.line,
            s.region_type,
            human(s.dirty),
            human(s.swap),
            human(s.vsize)
        ));
    }
    for m in &r.mismatches {
        lines.push(format!(
            "{}: {} region line(s), but the summary table counts {}",
            m.region_type, m.region_lines, m.summary_count
        ));
    }
    if d.unreadable > 0 {
        let first: Vec<String> = d
            .unreadable_samples
            .iter()
            .take(5)
            .map(|p| format!("line {}: {}", p.line, p.reason))
            .collect();
        lines.push(format!(
            "PARTIAL: {} line(s) look like regions or table rows but could not be read ({}); --format json lists them",
            d.unreadable,
            first.join("; ")
        ));
    }
    if d.damaged > 0 {
        let p = &d.damaged_samples[0];
        lines.push(format!(
            "{} region line(s) read with damaged non-size fields (first: line {}: {})",
            d.damaged, p.line, p.reason
        ));
    }
    if d.elisions > 0 {
        lines.push(format!(
            "PARTIAL: the input has {} elision line(s) (`...`): regions were left out by whoever saved it",
            d.elisions
        ));
    }
    lines.extend(d.notes.iter().cloned());
    if !lines.is_empty() {
        writeln!(out, "\nWarnings:")?;
        for l in lines {
            writeln!(out, "  {l}")?;
        }
    }
    Ok(())
}

#[derive(Serialize)]
struct JsonRegion<'a> {
    line: usize,
    region_type: Option<&'a str>,
    start: Option<u64>,
    end: Option<u64>,
    vsize: Option<u64>,
    resident: Option<u64>,
    dirty: Option<u64>,
    swap: Option<u64>,
    purge: &'static str,
    share_mode: Option<&'a str>,
    protection: &'a str,
    max_protection: Option<&'a str>,
    detail: Option<&'a str>,
}

fn json_region(line: usize, r: &Region) -> JsonRegion<'_> {
    JsonRegion {
        line,
        region_type: r.region_type.as_deref(),
        start: r.start,
        end: r.end,
        vsize: r.sizes.size,
        resident: r.sizes.rss,
        dirty: r.sizes.dirty,
        swap: r.sizes.swap,
        purge: r.purge.code(),
        share_mode: r.share_mode.as_deref(),
        protection: &r.perms,
        max_protection: r.max_perms.as_deref(),
        detail: r.path.as_deref(),
    }
}

#[derive(Serialize)]
struct JsonBreakdown<'a> {
    region_type: &'a str,
    purge: &'a str,
    regions: u64,
    vsize: Option<u64>,
    resident: Option<u64>,
    dirty: Option<u64>,
    swap: Option<u64>,
}

#[derive(Serialize)]
struct JsonFootprint<'a> {
    region_type: &'a str,
    #[serde(flatten)]
    footprint: &'a Footprint,
}

#[derive(Serialize)]
struct JsonHistRow {
    vsize: u64,
    regions: u64,
    n: u64,
    v: u64,
    e: u64,
    unmarked: u64,
    total_vsize: u64,
}

#[derive(Serialize)]
struct JsonHistogram<'a> {
    region_type: &'a str,
    exact: Vec<JsonHistRow>,
    pow2: Vec<JsonHistRow>,
}

#[derive(Serialize)]
struct JsonMalloc<'a> {
    columns: &'a [String],
    rows: &'a [MallocZoneRow],
}

#[derive(Serialize)]
struct JsonWarnings<'a> {
    overcommit_regions: u64,
    overcommit_samples: &'a [Overcommit],
    count_mismatches: &'a [CountMismatch],
}

#[derive(Serialize)]
struct JsonGroup<'a> {
    key: &'a str,
    groups: &'a [Group],
}

#[derive(Serialize)]
struct JsonDoc<'a> {
    source: &'a str,
    types: &'a [String],
    partial: bool,
    header: &'a Header,
    regions_read: u64,
    regions_selected: u64,
    regions: Vec<JsonRegion<'a>>,
    summary_columns: &'a [String],
    summary: Vec<&'a SummaryRow>,
    summary_totals: &'a [SummaryRow],
    malloc_zones: JsonMalloc<'a>,
    breakdown: Vec<JsonBreakdown<'a>>,
    footprint: Vec<JsonFootprint<'a>>,
    histograms: Vec<JsonHistogram<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    grouped: Option<JsonGroup<'a>>,
    warnings: JsonWarnings<'a>,
    unparsed: &'a Diagnostics,
}

/// Prints selected regions as they are parsed, for JSON (the document's
/// `regions` come first) and CSV, so memory stays flat however long the
/// report; [`finish`](VmmapStream::finish) prints the rest.
pub struct VmmapStream {
    json: bool,
    started: bool,
    first: bool,
    buf: Vec<u8>,
}

/// Bytes gathered before a write to the output.
const FLUSH_AT: usize = 128 * 1024;

/// The CSV columns, one row per selected region.
const CSV_HEADER: [&str; 13] = [
    "line",
    "region_type",
    "start",
    "end",
    "vsize",
    "resident",
    "dirty",
    "swap",
    "purge",
    "share_mode",
    "protection",
    "max_protection",
    "detail",
];

impl VmmapStream {
    /// For `--format json` (`json`) or `--format csv`.
    pub fn new(json: bool) -> VmmapStream {
        VmmapStream { json, started: false, first: true, buf: Vec::with_capacity(FLUSH_AT + 4096) }
    }

    fn start(&mut self) -> io::Result<()> {
        self.started = true;
        if self.json {
            self.buf.extend_from_slice(b"{\"regions\":[");
        } else {
            let mut w = csv::Writer::from_writer(&mut self.buf);
            w.write_record(CSV_HEADER)?;
            w.flush()?;
        }
        Ok(())
    }

    /// Prints one selected region, read on input line `line`.
    pub fn region(&mut self, line: usize, g: &Region, out: &mut dyn Write) -> io::Result<()> {
        if !self.started {
            self.start()?;
        }
        if self.json {
            if !self.first {
                self.buf.push(b',');
            }
            serde_json::to_writer(&mut self.buf, &json_region(line, g))
                .map_err(io::Error::other)?;
        } else {
            let o = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_default();
            let mut w = csv::WriterBuilder::new().has_headers(false).from_writer(&mut self.buf);
            w.write_record([
                line.to_string(),
                g.region_type.clone().unwrap_or_default(),
                o(g.start),
                o(g.end),
                o(g.sizes.size),
                o(g.sizes.rss),
                o(g.sizes.dirty),
                o(g.sizes.swap),
                g.purge.code().to_string(),
                g.share_mode.clone().unwrap_or_default(),
                g.perms.clone(),
                g.max_perms.clone().unwrap_or_default(),
                g.path.clone().unwrap_or_default(),
            ])?;
            w.flush()?;
        }
        self.first = false;
        if self.buf.len() >= FLUSH_AT {
            out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// Prints the rest: for JSON every key but `regions`, from the report.
    pub fn finish(mut self, r: &Report, out: &mut dyn Write) -> io::Result<()> {
        if !self.started {
            self.start()?;
        }
        if self.json {
            self.buf.push(b']');
            let doc = json_doc(r);
            let value = serde_json::to_value(&doc).map_err(io::Error::other)?;
            if let serde_json::Value::Object(map) = value {
                for (k, v) in map {
                    if k == "regions" {
                        continue;
                    }
                    self.buf.push(b',');
                    serde_json::to_writer(&mut self.buf, &k).map_err(io::Error::other)?;
                    self.buf.push(b':');
                    serde_json::to_writer(&mut self.buf, &v).map_err(io::Error::other)?;
                }
            }
            self.buf.extend_from_slice(b"}\n");
        }
        out.write_all(&self.buf)
    }
}

/// One JSON document (docs/vmmap-json.md), with the report's regions.
pub fn json(r: &Report, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer(&mut *out, &json_doc(r)).map_err(io::Error::other)?;
    writeln!(out)
}

fn json_doc<'a>(r: &'a Report) -> JsonDoc<'a> {
    let t = r.tally;
    JsonDoc {
        source: &r.source,
        types: t.filter.types(),
        partial: r.partial(),
        header: &r.doc.header,
        regions_read: t.regions_read,
        regions_selected: t.selected,
        regions: r.regions.iter().map(|(l, g)| json_region(*l, g)).collect(),
        summary_columns: &r.doc.summary_columns,
        summary: r.selected_summary().collect(),
        summary_totals: &r.doc.summary_totals,
        malloc_zones: JsonMalloc { columns: &r.doc.malloc_zone_columns, rows: &r.doc.malloc_zones },
        breakdown: t
            .breakdown
            .iter()
            .map(|((rt, p), b)| JsonBreakdown {
                region_type: rt,
                purge: p,
                regions: b.regions,
                vsize: b.sizes.size,
                resident: b.sizes.rss,
                dirty: b.sizes.dirty,
                swap: b.sizes.swap,
            })
            .collect(),
        footprint: t
            .footprint
            .iter()
            .map(|(k, f)| JsonFootprint { region_type: k, footprint: f })
            .collect(),
        histograms: t
            .exact
            .iter()
            .map(|(k, ex)| JsonHistogram {
                region_type: k,
                exact: ex
                    .iter()
                    .map(|(s, p)| hist_row(*s, p, s.saturating_mul(p.iter().sum())))
                    .collect(),
                pow2: t.pow2[k].iter().map(|(s, (p, bytes))| hist_row(*s, p, *bytes)).collect(),
            })
            .collect(),
        grouped: r.groups.as_ref().map(|(k, g)| JsonGroup { key: k, groups: g }),
        warnings: JsonWarnings {
            overcommit_regions: t.overcommits,
            overcommit_samples: &t.overcommit_samples,
            count_mismatches: &r.mismatches,
        },
        unparsed: &r.doc.diagnostics,
    }
}

fn hist_row(vsize: u64, p: &[u64; 4], total: u64) -> JsonHistRow {
    JsonHistRow {
        vsize,
        regions: p.iter().sum(),
        n: p[0],
        v: p[1],
        e: p[2],
        unmarked: p[3],
        total_vsize: total,
    }
}

/// One CSV row per selected region, exact bytes; empty cell = not given.
pub fn csv(r: &Report, out: &mut dyn Write) -> io::Result<()> {
    let mut stream = VmmapStream::new(false);
    for (line, g) in r.regions {
        stream.region(*line, g, out)?;
    }
    stream.finish(r, out)
}
