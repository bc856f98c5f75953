//! `memtally faults`: bytes faulted by category, read and written, and
//! the top stacks of each (innermost frame first); the folded stacks
//! flamegraph.pl, inferno and speedscope read; the JSON document.

use std::io::{self, Write};

use memtally_core::analyze::fault_report::{FaultCategory, FaultReport};

use crate::render::units::human;
use crate::render::width::{cut, cut_path};
use crate::render::{folded, json};

/// Columns of a mapping's line before its name: four figures and a gap.
const FIGURES: usize = 4 * 11 + 1;

/// The category's label, or what an address in no mapping is.
fn label(c: &FaultCategory) -> &'static str {
    c.category.map_or("no mapping", |c| c.label())
}

/// The category's key in folded stacks (its root frame).
fn key(c: &FaultCategory) -> &'static str {
    c.category.map_or("unmapped", |c| c.key())
}

/// The table: one line per category, then its top stacks, each cut to
/// `width` columns where there is a terminal.
pub fn table(r: &FaultReport, width: Option<usize>, out: &mut dyn Write) -> io::Result<()> {
    let pids: Vec<String> =
        r.processes.iter().map(|p| format!("{} ({})", p.pid, p.command)).collect();
    writeln!(
        out,
        "page faults of {} over {:.1}s: {} samples{}",
        if pids.is_empty() { "the selection".to_string() } else { pids.join(", ") },
        r.seconds,
        r.samples,
        match r.sample_period {
            1 => String::new(),
            n => format!(", one in {n} faults (bytes scaled by {n})"),
        }
    )?;
    writeln!(
        out,
        "{:<24} {:>10} {:>10} {:>10} {:>10}",
        "CATEGORY", "FAULTED", "WRITE", "READ", "UNKNOWN"
    )?;
    for c in &r.categories {
        let b = &c.bytes;
        let (all, w, rd, u) = (human(b.bytes), human(b.write), human(b.read), human(b.unknown));
        writeln!(out, "{:<24} {all:>10} {w:>10} {rd:>10} {u:>10}", label(c))?;
    }
    let b = &r.bytes;
    let (all, w, rd, u) = (human(b.bytes), human(b.write), human(b.read), human(b.unknown));
    writeln!(out, "{:<24} {all:>10} {w:>10} {rd:>10} {u:>10}", "total")?;
    for c in &r.categories {
        writeln!(out)?;
        let shown = c.stacks.len();
        writeln!(
            out,
            "{}: top {shown} of {} stacks, innermost frame first",
            label(c),
            c.stacks_total
        )?;
        for s in &c.stacks {
            let line = format!("{:>10}  {}", human(s.bytes.bytes), s.frames.join(" < "));
            writeln!(out, "{}", width.map_or(line.as_str().into(), |w| cut(&line, w)))?;
        }
        if c.mappings.is_empty() {
            continue;
        }
        writeln!(out, "{}: the mappings they fell in", label(c))?;
        writeln!(
            out,
            "{:>10} {:>10} {:>10} {:>10}  MAPPING",
            "FAULTED", "WRITE", "READ", "UNKNOWN"
        )?;
        for m in &c.mappings {
            let b = &m.bytes;
            let (all, w, rd, u) = (human(b.bytes), human(b.write), human(b.read), human(b.unknown));
            // The path cut in its middle, so its file name stays.
            let name = match width {
                Some(w) => cut_path(&m.mapping, w.saturating_sub(FIGURES)),
                None => m.mapping.as_str().into(),
            };
            let line = format!("{all:>10} {w:>10} {rd:>10} {u:>10}  {name}");
            writeln!(out, "{}", width.map_or(line.as_str().into(), |w| cut(&line, w)))?;
        }
    }
    for note in notes(r) {
        writeln!(out, "note: {note}")?;
    }
    Ok(())
}

/// What the figures leave out, said once under the table.
pub fn notes(r: &FaultReport) -> Vec<String> {
    let mut notes = Vec::new();
    if r.lost > 0 {
        notes.push(format!(
            "{} samples were lost (the kernel's buffer was full) and are in no figure; try --sample N",
            r.lost
        ));
    }
    if let Some(cut) = r.buffer_cut {
        notes.push(format!(
            "the sample buffer is {} pages a CPU, not the {} asked: the locked-memory limit (kernel.perf_event_mlock_kb, RLIMIT_MEMLOCK) refused more; more samples may be lost (root or CAP_IPC_LOCK lifts it)",
            cut.pages, cut.asked_pages
        ));
    }
    if !r.kernel_faults_seen {
        notes.push("faults the kernel takes for the process (read() into new memory) are not seen: perf_event_paranoid allows user mode only".into());
    }
    notes
}

/// Folded stacks: `category;access;outermost;...;innermost BYTES` a
/// line, the category and `write`, `read` or `unknown` as the root frames
/// (so a flame graph splits by them first) and the bytes as the count.
/// Only the stacks the report kept (`--top`).
pub fn folded(r: &FaultReport, out: &mut dyn Write) -> io::Result<()> {
    for line in folded_lines(r) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

fn folded_lines(r: &FaultReport) -> Vec<String> {
    let mut lines = Vec::new();
    for c in &r.categories {
        for s in &c.stacks {
            let b = &s.bytes;
            for (access, bytes) in [(WRITE, b.write), (READ, b.read), (UNKNOWN, b.unknown)] {
                if bytes == 0 {
                    continue;
                }
                let frames = [key(c), access].into_iter();
                lines.push(folded::line(
                    frames.chain(s.frames.iter().rev().map(String::as_str)),
                    bytes,
                ));
            }
        }
    }
    lines
}

/// The access frames of folded stacks and the flame graph.
const WRITE: &str = "write";
const READ: &str = "read";
const UNKNOWN: &str = "unknown";

/// The flame graph (inferno): the category frames at the root, each in
/// its colour, then `write` (red: dirtied), `read` (blue: clean) or
/// `unknown` (grey), then the stacks, outermost first.
pub fn svg(r: &FaultReport, out: &mut dyn Write) -> io::Result<()> {
    use inferno::flamegraph::color::{BasicPalette, Color, Palette, PaletteMap};
    use inferno::flamegraph::{from_lines, Options};

    let rgb = |(r, g, b): (u8, u8, u8)| Color { r, g, b };
    let mut colours = PaletteMap::default();
    for c in &r.categories {
        colours.insert(key(c), rgb(category_colour(c)));
    }
    colours.insert(WRITE, rgb((220, 60, 50)));
    colours.insert(READ, rgb((70, 120, 210)));
    colours.insert(UNKNOWN, rgb((160, 160, 160)));
    let mut opts = Options::default();
    opts.palette_map = Some(&mut colours);
    opts.colors = Palette::Basic(BasicPalette::Mem);
    opts.deterministic = true;
    opts.hash = true;
    opts.title = "Page faults by category, read or written".into();
    opts.count_name = "bytes".into();
    opts.name_type = "Function:".into();
    let lines = folded_lines(r);
    if lines.is_empty() {
        return writeln!(out, "<svg xmlns=\"http://www.w3.org/2000/svg\"><text y=\"20\">no page faults recorded</text></svg>");
    }
    from_lines(&mut opts, lines.iter().map(String::as_str), out)
}

/// A colour for each category, told apart at a glance.
fn category_colour(c: &FaultCategory) -> (u8, u8, u8) {
    use memtally_core::analyze::Category as C;
    match c.category {
        None => (120, 120, 120),
        Some(C::Heap) => (236, 150, 60),
        Some(C::Stack) => (240, 200, 80),
        Some(C::FileCode) => (110, 180, 110),
        Some(C::FileRodata) => (150, 200, 150),
        Some(C::Relro) => (90, 160, 160),
        Some(C::FileData) => (60, 150, 120),
        Some(C::AnonNamed) => (230, 120, 100),
        Some(C::AnonOther) => (200, 140, 120),
        Some(C::WritableExec) => (200, 80, 160),
        Some(C::Guard) => (180, 180, 180),
        Some(C::SharedMemory) => (150, 110, 210),
        Some(C::HugePages) => (190, 130, 60),
        Some(C::Device) => (90, 110, 220),
        Some(C::Kernel) => (130, 130, 170),
    }
}

/// The JSON document (docs/json.md, "faults").
pub fn json(r: &FaultReport, out: &mut dyn Write) -> io::Result<()> {
    json::line(out, r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use memtally_core::analyze::fault_report::{FaultBytes, FaultMapping, FaultStack};
    use memtally_core::analyze::Category;

    fn report() -> FaultReport {
        let bytes = FaultBytes { bytes: 8192, read: 0, write: 8192, unknown: 0 };
        FaultReport {
            seconds: 1.0,
            sample_period: 1,
            page_size: 4096,
            samples: 2,
            lost: 3,
            kernel_faults_seen: true,
            buffer_cut: None,
            bytes,
            processes: Vec::new(),
            categories: vec![FaultCategory {
                category: Some(Category::Heap),
                bytes,
                stacks: vec![FaultStack { frames: vec!["touch".into(), "main;x".into()], bytes }],
                stacks_total: 1,
                mappings: vec![FaultMapping {
                    mapping: format!("/home/ann/{}data.bin", "long-directory-name/".repeat(9)),
                    bytes,
                    stacks: Vec::new(),
                    stacks_total: 0,
                }],
            }],
        }
    }

    #[test]
    fn folded_lines_root_at_the_category_outermost_first() {
        let mut out = Vec::new();
        folded(&report(), &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "heap;write;main:x;touch 8192\n");
    }

    #[test]
    fn the_flame_graph_is_svg_with_the_category_frame() {
        let mut out = Vec::new();
        svg(&report(), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("<?xml") && text.contains("<svg"), "{}", &text[..100]);
        assert!(text.contains(">heap<") || text.contains("heap ("), "the root frame");
        assert!(text.contains("rgb(236,150,60)"), "the heap colour");
    }

    #[test]
    fn the_table_says_lost_samples() {
        let mut out = Vec::new();
        table(&report(), Some(40), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("3 samples were lost"), "{text}");
        assert!(text.contains("touch < main;x"), "{text}");
    }

    #[test]
    fn the_table_says_a_buffer_cut_by_the_lock_limit() {
        use memtally_core::analyze::fault_report::BufferCut;
        let mut r = report();
        assert!(!notes(&r).iter().any(|n| n.contains("sample buffer")));
        r.buffer_cut = Some(BufferCut { asked_pages: 4096, pages: 128 });
        let notes = notes(&r);
        assert!(
            notes.iter().any(|n| n.contains("128 pages a CPU, not the 4096 asked")),
            "{notes:?}"
        );
    }

    /// Each category's mappings, with their bytes written and read, cut
    /// to the terminal's width as the stacks are; whole without one.
    #[test]
    fn the_table_lists_each_categorys_mappings_cut_to_the_width() {
        for width in [80, 200] {
            let mut out = Vec::new();
            table(&report(), Some(width), &mut out).unwrap();
            let text = String::from_utf8(out).unwrap();
            let row = text.lines().find(|l| l.contains("/home/ann/")).expect(&text);
            assert!(row.chars().count() <= width, "{width}: {row}");
            assert!(row.ends_with("/data.bin"), "the file name kept: {row}");
            let figures: Vec<&str> = row.split_whitespace().take(4).collect();
            assert_eq!(figures, ["8.0K", "8.0K", "0", "0"], "faulted, write, read, unknown: {row}");
            assert!(text.contains("heap / anon rw: the mappings they fell in"), "{text}");
            assert!(text.contains("MAPPING"), "{text}");
        }
        let mut out = Vec::new();
        table(&report(), None, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("long-directory-name/data.bin"), "whole without a terminal: {text}");
    }
}
