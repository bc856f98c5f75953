//! `top --format json`: the document's types (derived `Serialize` and
//! `JsonSchema`: docs/json.md, docs/schema/top.json) and how a report
//! becomes one.

use std::borrow::Cow;

use serde::Serialize;

use memtally_core::analyze::machine::Machine;
use memtally_core::analyze::top::Top;
use memtally_core::analyze::top::{TopBy, TopReport, TopRow};
use memtally_core::model::{CgroupMemory, Figure, Named, Note, ProcMemory, SizeSource, Sizes};

use crate::render::json;
use crate::render::notes::words;

/// Byte keys every process and row object carries (null where unknown).
pub(crate) const JSON_FIGURES: &[Figure] = &[
    Figure::Rss,
    Figure::Pss,
    Figure::Uss,
    Figure::Swap,
    Figure::SwapPss,
    Figure::PrivateDirty,
    Figure::SharedDirty,
    Figure::PssDirty,
    Figure::PrivateClean,
    Figure::SharedClean,
    Figure::PssAnon,
    Figure::PssFile,
    Figure::PssShmem,
    Figure::Anonymous,
    Figure::Locked,
    Figure::Gpu,
    Figure::AnonHugePages,
    Figure::ShmemPmdMapped,
    Figure::FilePmdMapped,
    Figure::SharedHugetlb,
    Figure::PrivateHugetlb,
    Figure::Ksm,
    Figure::Footprint,
    Figure::RssPeak,
    Figure::FootprintPss,
    Figure::ShmemSwap,
    Figure::FootprintPssShmem,
];

fn figures_json(sizes: &Sizes) -> json::Figures<'_> {
    json::Figures { sizes, figures: JSON_FIGURES }
}

/// The documented JSON document (docs/json.md, "top").
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(crate) struct TopJson<'a> {
    by: &'static str,
    processes: Vec<ProcessJson<'a>>,
    rows: Vec<RowJson<'a>>,
    rows_omitted: usize,
    totals: json::Figures<'a>,
    machine: Option<&'a Machine>,
    restricted: usize,
    vanished: usize,
    missing: &'a [u32],
    kernel_threads: usize,
    failed: Vec<FailedJson<'a>>,
    partial: bool,
    notes: Vec<String>,
    /// With `--exact`: the selection's exclusive figures as a whole.
    #[serde(skip_serializing_if = "Option::is_none")]
    exclusive: Option<ExclusiveJson>,
}

/// The exclusive figures of a row or of the selection (`--exact`).
#[derive(Serialize, Clone, Copy)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct ExclusiveJson {
    exclusive: u64,
    exclusive_anon: u64,
    exclusive_swap: u64,
    exclusive_shmem: u64,
}

impl ExclusiveJson {
    fn of(e: &memtally_core::model::pages::Exclusive) -> ExclusiveJson {
        ExclusiveJson {
            exclusive: e.bytes,
            exclusive_anon: e.anon,
            exclusive_swap: e.swap,
            exclusive_shmem: e.shmem,
        }
    }
}

/// A row's exclusive keys: numbers, or `null` each where a member's pages
/// could not be read.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct RowExclusiveJson {
    exclusive: Option<u64>,
    exclusive_anon: Option<u64>,
    exclusive_swap: Option<u64>,
    exclusive_shmem: Option<u64>,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct ProcessJson<'a> {
    pid: u32,
    ppid: u32,
    uid: Option<u32>,
    user: String,
    comm: &'a str,
    command: Cow<'a, str>,
    program: &'a str,
    cgroup: Option<&'a str>,
    source: SizeSource,
    #[serde(flatten)]
    figures: json::Figures<'a>,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct RowJson<'a> {
    key: &'a str,
    pid: Option<u32>,
    depth: usize,
    processes: usize,
    processes_without_pss: usize,
    /// The row's figures are its whole subtree's (`--by tree`).
    subtree: bool,
    #[serde(flatten)]
    figures: json::Figures<'a>,
    /// With `--by cgroup` only: the row's cgroup (`null` where its files
    /// were not read) and its working set.
    #[serde(skip_serializing_if = "Option::is_none")]
    cgroup: Option<Option<&'a CgroupMemory>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    working_set: Option<Option<u64>>,
    /// With `--exact` only.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    exclusive: Option<RowExclusiveJson>,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct FailedJson<'a> {
    pid: u32,
    error: &'a str,
}

fn process_json<'a>(p: &'a ProcMemory, ctx: &Top) -> ProcessJson<'a> {
    ProcessJson {
        pid: p.info.pid,
        ppid: p.info.ppid,
        uid: p.info.uid,
        user: ctx.users.name(p.info.uid),
        comm: &p.info.comm,
        command: match p.info.cmdline.is_empty() {
            true => Cow::Owned(p.info.command()),
            false => Cow::Borrowed(&p.info.cmdline),
        },
        program: &p.info.program,
        cgroup: p.info.cgroup.as_deref(),
        source: p.source,
        figures: figures_json(&p.sizes),
    }
}

fn row_json<'a>(i: usize, r: &'a TopRow, report: &TopReport, ctx: &'a Top) -> RowJson<'a> {
    let exclusive = ctx.exact.as_ref().map(|e| {
        let x = e.groups.get(i).copied().flatten();
        RowExclusiveJson {
            exclusive: x.map(|x| x.bytes),
            exclusive_anon: x.map(|x| x.anon),
            exclusive_swap: x.map(|x| x.swap),
            exclusive_shmem: x.map(|x| x.shmem),
        }
    });
    let cgroup = (report.by == TopBy::Cgroup).then(|| ctx.cgroups.get(&r.key));
    RowJson {
        key: &r.key,
        pid: ctx.process_of(r).map(|p| p.info.pid),
        depth: r.depth,
        processes: r.processes,
        processes_without_pss: r.without_pss,
        subtree: report.by == TopBy::Tree,
        figures: figures_json(&r.sizes),
        cgroup,
        working_set: cgroup.map(|c| c.and_then(|c| c.working_set())),
        exclusive,
    }
}

/// The document without its two long arrays (`processes`, `rows`: one
/// entry per process), which [`print`] writes one entry at a time.
fn json_head<'a>(report: &'a TopReport, ctx: &'a Top, notes: &[Note]) -> TopJson<'a> {
    TopJson {
        by: report.by.name(),
        processes: Vec::new(),
        rows: Vec::new(),
        rows_omitted: report.omitted,
        totals: figures_json(&report.totals),
        machine: report.machine.as_ref(),
        restricted: ctx.scan.restricted.len(),
        vanished: ctx.scan.vanished,
        missing: &ctx.missing,
        kernel_threads: ctx.kernel_threads,
        failed: ctx
            .scan
            .failed
            .iter()
            .map(|(pid, why)| FailedJson { pid: *pid, error: why })
            .collect(),
        partial: ctx.partial(),
        notes: words(notes),
        exclusive: ctx.exact.as_ref().map(|e| ExclusiveJson::of(&e.all)),
    }
}

/// Prints the report as one `top --format json` document. The short
/// keys go through a JSON value (sorted, as every document's); the
/// processes and rows are written one at a time, each straight from the
/// scan (its keys sorted by way of its own value), so printing holds no
/// copy of them (at 3,000 processes the value of the whole document was
/// most of memtally's memory).
pub(crate) fn print(
    report: &TopReport,
    ctx: &Top,
    notes: &[Note],
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let processes = ctx.scan.processes.iter().map(|p| process_json(p, ctx));
    let rows = report.rows.iter().enumerate().map(|(i, r)| row_json(i, r, report, ctx));
    json::line_with_arrays(
        out,
        &json_head(report, ctx, notes),
        &mut [("processes", &mut json::each(processes)), ("rows", &mut json::each(rows))],
    )
}
