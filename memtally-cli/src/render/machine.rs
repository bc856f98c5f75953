//! Prints the machine waterfall: MemTotal split into lines that add up
//! exactly, each with its source; the short form under `top`.

use std::io::Write;

use serde::Serialize;

use memtally_core::analyze::machine::Machine;
use memtally_core::usecase::machine::MachineView;

use crate::render::json;
use crate::render::units::human;
use crate::render::Printer;

/// The JSON document (docs/json.md, "machine"): the library's waterfall
/// and how many processes it rests on.
#[derive(Serialize)]
struct MachineJson<'a> {
    #[serde(flatten)]
    machine: &'a Machine,
    processes_read: usize,
    restricted: usize,
    vanished: usize,
}

fn signed(v: i64) -> String {
    if v < 0 {
        format!("-{}", human(v.unsigned_abs()))
    } else {
        human(v as u64)
    }
}

/// The headline `free` users know: used, buff/cache, free, available.
pub fn headline(m: &Machine, out: &mut dyn Write) -> std::io::Result<()> {
    write!(out, "machine (from meminfo): total {}, used {}", human(m.total), human(m.used))?;
    if let Some(b) = m.buff_cache {
        write!(out, ", buff/cache {}", human(b))?;
    }
    write!(out, ", free {}", human(m.free))?;
    if let Some(a) = m.available {
        write!(out, ", available {}", human(a))?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "  (used = MemTotal - MemAvailable, as free(1) prints it; buff/cache = Buffers + Cached + SReclaimable)"
    )
}

/// `/dev/shm 8.0M, /run 1.0M` (the first few).
fn mounts(m: &Machine) -> String {
    let mut parts: Vec<String> =
        m.shmem_mounts.iter().take(5).map(|(p, b)| format!("{p} {}", human(*b))).collect();
    if m.shmem_mounts.len() > 5 {
        parts.push(format!("{} more", m.shmem_mounts.len() - 5));
    }
    parts.join(", ")
}

/// Every line of the waterfall, with its source.
pub fn waterfall(m: &Machine, out: &mut dyn Write) -> std::io::Result<()> {
    let width = m.lines.iter().map(|l| l.name.len()).max().unwrap_or(0);
    for l in &m.lines {
        let mark = if l.reclaimable { "r" } else { " " };
        writeln!(out, "  {:<width$} {:>7} {mark}  {}", l.name, signed(l.bytes), l.source)?;
        if l.name == "shmem_unmapped" && !m.shmem_mounts.is_empty() {
            writeln!(
                out,
                "  {:<width$}            by tmpfs mount (statvfs used, mapped pages included): {}",
                "",
                mounts(m)
            )?;
        }
    }
    writeln!(
        out,
        "  {:<width$} {:>7}    MemTotal (r: the kernel reclaims it under pressure)",
        "= total",
        human(m.total)
    )
}

/// The short form under `top`: one line per group, naming its parts.
pub fn short(m: &Machine, out: &mut dyn Write) -> std::io::Result<()> {
    headline(m, out)?;
    for (group, bytes, parts) in m.groups() {
        let parts: Vec<String> = parts
            .iter()
            .filter(|p| **p != group)
            .map(|p| format!("{p} {}", signed(m.line(p).unwrap_or(0))))
            .collect();
        let line = format!("  {group:<11} {:>7}  {}", signed(bytes), parts.join(", "));
        writeln!(out, "{}", line.trim_end())?;
    }
    writeln!(out, "  (every line and its source: memtally machine)")
}

impl Printer for MachineView {
    fn table(&self, out: &mut dyn Write) -> std::io::Result<()> {
        headline(&self.machine, out)?;
        waterfall(&self.machine, out)?;
        if self.restricted > 0 {
            writeln!(
                out,
                "note: {} could not be read in detail (permission denied): their anonymous memory is in anon_unread",
                crate::render::units::plural(self.restricted, "process", "processes")
            )?;
        }
        Ok(())
    }

    fn json(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let doc = MachineJson {
            machine: &self.machine,
            processes_read: self.processes,
            restricted: self.restricted,
            vanished: self.vanished,
        };
        json::line(out, &doc)
    }

    fn csv(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let mut w = csv::Writer::from_writer(out);
        w.write_record(["line", "group", "bytes", "reclaimable", "source"])?;
        for l in &self.machine.lines {
            w.write_record([
                l.name.to_string(),
                l.group.to_string(),
                l.bytes.to_string(),
                l.reclaimable.to_string(),
                l.source.clone(),
            ])?;
        }
        w.flush()
    }
}
