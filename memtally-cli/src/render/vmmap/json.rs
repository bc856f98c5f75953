//! `memtally vmmap --format json` (docs/vmmap-json.md), its regions
//! printed as they are read; and the CSV rows of the same stream.

use std::io::{self, Write};

use serde::Serialize;

use memtally_core::analyze::vmmap::{
    CountMismatch, Footprint, FootprintCheck, FootprintFrom, Overcommit, TotalCheck,
};
use memtally_core::model::region_json::{RegionRef, RegionWriter, VmmapRegion};
use memtally_core::model::vmmap::{
    Diagnostics, Header, MallocZoneRow, Problem, SummaryRow, VRegion, VRegionSink,
};
use memtally_core::model::{Flow, Sizes};

use crate::render::stream_doc::{NoKeys, StreamDoc};

use super::VmmapView;
use crate::render::table::csv_text;

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct JsonBreakdown<'a> {
    region_type: &'a str,
    purge: &'static str,
    regions: u64,
    vsize: Option<u64>,
    resident: Option<u64>,
    dirty: Option<u64>,
    swap: Option<u64>,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct JsonFootprint<'a> {
    region_type: &'a str,
    #[serde(flatten)]
    footprint: &'a Footprint,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct JsonFootprintTotal<'a> {
    from: FootprintFrom,
    #[serde(flatten)]
    footprint: &'a Footprint,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct JsonHistogram<'a> {
    region_type: &'a str,
    exact: Vec<JsonHistRow>,
    pow2: Vec<JsonHistRow>,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct JsonMalloc<'a> {
    columns: &'a [String],
    rows: &'a [MallocZoneRow],
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct JsonWarnings<'a> {
    overcommit_regions: u64,
    overcommit_samples: &'a [Overcommit],
    count_mismatches: &'a [CountMismatch],
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct JsonGroup<'a> {
    key: &'a str,
    groups: Vec<JsonGroupRow<'a>>,
}

/// A group as vmmap JSON has always written it: sizes in their own object.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct JsonGroupRow<'a> {
    key: &'a str,
    regions: usize,
    sizes: &'a Sizes,
}

/// Every key of the document but `regions`, which come first (as they
/// are read), then these, sorted.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct JsonDoc<'a> {
    source: &'a str,
    types: &'a [String],
    partial: bool,
    header: &'a Header,
    regions_read: u64,
    regions_selected: u64,
    summary_columns: &'a [String],
    summary: Vec<&'a SummaryRow>,
    summary_totals: &'a [SummaryRow],
    malloc_zones: JsonMalloc<'a>,
    breakdown: Vec<JsonBreakdown<'a>>,
    footprint: Vec<JsonFootprint<'a>>,
    footprint_total: JsonFootprintTotal<'a>,
    summary_total_check: Option<&'a TotalCheck>,
    footprint_check: Option<&'a FootprintCheck>,
    histograms: Vec<JsonHistogram<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    grouped: Option<JsonGroup<'a>>,
    warnings: JsonWarnings<'a>,
    unparsed: JsonDiagnostics<'a>,
}

/// The diagnostics as docs/vmmap-json.md has them: the model's fields,
/// its notes worded.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct JsonDiagnostics<'a> {
    lines: u64,
    unreadable: u64,
    unreadable_samples: &'a [Problem],
    damaged: u64,
    damaged_samples: &'a [Problem],
    elisions: u64,
    other_lines: u64,
    notes: Vec<String>,
}

fn json_diagnostics(d: &Diagnostics) -> JsonDiagnostics<'_> {
    JsonDiagnostics {
        lines: d.lines,
        unreadable: d.unreadable,
        unreadable_samples: &d.unreadable_samples,
        damaged: d.damaged,
        damaged_samples: &d.damaged_samples,
        elisions: d.elisions,
        other_lines: d.other_lines,
        notes: d.notes.iter().map(super::notes::document_note).collect(),
    }
}

/// Prints selected regions as they are parsed, for JSON (the document's
/// `regions` come first) and CSV, so memory stays flat however long the
/// report; [`finish`](VmmapStream::finish) prints the rest.
pub struct VmmapStream {
    json: bool,
    started: bool,
    pub(super) doc: StreamDoc,
}

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
        VmmapStream { json, started: false, doc: StreamDoc::default() }
    }

    /// The stream as a sink of the selected regions, printing to `out`: a
    /// write that fails stops the read, and [`finish`](Self::finish)
    /// returns its error.
    pub fn to<'a>(&'a mut self, out: &'a mut dyn Write) -> VmmapPrinting<'a> {
        VmmapPrinting { stream: self, out }
    }

    pub(super) fn start(&mut self) -> io::Result<()> {
        self.started = true;
        if self.json {
            self.doc.open(&NoKeys, "regions")?;
        } else {
            let mut w = csv::Writer::from_writer(self.doc.buf());
            w.write_record(CSV_HEADER)?;
            w.flush()?;
        }
        Ok(())
    }

    /// Prints one selected region, read on input line `line`.
    pub fn region(&mut self, line: usize, r: &VRegion<'_>, out: &mut dyn Write) -> io::Result<()> {
        if !self.started {
            self.start()?;
        }
        if self.json {
            self.doc.item(|buf| {
                RegionWriter::<VmmapRegion>::default().write(&RegionRef::vmmap_line(line, r), buf);
                Ok(())
            })?;
        } else {
            let o = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_default();
            let text = |t: Option<&str>| csv_text(t.unwrap_or_default().to_string());
            let mut w = csv::WriterBuilder::new().has_headers(false).from_writer(self.doc.buf());
            w.write_record([
                line.to_string(),
                text(Some(r.region_type)),
                o(r.start),
                o(r.end),
                o(r.vsize),
                o(r.resident),
                o(r.dirty),
                o(r.swap),
                r.purge.code().to_string(),
                text(r.share_mode),
                text(Some(r.prot)),
                text(r.max_prot),
                text(r.detail),
            ])?;
            w.flush()?;
        }
        self.doc.flush_if_full(out)
    }

    /// Prints the rest: for JSON every key but `regions`, from the report.
    pub fn finish(mut self, r: &VmmapView, out: &mut dyn Write) -> io::Result<()> {
        if let Some(e) = self.doc.take_failed() {
            return Err(e);
        }
        if !self.started {
            self.start()?;
        }
        if self.json {
            self.doc.close(&json_doc(r))?;
        }
        self.doc.write_out(out)
    }

    /// `--format csv`: the regions were printed as read (`--csv regions`),
    /// or another table now; input without region lines prints its
    /// summary table in their place.
    pub fn finish_csv(mut self, r: &VmmapView, out: &mut dyn Write) -> io::Result<()> {
        use super::csv_tables::{breakdown, footprint, summary, VmmapCsv};
        let rep = r.report;
        match r.csv {
            VmmapCsv::Regions if rep.tally.regions_read == 0 && !rep.doc.summary.is_empty() => {
                if let Some(e) = self.doc.take_failed() {
                    return Err(e);
                }
                summary(r, out)
            }
            VmmapCsv::Regions => self.finish(r, out),
            VmmapCsv::Summary => summary(r, out),
            VmmapCsv::Breakdown => breakdown(r, out),
            VmmapCsv::Footprint => footprint(r, out),
        }
    }
}

/// A [`VmmapStream`] printing regions as they are read.
pub struct VmmapPrinting<'a> {
    stream: &'a mut VmmapStream,
    out: &'a mut dyn Write,
}

impl VRegionSink for VmmapPrinting<'_> {
    fn region(&mut self, line: usize, r: &VRegion<'_>) -> Flow {
        let written = self.stream.region(line, r, self.out);
        self.stream.doc.keep(written)
    }
}

/// One JSON document (docs/vmmap-json.md) of the report's regions, as
/// [`VmmapStream`] prints it.
pub(super) fn json(r: &VmmapView, out: &mut dyn Write) -> io::Result<()> {
    let mut stream = VmmapStream::new(true);
    for (line, g) in &r.report.regions {
        stream.region(*line, &VRegion::of(g), out)?;
    }
    stream.finish(r, out)
}

fn json_doc<'a>(r: &'a VmmapView<'a>) -> JsonDoc<'a> {
    let t = &r.report.tally;
    JsonDoc {
        source: &r.report.source,
        types: t.filter.types(),
        partial: r.report.partial(),
        header: &r.report.doc.header,
        regions_read: t.regions_read,
        regions_selected: t.selected,
        summary_columns: &r.report.doc.summary_columns,
        summary: r.selected_summary().collect(),
        summary_totals: &r.report.doc.summary_totals,
        malloc_zones: JsonMalloc {
            columns: &r.report.doc.malloc_zone_columns,
            rows: &r.report.doc.malloc_zones,
        },
        breakdown: t
            .breakdown
            .iter()
            .map(|((rt, p), b)| JsonBreakdown {
                region_type: rt,
                purge: p.code(),
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
        footprint_total: JsonFootprintTotal {
            from: r.report.footprint_from,
            footprint: &r.report.footprint,
        },
        summary_total_check: r.report.total_check.as_ref(),
        footprint_check: r.report.footprint_check.as_ref(),
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
        grouped: r.report.groups.as_ref().map(|(k, g)| JsonGroup {
            key: k,
            groups: g
                .iter()
                .map(|g| JsonGroupRow { key: &g.key, regions: g.regions, sizes: &g.sizes })
                .collect(),
        }),
        warnings: JsonWarnings {
            overcommit_regions: t.overcommits,
            overcommit_samples: &t.overcommit_samples,
            count_mismatches: &r.report.mismatches,
        },
        unparsed: json_diagnostics(&r.report.doc.diagnostics),
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

/// The schemas of the streamed document's parts: one region, and the
/// keys after the regions (docs/schema/, [`crate::render::schema`]).
#[cfg(feature = "schema")]
pub(crate) fn schemas(g: &mut schemars::SchemaGenerator) -> [schemars::Schema; 2] {
    [
        <memtally_core::model::region_json::RegionObject<VmmapRegion> as schemars::JsonSchema>::json_schema(g),
        <JsonDoc as schemars::JsonSchema>::json_schema(g),
    ]
}
