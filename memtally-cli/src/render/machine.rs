//! Prints the machine waterfall: MemTotal split into lines that add up
//! exactly, each with its source; the short form under `top`.

use std::io::Write;

use serde::Serialize;

use memtally_core::analyze::machine::MachineView;
use memtally_core::analyze::machine::{Line, LineGroup, Machine};

use crate::render::blocks::{write_text, Block};
use crate::render::units::{human, signed};
use crate::render::Printer;
use crate::render::{json, Screen};

/// The JSON document (docs/json.md, "machine"): the library's waterfall
/// and how many processes it rests on.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(crate) struct MachineJson<'a> {
    #[serde(flatten)]
    machine: &'a Machine,
    processes_read: usize,
    restricted: usize,
    vanished: usize,
}

/// What "used" is, in every view that prints it (`top`'s picture,
/// `machine`, the explorer): one definition, one wording.
pub const USED_MEANS: &str = "MemTotal - MemAvailable, as free(1) prints it";

/// The headline `free` users know: used, buff/cache, free, available.
pub fn headline(m: &Machine) -> Vec<Block> {
    let mut line =
        format!("machine (from meminfo): total {}, used {}", human(m.total), human(m.used));
    if let Some(b) = m.buff_cache {
        line.push_str(&format!(", buff/cache {}", human(b)));
    }
    line.push_str(&format!(", free {}", human(m.free)));
    if let Some(a) = m.available {
        line.push_str(&format!(", available {}", human(a)));
    }
    let mut blocks = vec![
        Block::Line(line),
        Block::Line(format!(
            "  (used = {USED_MEANS}; buff/cache = Buffers + Cached + SReclaimable)"
        )),
    ];
    blocks.extend(swap(m).into_iter().map(Block::Line));
    blocks
}

/// `, 2.1:1`, or nothing when the pool is empty.
fn ratio(r: Option<f64>) -> String {
    r.map(|r| format!(", {r:.1}:1")).unwrap_or_default()
}

/// Swap as `free` prints it, then the RAM compressed swap holds (the
/// waterfall's `zram` and `zswap` lines) beside what it holds.
pub fn swap(m: &Machine) -> Vec<String> {
    let Some(s) = &m.swap else { return Vec::new() };
    let pools = s.zram_ram() > 0 || s.zswap.is_some_and(|z| z > 0) || !s.zram_unreadable.is_empty();
    if s.total == 0 && !pools {
        return vec!["swap (from meminfo): none (SwapTotal 0)".into()];
    }
    let mut line = format!("swap (from meminfo): total {}, used {}", human(s.total), human(s.used));
    if let Some(c) = s.cached {
        line.push_str(&format!(", cached {} (in RAM too: swap_cache)", human(c)));
    }
    let mut out = vec![line];
    let mut ram = Vec::new();
    if !s.zram.is_empty() {
        let names: Vec<&str> = s.zram.iter().map(|d| d.name.as_str()).collect();
        ram.push(format!(
            "zram {} holding {} ({}{})",
            human(s.zram_ram()),
            human(s.zram_stored()),
            names.join(", "),
            ratio(s.zram_ratio())
        ));
    }
    if let Some(pool) = s.zswap {
        let ratio = s.zswap_ratio().map(|r| format!(" ({r:.1}:1)")).unwrap_or_default();
        ram.push(format!(
            "zswap {} holding {}{ratio}",
            human(pool),
            human(s.zswapped.unwrap_or(0))
        ));
    }
    if !s.zram_unreadable.is_empty() {
        ram.push(format!("{} unreadable (in unexplained)", s.zram_unreadable.join(", ")));
    }
    if pools && !ram.is_empty() {
        out.push(format!("  in RAM, compressed (lines zram, zswap): {}", ram.join("; ")));
    }
    out
}

/// What of the anonymous memory is in transparent huge pages (a part of
/// `process_anon` + `anon_unread`, not a line of its own); `None` when none.
fn thp_anon(m: &Machine) -> Option<String> {
    let anon = m.thp.and_then(|t| t.anon).filter(|&a| a > 0)?;
    Some(format!("THP {} of the anonymous memory (AnonHugePages)", human(anon)))
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
pub fn waterfall(m: &Machine) -> Vec<Block> {
    let width = m.lines.iter().map(|l| l.name.name().len()).max().unwrap_or(0);
    let mut lines = Vec::new();
    for l in &m.lines {
        let mark = if l.reclaimable { "r" } else { " " };
        lines.push(format!("  {:<width$} {:>7} {mark}  {}", l.name, signed(l.bytes), l.source));
        if l.name == Line::AnonUnread {
            if let Some(thp) = thp_anon(m) {
                lines.push(format!(
                    "  {:<width$}            of process_anon + anon_unread: {thp}",
                    ""
                ));
            }
        }
        if l.name == Line::ShmemUnmapped && !m.shmem_mounts.is_empty() {
            lines.push(format!(
                "  {:<width$}            by tmpfs mount (statvfs used, mapped pages included): {}",
                "",
                mounts(m)
            ));
        }
    }
    lines.push(format!(
        "  {:<width$} {:>7}    MemTotal (r: the kernel reclaims it under pressure)",
        "= total",
        human(m.total)
    ));
    lines.into_iter().map(Block::Line).collect()
}

/// The machine in two lines, for `top` on a terminal: what `free`
/// prints for memory, then for swap, and where every line is.
pub fn two_lines(m: &Machine) -> Vec<String> {
    let mut mem = format!("machine: total {}, used {}", human(m.total), human(m.used));
    if let Some(b) = m.buff_cache {
        mem.push_str(&format!(", buff/cache {}", human(b)));
    }
    mem.push_str(&format!(", free {}", human(m.free)));
    if let Some(a) = m.available {
        mem.push_str(&format!(", available {}", human(a)));
    }
    let swap = match &m.swap {
        Some(s) if s.total > 0 => format!("swap: total {}, used {}", human(s.total), human(s.used)),
        Some(_) => "swap: none".to_string(),
        None => "swap: not read".to_string(),
    };
    vec![mem, format!("{swap}  (every line and its source: memtally machine)")]
}

/// The short form under `top`: one line per group, naming its parts.
pub fn short(m: &Machine) -> Vec<Block> {
    let mut blocks = headline(m);
    for (group, bytes, parts) in m.groups() {
        let parts: Vec<String> = parts
            .iter()
            // A group of one line named as the group says no more.
            .filter(|p| p.name() != group.name())
            .map(|p| format!("{p} {}", signed(m.line(*p).unwrap_or(0))))
            .collect();
        let mut parts = parts.join(", ");
        if group == LineGroup::Processes {
            if let Some(thp) = thp_anon(m) {
                parts.push_str(&format!("; {thp}"));
            }
        }
        let line = format!("  {group:<11} {:>7}  {parts}", signed(bytes));
        blocks.push(Block::Line(line.trim_end().to_string()));
    }
    blocks.extend(swap_used(m));
    blocks.push(Block::Line("  (every line and its source: memtally machine)".into()));
    blocks
}

/// `swap used U = processes P + swap_cache C + unmapped_or_unread R`:
/// swap used reconciled with the processes' SWAP PSS; nothing when no
/// swap is in use.
pub fn swap_used(m: &Machine) -> Option<Block> {
    let s = m.swap_used.as_ref()?;
    let parts: Vec<String> =
        s.parts.iter().map(|p| format!("{} {}", p.name, human(p.bytes))).collect();
    Some(Block::Line(format!(
        "  swap used   {:>7}  = {} (processes: Σ SWAP PSS; unmapped_or_unread: swapped shared memory no process maps, processes not read)",
        human(s.used),
        parts.join(" + ")
    )))
}

impl Printer for MachineView {
    fn table(&self, out: &mut dyn Write, screen: Screen) -> std::io::Result<()> {
        let mut blocks = headline(&self.machine);
        blocks.extend(waterfall(&self.machine));
        blocks.extend(swap_used(&self.machine));
        if self.restricted > 0 {
            // Whole, not wrapped as a note: the output's fitting wraps it.
            blocks.push(Block::Line(format!(
                "note: {} could not be read in detail (permission denied): their anonymous memory is in anon_unread",
                crate::render::units::plural(self.restricted, "process", "processes")
            )));
        }
        write_text(blocks, screen.width, out)
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
