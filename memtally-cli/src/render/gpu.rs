//! Prints the `gpu` view: a table per process and per device for people,
//! JSON and CSV with exact bytes (docs/gpu-json.md).

use std::io::Write;

use serde::Serialize;

use memtally_core::analyze::gpu::{DmaBufShare, GpuEntry, GpuProcess, GpuReport};
use memtally_core::model::gpu::DrmMemory;

use crate::render::blocks::{write_text, Block};
use crate::render::json;
use crate::render::notes::{word, words, WithNotes};
use crate::render::{Printer, Screen};

/// The GPU view.
pub struct GpuView {
    pub report: GpuReport,
}

impl Printer for GpuView {
    fn table(&self, out: &mut dyn Write, screen: Screen) -> std::io::Result<()> {
        let width = screen.width;
        write_text(blocks(&self.report), width, out)
    }

    fn json(&self, out: &mut dyn Write) -> std::io::Result<()> {
        json::line(out, &json_doc(&self.report))
    }

    fn csv(&self, out: &mut dyn Write) -> std::io::Result<()> {
        csv(&self.report, out)
    }
}
use crate::render::table::{csv_text, Align, Table};
use crate::render::units::{human, human_opt};

/// Reads one figure of a client's DRM memory.
type ReadDrm = fn(&DrmMemory) -> Option<u64>;

/// The five DRM figures, in the order the kernel document lists them:
/// each column's header and how to read it.
const FIGURES: &[(&str, ReadDrm)] = &[
    ("TOTAL", |m| m.total),
    ("SHARED", |m| m.shared),
    ("RESIDENT", |m| m.resident),
    ("PURGEABLE", |m| m.purgeable),
    ("ACTIVE", |m| m.active),
];

fn entry_cells(e: &GpuEntry) -> Vec<String> {
    // nvidia-smi's entries say what the process uses the GPU for.
    let region = match e.nvidia_use {
        Some(u) => format!("{} ({})", e.region, u.word()),
        None => e.region.clone(),
    };
    let mut c = vec![e.driver.clone(), e.device.clone(), region];
    c.extend(FIGURES.iter().map(|(_, read)| human_opt(read(&e.memory))));
    c.push(e.clients.to_string());
    c
}

/// The table view: per process, then per process and device region,
/// then the machine.
pub(crate) fn blocks(report: &GpuReport) -> Vec<Block> {
    let notes = report.notes.iter().map(|n| Block::Note(word(n)));
    if report.processes.is_empty() {
        let none = "no GPU memory found: no process read holds a DRM device or dma-buf fd";
        return [Block::Line(none.into())].into_iter().chain(notes).collect();
    }
    let mut t = Table::new(&[
        ("PID", Align::Right),
        ("GPU", Align::Right),
        ("DMABUFS", Align::Right),
        ("DMABUF SIZE", Align::Right),
        ("DMABUF PSS", Align::Right),
        ("MAPPED", Align::Right),
        ("RECLAIMABLE", Align::Right),
        ("COMMAND", Align::Left),
    ]);
    // A narrow COMMAND column shows what top's does: the program and
    // what tells its processes apart (`chromium --type=gpu-process …`).
    let commands: Vec<String> = report.processes.iter().map(|p| p.command.clone()).collect();
    let distinguishing = crate::render::width::distinguishing(&commands);
    for (i, p) in report.processes.iter().enumerate() {
        let row = vec![
            p.pid.to_string(),
            human(p.proportional),
            p.dmabuf.count.to_string(),
            human(p.dmabuf.size),
            human(p.dmabuf.pss),
            human_opt(p.mapped),
            human_opt(p.reclaimable),
            p.command.clone(),
        ];
        let label = crate::render::width::command_label(&commands[i], distinguishing[i].as_deref());
        t.row_with_compact(row, 7, label);
    }
    t.footer(vec![
        "total".into(),
        human(report.proportional),
        report.dmabuf.count.to_string(),
        human(report.dmabuf.size),
        human(report.dmabuf.pss),
        String::new(),
        String::new(),
        format!("{} processes", report.processes.len()),
    ]);
    let mut blocks = vec![Block::Table(t)];

    let mut headers = vec![
        ("PID", Align::Right),
        ("DRIVER", Align::Left),
        ("DEVICE", Align::Left),
        ("REGION", Align::Left),
    ];
    headers.extend(FIGURES.iter().map(|(h, _)| (*h, Align::Right)));
    headers.push(("CLIENTS", Align::Right));
    let mut d = Table::new(&headers);
    for p in &report.processes {
        for e in &p.gpu {
            let mut c = vec![p.pid.to_string()];
            c.extend(entry_cells(e));
            d.row(c);
        }
    }
    if !report.totals.is_empty() {
        blocks.push(Block::Blank);
        blocks.push(Block::Heading(
            "by device and region (a process holding a shared client shows it in full)".into(),
        ));
        // The driver and the device (a PCI address, a device node) stay
        // whole: cut, they no longer tell the devices apart. The region
        // narrows; figures on the right are left out whole.
        d.keep_whole(1);
        d.keep_whole(2);
        blocks.push(Block::Table(d));
        blocks.push(Block::Blank);
        blocks.push(Block::Heading("machine (each client counted once)".into()));
        let mut m = Table::new(&headers[1..]);
        for e in &report.totals {
            m.row(entry_cells(e));
        }
        m.keep_whole(0);
        m.keep_whole(1);
        blocks.push(Block::Table(m));
    }
    blocks.push(Block::Line("GPU: resident (else total) bytes of each DRM client divided among its holders, + dma-buf PSS of buffers no listed DRM driver exported, + nvidia-smi".into()));
    blocks.extend(notes);
    blocks
}

/// The documented JSON document (docs/gpu-json.md): the library's report,
/// each process and the whole with its notes worded.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(crate) struct GpuJson<'a> {
    processes: Vec<WithNotes<'a, GpuProcess>>,
    totals: &'a [GpuEntry],
    dmabuf: &'a DmaBufShare,
    proportional: u64,
    partial: bool,
    notes: Vec<String>,
}

fn json_doc(report: &GpuReport) -> GpuJson<'_> {
    GpuJson {
        processes: report.processes.iter().map(|p| WithNotes::new(p, &p.notes)).collect(),
        totals: &report.totals,
        dmabuf: &report.dmabuf,
        proportional: report.proportional,
        partial: report.partial(),
        notes: words(&report.notes),
    }
}

/// One line per (process, device, region), then one `dmabuf` line per
/// process; exact bytes, empty cells where unknown.
fn csv(report: &GpuReport, out: &mut dyn Write) -> std::io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record([
        "pid",
        "kind",
        "driver",
        "device",
        "pdev",
        "region",
        "total",
        "shared",
        "resident",
        "purgeable",
        "active",
        "clients",
        "proportional",
        "command",
    ])?;
    let opt = |v: Option<u64>| v.map_or(String::new(), |v| v.to_string());
    for p in &report.processes {
        for e in &p.gpu {
            let kind = match e.source {
                memtally_core::analyze::gpu::GpuSource::Fdinfo => "drm",
                memtally_core::analyze::gpu::GpuSource::NvidiaSmi => "nvidia-smi",
            };
            w.write_record([
                p.pid.to_string(),
                kind.into(),
                csv_text(e.driver.clone()),
                csv_text(e.device.clone()),
                csv_text(e.pdev.clone().unwrap_or_default()),
                csv_text(e.region.clone()),
                opt(e.memory.total),
                opt(e.memory.shared),
                opt(e.memory.resident),
                opt(e.memory.purgeable),
                opt(e.memory.active),
                e.clients.to_string(),
                opt(e.proportional),
                csv_text(p.command.clone()),
            ])?;
        }
        if p.dmabuf.count > 0 {
            w.write_record([
                p.pid.to_string(),
                "dmabuf".into(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                p.dmabuf.size.to_string(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                p.dmabuf.count.to_string(),
                p.dmabuf.pss.to_string(),
                csv_text(p.command.clone()),
            ])?;
        }
    }
    w.flush()
}
