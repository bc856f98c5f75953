//! A part of a report read without knowing what came before it, on the
//! guess that it starts inside a region list with byte sizes (where a
//! large report spends nearly all its lines): the lines the guess reads
//! exactly as the whole parse would, and the first one it cannot.
//!
//! In that state a line changes nothing but counters (a region, a blank
//! line, a table rule, an elision, an unreadable or unknown line) unless
//! it starts a table, a section or a crash report's block, names the
//! command, or is a `Key: value` fact. Those are left to the sequential
//! parse; the others are read with [`Parser::line`] itself, so the guess
//! never has rules of its own for what a line means.

use super::parser::{Block, Parser};
use super::region_line::parse_region_line_at;
use super::tokens::{content, fact, find_byte, prompt_command};
use crate::model::vmmap::Record;
use crate::source::parse::vmmap::ParseOptions;

/// The line would change the parser's state: read it in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NotInList;

impl Parser {
    /// A parser in the guessed state: inside a region list, sizes in bytes.
    pub(crate) fn in_list(opts: ParseOptions) -> Parser {
        let mut p = Parser::new(opts);
        p.region_pages = Some(false);
        p
    }

    /// Whether this parser is in the state [`in_list`](Self::in_list)
    /// guesses, so that what a part read under the guess is what this
    /// parser would have read.
    pub(crate) fn is_in_list(&self) -> bool {
        self.block == Block::None
            && !self.after_total
            && self.pending_first_row.is_none()
            && self.region_pages == Some(false)
    }

    /// Reads one line of a part, in the guessed state: as [`line`](Self::line)
    /// does, or not at all when the line would change more than counters.
    pub(crate) fn list_line<'a>(
        &mut self,
        line_no: usize,
        raw: &'a str,
    ) -> Result<Option<Record<'a>>, NotInList> {
        let c = content(raw);
        if c.starts_with("VM Region Info:") {
            // Taken before the hot path by `line`.
            return Err(NotInList);
        }
        if !c.starts_with('=') {
            // The hot path, as `line` takes it.
            if let Some(lb) = find_byte(c, b'[') {
                if let Ok(region) = parse_region_line_at(c, lb) {
                    self.doc.diagnostics.lines += 1;
                    return Ok(self.region(line_no, c, region));
                }
            }
        }
        if changes_state(c) {
            return Err(NotInList);
        }
        Ok(self.line(line_no, raw))
    }

    /// Adds the counts of a parser that read (in the guessed state) the
    /// lines following this one's, numbering them from 1 (line
    /// `line_offset + 1`).
    pub(crate) fn absorb(&mut self, later: Parser, line_offset: usize) {
        let (d, l) = (&mut self.doc.diagnostics, later.doc.diagnostics);
        d.lines += l.lines;
        d.unreadable += l.unreadable;
        d.damaged += l.damaged;
        d.elisions += l.elisions;
        d.other_lines += l.other_lines;
        d.append_samples(l.unreadable_samples, l.damaged_samples, line_offset);
        self.doc.regions += later.doc.regions;
    }
}

/// Whether `c` (a line's content), in a region list, is one that
/// [`Parser::line`] reads as more than counters. Erring towards yes costs
/// only speed.
fn changes_state(c: &str) -> bool {
    c.starts_with("VM Region Summary")
        || c.starts_with("==== ")
        || c == "===="
        || c.starts_with("REGION TYPE")
        || ((c.starts_with("MALLOC ZONE") || c.starts_with("VIRTUAL")) && !c.contains('['))
        || prompt_command(c).is_some()
        || c.starts_with("Virtual Memory Map of process ")
        || c == "----"
        || c == "Collected with PhysFootprint mode enabled"
        || fact(c).is_some()
}
