//! The JSON document of `show` (docs/json.md).

use std::io::Write;

use serde::Serialize;

use memtally_core::analyze::categorize;
use memtally_core::analyze::gpu::GpuShow;
use memtally_core::analyze::group::process_total;
use memtally_core::analyze::rounding::{Rounding, TotalsFrom};
use memtally_core::analyze::show::{Row, ShowReport};
use memtally_core::model::region_json::{RegionObject, RegionRef, ShowRegion};
use memtally_core::model::{Named, Process, Region, SizeSource, Sizes};

use crate::render::json;
use crate::render::notes::{words, WithNotes};

/// A region as `show` prints it (`region_json::ShowRegion`: its keys,
/// sorted, the smaps attributes and the figures the mapping has).
pub(super) type RegionJson<'a> = RegionObject<'a, ShowRegion>;

/// Region `r` as `show` prints it.
pub(super) fn region_json(r: &Region) -> RegionJson<'_> {
    RegionObject::new(RegionRef::linux(r, categorize(r).key()))
}

/// Which process the document is of (one process's document only).
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(super) struct ProcessHead<'a> {
    pid: u32,
    comm: &'a str,
    command: String,
    source: SizeSource,
}

impl ProcessHead<'_> {
    pub(super) fn of(p: &Process) -> ProcessHead<'_> {
        ProcessHead { pid: p.pid, comm: &p.comm, command: p.command(), source: p.source }
    }
}

/// Every key of the document but the regions and which process: what
/// needs every region, printed after them when they stream.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(super) struct ShowSummary<'a> {
    partial: bool,
    notes: Vec<String>,
    gpu: Option<WithNotes<'a, GpuShow>>,
    totals: TotalsJson<'a>,
    totals_from: TotalsFrom,
    rounding: Option<&'a Rounding>,
    shmem: ShmemJson<'a>,
    categories: Vec<CategoryJson<'a>>,
    by: &'static str,
    rows: Vec<RowJson<'a>>,
    rows_omitted: usize,
}

/// The totals' size keys, and the summable footprint derived from them.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct TotalsJson<'a> {
    #[serde(flatten)]
    sizes: &'a Sizes,
    /// Pss_Anon + SwapPss: the footprint that adds up across processes.
    #[serde(skip_serializing_if = "Option::is_none")]
    footprint_pss: Option<u64>,
}

/// Shared memory's figures, and its USS.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct ShmemJson<'a> {
    #[serde(flatten)]
    sizes: &'a Sizes,
    uss: Option<u64>,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct CategoryJson<'a> {
    category: &'a str,
    label: &'static str,
    regions: usize,
    #[serde(flatten)]
    sizes: &'a Sizes,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct RowJson<'a> {
    key: &'a str,
    label: &'a str,
    regions: usize,
    #[serde(flatten)]
    sizes: &'a Sizes,
}

impl RowJson<'_> {
    fn of(r: &Row) -> RowJson<'_> {
        RowJson { key: &r.key, label: &r.label, regions: r.regions, sizes: &r.sizes }
    }
}

pub(super) fn summary(report: &ShowReport) -> ShowSummary<'_> {
    ShowSummary {
        partial: report.partial(),
        notes: words(&report.notes),
        gpu: report.gpu.as_ref().map(|g| WithNotes::new(g, &g.notes)),
        totals: TotalsJson { sizes: &report.totals, footprint_pss: report.totals.footprint_pss() },
        totals_from: report.totals_from,
        rounding: report.rounding.as_ref(),
        shmem: ShmemJson { sizes: &report.shmem, uss: report.shmem.uss() },
        categories: report
            .categories
            .iter()
            .map(|(c, g)| CategoryJson {
                category: &g.key,
                label: c.label(),
                regions: g.regions,
                sizes: &g.sizes,
            })
            .collect(),
        by: report.by.name(),
        rows: report.rows.iter().map(RowJson::of).collect(),
        rows_omitted: report.omitted,
    }
}

/// The document held whole: one process's (its head, summary and regions)
/// or several processes' (`show --tree`: the summary, then each process).
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(crate) struct ShowJson<'a> {
    #[serde(flatten)]
    head: Option<ProcessHead<'a>>,
    #[serde(flatten)]
    summary: ShowSummary<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    regions: Option<Vec<RegionJson<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    processes: Option<Vec<ProcessJson<'a>>>,
}

/// One process of several, with its own totals and regions.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct ProcessJson<'a> {
    #[serde(flatten)]
    head: ProcessHead<'a>,
    totals: Sizes,
    regions: Vec<RegionJson<'a>>,
}

fn regions(p: &Process) -> Vec<RegionJson<'_>> {
    p.regions.iter().map(region_json).collect()
}

fn json_doc(report: &ShowReport) -> ShowJson<'_> {
    let one = match report.processes.as_slice() {
        [one] => Some(one),
        _ => None,
    };
    ShowJson {
        head: one.map(ProcessHead::of),
        summary: summary(report),
        regions: one.map(regions),
        processes: one.is_none().then(|| {
            report
                .processes
                .iter()
                .map(|p| ProcessJson {
                    head: ProcessHead::of(p),
                    totals: process_total(p),
                    regions: regions(p),
                })
                .collect()
        }),
    }
}

/// The documented JSON document (see docs/json.md), its keys sorted: what
/// the streamed document must parse back to.
#[cfg(test)]
pub fn json_value(report: &ShowReport) -> std::io::Result<serde_json::Value> {
    let mut doc = json::sorted(&json_doc(report))?;
    if let serde_json::Value::Object(keys) = &mut doc {
        json::with_schema(keys);
    }
    Ok(doc)
}

/// Prints the document held whole: several processes, each with its
/// regions in memory (`show --tree`). One process streams instead, through
/// [`RegionStream`](super::RegionStream), printing each region straight from the model.
pub fn json(report: &ShowReport, out: &mut dyn Write) -> std::io::Result<()> {
    json::line(out, &json_doc(report))
}
