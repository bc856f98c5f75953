//! Streaming parser for macOS `vmmap` text output.
//!
//! Reads any `BufRead` line by line (one reused buffer, no whole-file
//! string) and hands each line, with the record read from it if any, to a
//! callback. What the caller keeps is up to the caller: the default reports
//! aggregate as they go, so memory does not grow with the number of lines.
//!
//! Read: the header block (`Process:`, `OS Version:`, `Physical footprint:`,
//! `VM page size:` ...), region lines in every layout seen from report
//! format 2.2 to 2.4 (`[ VSIZE]`, `[ VSIZE RSDNT]`, `[ VSIZE RSDNT DIRTY
//! SWAP]`, `-pages` counts, fractional too), the summary table in its column
//! sets (including the crash report's `VM Region Summary`), and the MALLOC
//! ZONE table, kept apart. Publisher decoration is stripped: indents,
//! `// ` comment prefixes, `> ` quotes, shell prompt lines, `...` elisions.
//!
//! Nothing is dropped silently: a line that looks like a region or summary
//! row but cannot be read is counted (with samples) in
//! [`Diagnostics`](crate::model::vmmap::Diagnostics).

mod parser;
mod region_line;
pub(crate) mod runner;
pub mod split;
mod tokens;

pub(crate) use parser::Parser;

use std::io::{BufRead, Read};

use crate::model::vmmap::{Document, Record};
use crate::model::Region;

/// Page size assumed for `-pages` output that does not state one.
pub(crate) const ASSUMED_PAGE_SIZE: u64 = 4096;

/// Parser settings.
#[derive(Debug, Clone, Default)]
pub struct ParseOptions {
    /// Bytes per page for `-pages` output; overrides the `VM page size:`
    /// header. `Some(1)` reads page counts as bytes, as the seed does.
    pub page_size: Option<u64>,
}

/// Parses `reader` to the end. `on_line(line_no, raw_line, record)` is
/// called for every line (without its line ending); regions reach the
/// caller only there.
pub fn parse<R, F>(reader: R, opts: ParseOptions, on_line: F) -> std::io::Result<Document>
where
    R: Read,
    F: FnMut(usize, &str, Option<&Record<'_>>),
{
    let mut parser = Parser::new(opts);
    parse_from(&mut parser, reader, 0, on_line)?;
    Ok(parser.finish())
}

/// Feeds `parser` the lines of `reader`, numbered on from `line_no` (the
/// number of lines read before), and returns the number of the last line
/// read. [`parse`] is this from line 0; [`split`] resumes with it.
pub(crate) fn parse_from<R, F>(
    parser: &mut Parser,
    mut reader: R,
    mut line_no: usize,
    mut on_line: F,
) -> std::io::Result<usize>
where
    R: Read,
    F: FnMut(usize, &str, Option<&Record<'_>>),
{
    // One fixed buffer; lines are handed out in place (no copy per line).
    let mut buf = vec![0u8; READ_BUFFER];
    let (mut start, mut end) = (0usize, 0usize);
    let mut skipping = false; // inside a line longer than the buffer
    let mut eof = false;
    loop {
        let line_end = match memchr::memchr(b'\n', &buf[start..end]) {
            Some(i) => Some(start + i),
            None if eof => (start < end).then_some(end),
            None => None,
        };
        if let Some(le) = line_end {
            if skipping {
                skipping = false;
            } else {
                line_no += 1;
                let mut line = &buf[start..le];
                while let [rest @ .., b'\n' | b'\r'] = line {
                    line = rest;
                }
                let text = match std::str::from_utf8(line) {
                    Ok(t) => std::borrow::Cow::Borrowed(t),
                    Err(_) => String::from_utf8_lossy(line),
                };
                let record = parser.line(line_no, &text);
                on_line(line_no, &text, record.as_ref());
            }
            start = (le + 1).min(end);
            continue;
        }
        if eof {
            break;
        }
        if start > 0 {
            buf.copy_within(start..end, 0);
            end -= start;
            start = 0;
        }
        if end == buf.len() {
            // A line longer than the buffer: not vmmap output; skip it.
            if !skipping {
                line_no += 1;
                parser.oversized(line_no);
                skipping = true;
            }
            end = 0;
        }
        match reader.read(&mut buf[end..]) {
            Ok(0) => eof = true,
            Ok(n) => end += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(line_no)
}

/// Bytes read at a time; also the longest line read (longer ones are
/// counted as unreadable and skipped).
pub(crate) const READ_BUFFER: usize = 1 << 20;

/// Parses a whole input and collects every region (for small inputs and tests).
pub fn parse_all<R: BufRead>(
    reader: R,
    opts: ParseOptions,
) -> std::io::Result<(Document, Vec<Region>)> {
    let mut regions = Vec::new();
    let doc = parse(reader, opts, |_, _, rec| {
        if let Some(Record::Region(r)) = rec {
            regions.push(r.to_region());
        }
    })?;
    Ok((doc, regions))
}

#[cfg(test)]
mod tests;
