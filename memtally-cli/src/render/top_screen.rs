//! `top` fitted to a terminal's screen: as many rows as its height
//! leaves, the machine in two lines, a note a line, and where the rest is.

use std::io::Write;

use memtally_core::analyze::top::Top;
use memtally_core::analyze::top::TopReport;

use crate::render::blocks::{write_text, Block};
use crate::render::notes::word;
use crate::render::top::{rows_table, shmem_swap_note, Listed};
use crate::render::Printer;
use crate::render::{width, Screen};

/// `top` on a terminal `lines` high: the view fitted to one screen.
pub struct TopScreen<'a> {
    pub top: Listed<'a>,
    pub lines: usize,
}

impl Printer for TopScreen<'_> {
    fn table(&self, out: &mut dyn Write, screen: Screen) -> std::io::Result<()> {
        let width = screen.width;
        let top = self.top.top;
        write_text(screen_blocks(&top.report, top, self.top, self.lines, width), width, out)
    }

    fn json(&self, out: &mut dyn Write) -> std::io::Result<()> {
        self.top.json(out)
    }

    fn csv(&self, out: &mut dyn Write) -> std::io::Result<()> {
        self.top.csv(out)
    }
}

/// The fewest process rows a screen shows, however many notes there are.
const SCREEN_MIN_ROWS: usize = 10;

/// The view in `lines` lines (one left for the shell's prompt), each no
/// wider than `width`: as many rows as fit (at least ten), the machine
/// in two lines (its every line: `memtally machine`), each note in one
/// line (in full with `--full`, or in a pipe), and one line that says
/// where the rest is.
fn screen_blocks(
    report: &TopReport,
    ctx: &Top,
    shown: Listed,
    lines: usize,
    width: Option<usize>,
) -> Vec<Block> {
    let one_line = |s: String| match width {
        Some(w) => width::cut(&s, w).into_owned(),
        None => s,
    };
    let mut notes: Vec<String> = shmem_swap_note(&report.totals)
        .into_iter()
        .filter_map(|b| match b {
            Block::Note(t) => Some(t),
            _ => None,
        })
        .chain(ctx.notes().iter().map(word))
        .collect();
    let machine =
        report.machine.as_ref().map(crate::render::machine::two_lines).unwrap_or_default();
    // Header, rule and totals; the line of what is left out; a blank
    // line and the machine; the prompt.
    let fixed = 3 + 1 + machine.len() + usize::from(!machine.is_empty()) + 1;
    let budget = lines.saturating_sub(fixed);
    if notes.len() > 1 && budget.saturating_sub(notes.len()) < SCREEN_MIN_ROWS {
        // Too many to give each a line: one line counts them.
        let first = notes.remove(0);
        notes = vec![format!("{} notes; {first}", notes.len() + 1)];
    }
    let rows = budget.saturating_sub(notes.len()).max(SCREEN_MIN_ROWS).min(report.rows.len());
    let mut blocks = vec![Block::Table(rows_table(report, ctx, rows, shown))];
    let left_out = report.rows.len() - rows + report.omitted;
    let notes_cut = notes.iter().any(|n| width.is_some_and(|w| width::columns(n) + 6 > w));
    let mut rest = Vec::new();
    if left_out > 0 {
        rest.push(format!("{left_out} more rows in the totals: --top N, --all"));
    }
    if notes_cut
        || ctx.notes().len() + usize::from(report.totals.shmem_swap.is_some_and(|v| v > 0))
            > notes.len()
    {
        rest.push("notes in full: --full".to_string());
    }
    if !rest.is_empty() {
        blocks.push(Block::Line(one_line(format!("({})", rest.join("; ")))));
    }
    if !machine.is_empty() {
        blocks.push(Block::Blank);
        blocks.extend(machine.into_iter().map(|l| Block::Line(one_line(l))));
    }
    blocks.extend(notes.into_iter().map(|n| Block::Line(one_line(format!("note: {n}")))));
    blocks
}
