//! Streaming parser for macOS `vmmap` text output.
//!
//! Reads any `BufRead` line by line (one reused buffer, no whole-file
//! string) and hands each line, with the record read from it if any, to a
//! [`VRegionSink`]. What the sink keeps is up to it: the default reports
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

mod lines;
pub(crate) mod parser;
mod region_line;
mod tokens;

use lines::{Lines, Next};
pub(crate) use parser::Parser;

use std::io::{BufRead, Read};

use crate::model::vmmap::{Document, VRegionSink};
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

/// Parses `reader` to the end, or until `sink` answers
/// [`Flow::Stop`](crate::model::Flow::Stop). Every line goes to
/// [`VRegionSink::line`] (without its line ending); regions reach the
/// caller only there. It fails only when reading does: a line it cannot
/// read is counted in the document's diagnostics.
pub fn parse<R: Read>(
    reader: R,
    opts: ParseOptions,
    mut sink: impl VRegionSink,
) -> std::io::Result<Document> {
    let mut parser = Parser::new(opts);
    let mut lines = Lines::new(reader);
    let mut line_no = 0;
    while let Some(next) = lines.next()? {
        line_no += 1;
        match next {
            Next::Line(text) => {
                let record = parser.line(line_no, &text);
                if sink.line(line_no, &text, record.as_ref()).is_stop() {
                    break;
                }
            }
            Next::TooLong => parser.oversized(line_no),
        }
    }
    Ok(parser.finish())
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
    let doc = parse(reader, opts, &mut regions)?;
    Ok((doc, regions))
}

#[cfg(test)]
mod tests;
