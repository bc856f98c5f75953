//! `memtally faults`: bytes faulted by category, read and written, and
//! the top stacks of each (innermost frame first); the folded stacks
//! flamegraph.pl, inferno and speedscope read; the JSON document.

use std::io::{self, Write};

use memtally_core::analyze::fault_report::{FaultCategory, FaultReport};

use crate::render::json;
use crate::render::units::human;
use crate::render::width::cut;

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
    if !r.kernel_faults_seen {
        notes.push("faults the kernel takes for the process (read() into new memory) are not seen: perf_event_paranoid allows user mode only".into());
    }
    notes
}

/// Folded stacks: `category;outermost;...;innermost BYTES` a line, the
/// category as the root frame (so a flame graph splits by it first) and
/// the bytes as the count. Only the stacks the report kept (`--top`).
pub fn folded(r: &FaultReport, out: &mut dyn Write) -> io::Result<()> {
    for c in &r.categories {
        for s in &c.stacks {
            let mut line = String::from(key(c));
            for f in s.frames.iter().rev() {
                line.push(';');
                // A frame's own `;` or newline would split it.
                line.extend(f.chars().map(|ch| if ch == ';' || ch == '\n' { ':' } else { ch }));
            }
            writeln!(out, "{line} {}", s.bytes.bytes)?;
        }
    }
    Ok(())
}

/// The JSON document (docs/json.md, "faults").
pub fn json(r: &FaultReport, out: &mut dyn Write) -> io::Result<()> {
    json::line(out, r)
}

/// The schema of the JSON document (docs/schema/faults.json).
pub(crate) fn schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
    <FaultReport as schemars::JsonSchema>::json_schema(g)
}

#[cfg(test)]
mod tests {
    use super::*;
    use memtally_core::analyze::fault_report::{FaultBytes, FaultStack};
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
            bytes,
            processes: Vec::new(),
            categories: vec![FaultCategory {
                category: Some(Category::Heap),
                bytes,
                stacks: vec![FaultStack { frames: vec!["touch".into(), "main;x".into()], bytes }],
                stacks_total: 1,
                mappings: Vec::new(),
            }],
        }
    }

    #[test]
    fn folded_lines_root_at_the_category_outermost_first() {
        let mut out = Vec::new();
        folded(&report(), &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "heap;main:x;touch 8192\n");
    }

    #[test]
    fn the_table_says_lost_samples() {
        let mut out = Vec::new();
        table(&report(), Some(40), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("3 samples were lost"), "{text}");
        assert!(text.contains("touch < main;x"), "{text}");
    }
}
