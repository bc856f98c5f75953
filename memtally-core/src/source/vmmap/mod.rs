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
//! row but cannot be read is counted (with samples) in [`Diagnostics`].

pub mod runner;
pub mod split;

use std::io::{BufRead, Read};

use serde::Serialize;

use crate::model::{Backing, Purge, Region};

/// How many sample lines each diagnostic keeps (the counts are exact).
pub const MAX_SAMPLES: usize = 50;

/// Page size assumed for `-pages` output that does not state one.
pub const ASSUMED_PAGE_SIZE: u64 = 4096;

/// Parser settings.
#[derive(Debug, Clone, Default)]
pub struct ParseOptions {
    /// Bytes per page for `-pages` output; overrides the `VM page size:`
    /// header. `Some(1)` reads page counts as bytes, as the seed does.
    pub page_size: Option<u64>,
}

/// One `Key: value` line of the header or footer, as printed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fact {
    pub key: String,
    pub value: String,
}

/// What the report says about the process and the tool.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Header {
    pub process: Option<String>,
    pub pid: Option<u32>,
    pub path: Option<String>,
    pub os_version: Option<String>,
    pub code_type: Option<String>,
    /// `Output report format:` (`2.4`).
    pub report_format: Option<String>,
    /// `Physical footprint:` in bytes.
    pub physical_footprint: Option<u64>,
    /// `Physical footprint (peak):` in bytes.
    pub physical_footprint_peak: Option<u64>,
    /// `VM page size:` in bytes.
    pub page_size: Option<u64>,
    /// Bytes per page used to convert `-pages` counts (`None` when the
    /// sizes were not page counts).
    pub page_size_used: Option<u64>,
    /// True when the page size was neither given nor stated and was assumed.
    pub page_size_assumed: bool,
    /// Region sizes were page counts (`vmmap -pages`).
    pub pages: bool,
    /// The command line the publisher showed (`vmmap -pages 2771`).
    pub command: Option<String>,
    /// The input is a crash report's `VM Region Summary`.
    pub crash_report: bool,
    /// Every `Key: value` line outside the tables, in order (capped at 64).
    pub facts: Vec<Fact>,
}

/// A summary-table row; a figure the table does not have is `None`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SummaryRow {
    pub region_type: String,
    #[serde(rename = "virtual")]
    pub virtual_size: Option<u64>,
    pub resident: Option<u64>,
    pub dirty: Option<u64>,
    pub swapped: Option<u64>,
    pub volatile: Option<u64>,
    pub nonvol: Option<u64>,
    pub empty: Option<u64>,
    pub count: Option<u64>,
    /// Text after the figures (`see MALLOC ZONE table below`).
    pub note: Option<String>,
    /// 1-based line number in the input.
    pub line: usize,
    /// A `TOTAL` row.
    #[serde(skip)]
    pub total: bool,
}

/// A MALLOC ZONE table row, kept apart from the summary; figures as printed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MallocZoneRow {
    pub zone: String,
    pub values: Vec<String>,
    pub line: usize,
    #[serde(skip)]
    pub total: bool,
}

/// A region line as read, borrowing its text from the line. Sizes are
/// bytes; a size the line does not give is `None`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VRegion<'a> {
    pub region_type: &'a str,
    pub start: Option<u64>,
    pub end: Option<u64>,
    pub vsize: Option<u64>,
    pub resident: Option<u64>,
    pub dirty: Option<u64>,
    pub swap: Option<u64>,
    pub prot: &'a str,
    pub max_prot: Option<&'a str>,
    pub share_mode: Option<&'a str>,
    pub purge: Purge,
    pub detail: Option<&'a str>,
}

impl VRegion<'_> {
    /// The owned model [`Region`].
    pub fn to_region(&self) -> Region {
        let mut r = Region::new(Backing::Unknown);
        r.region_type = Some(self.region_type.to_string());
        r.start = self.start;
        r.end = self.end;
        r.perms = self.prot.to_string();
        r.max_perms = self.max_prot.map(str::to_string);
        r.share_mode = self.share_mode.map(str::to_string);
        r.purge = self.purge;
        r.path = self.detail.map(str::to_string);
        r.sizes.size = self.vsize;
        r.sizes.rss = self.resident;
        r.sizes.dirty = self.dirty;
        r.sizes.swap = self.swap;
        r
    }
}

/// What one line was read as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record<'a> {
    Region(VRegion<'a>),
    Summary(SummaryRow),
    MallocZone(MallocZoneRow),
}

/// A line that could not be read, or was read with damage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub line: usize,
    pub reason: String,
    pub text: String,
}

/// Counts of what was not read, with samples.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Diagnostics {
    /// Lines read in all.
    pub lines: u64,
    /// Lines that look like region or summary rows but could not be read.
    pub unreadable: u64,
    pub unreadable_samples: Vec<Problem>,
    /// Region lines read whose non-size fields were damaged (sizes intact).
    pub damaged: u64,
    pub damaged_samples: Vec<Problem>,
    /// Elision lines (`...`) the publisher left: the input is incomplete.
    pub elisions: u64,
    /// Other lines that are neither header, table nor region (prose,
    /// annotations, legend): not figures, so not counted as losses.
    pub other_lines: u64,
    /// Notes about the input as a whole (assumed page size, inferred columns).
    pub notes: Vec<String>,
}

impl Diagnostics {
    fn unreadable(&mut self, line: usize, text: &str, reason: impl Into<String>) {
        self.unreadable += 1;
        if self.unreadable_samples.len() < MAX_SAMPLES {
            self.unreadable_samples.push(Problem { line, reason: reason.into(), text: clip(text) });
        }
    }

    fn damaged(&mut self, line: usize, text: &str, reason: impl Into<String>) {
        self.damaged += 1;
        if self.damaged_samples.len() < MAX_SAMPLES {
            self.damaged_samples.push(Problem { line, reason: reason.into(), text: clip(text) });
        }
    }

    fn note(&mut self, note: String) {
        if !self.notes.contains(&note) && self.notes.len() < MAX_SAMPLES {
            self.notes.push(note);
        }
    }
}

fn clip(text: &str) -> String {
    const MAX: usize = 200;
    if text.len() <= MAX {
        return text.to_string();
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}

/// Everything but the region lines, which go to the callback.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Document {
    pub header: Header,
    /// Column names of the summary table as read (`virtual`, `resident`, ...).
    pub summary_columns: Vec<String>,
    pub summary: Vec<SummaryRow>,
    /// `TOTAL` and `TOTAL, minus reserved VM space`.
    pub summary_totals: Vec<SummaryRow>,
    pub malloc_zone_columns: Vec<String>,
    pub malloc_zones: Vec<MallocZoneRow>,
    /// Region lines read.
    pub regions: u64,
    pub diagnostics: Diagnostics,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Col {
    Virtual,
    Resident,
    Dirty,
    Swapped,
    Volatile,
    Nonvol,
    Empty,
    Count,
}

impl Col {
    fn name(self) -> &'static str {
        match self {
            Col::Virtual => "virtual",
            Col::Resident => "resident",
            Col::Dirty => "dirty",
            Col::Swapped => "swapped",
            Col::Volatile => "volatile",
            Col::Nonvol => "nonvol",
            Col::Empty => "empty",
            Col::Count => "count",
        }
    }

    fn from_word(w: &str) -> Option<Col> {
        Some(match w {
            "VIRTUAL" => Col::Virtual,
            "RESIDENT" => Col::Resident,
            "DIRTY" => Col::Dirty,
            "SWAPPED" => Col::Swapped,
            "VOLATILE" => Col::Volatile,
            "NONVOL" => Col::Nonvol,
            "EMPTY" => Col::Empty,
            "REGION" | "COUNT" => Col::Count,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Block {
    None,
    Legend,
    /// Summary table rows follow; `None` columns when the header was unreadable.
    Summary {
        cols: Option<Vec<Col>>,
        pages: bool,
    },
    MallocZone,
}

/// The line-by-line reader. Feed lines with [`Parser::line`], then call
/// [`Parser::finish`]. [`parse`] drives it over a `BufRead`.
#[derive(Debug)]
pub struct Parser {
    opts: ParseOptions,
    doc: Document,
    block: Block,
    pending_first_row: Option<Vec<String>>,
    /// A TOTAL row was read: the next blank line ends the table.
    after_total: bool,
    /// Region sizes are page counts: decided at the first region line.
    region_pages: Option<bool>,
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
pub fn parse_from<R, F>(
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
pub const READ_BUFFER: usize = 1 << 20;

impl Parser {
    pub fn new(opts: ParseOptions) -> Parser {
        Parser {
            opts,
            doc: Document::default(),
            block: Block::None,
            pending_first_row: None,
            after_total: false,
            region_pages: None,
        }
    }

    /// Counts a line too long to read.
    pub fn oversized(&mut self, line_no: usize) {
        self.doc.diagnostics.lines += 1;
        self.doc.diagnostics.unreadable(
            line_no,
            "",
            format!("line longer than {READ_BUFFER} bytes"),
        );
    }

    /// The document so far, with its diagnostics.
    pub fn finish(mut self) -> Document {
        if self.doc.header.page_size_assumed {
            self.doc.diagnostics.note(format!(
                "sizes are page counts but the input states no VM page size: assumed {ASSUMED_PAGE_SIZE} bytes (pass --page-size BYTES)"
            ));
        }
        self.doc
    }

    /// Reads one line (without its line ending).
    pub fn line<'a>(&mut self, line_no: usize, raw: &'a str) -> Option<Record<'a>> {
        self.doc.diagnostics.lines += 1;
        let c = content(raw);
        if c.is_empty() {
            if self.after_total {
                self.block = Block::None;
                self.after_total = false;
            }
            return None;
        }
        // The hot path: a region line outside the tables.
        let mut region_error = None;
        if self.block == Block::None && !c.starts_with('=') && find_byte(c, b'[').is_some() {
            match parse_region_line(c) {
                Ok(line) => return self.region(line_no, c, line),
                Err(e) => region_error = Some(e),
            }
        }
        if is_elision(c) {
            self.doc.diagnostics.elisions += 1;
            return None;
        }
        if let Some(cmd) = prompt_command(c) {
            if self.doc.header.command.is_none() {
                self.doc.header.command = Some(cmd.to_string());
            }
            return None;
        }
        if c.starts_with("==== ") || c == "====" {
            self.section(c);
            return None;
        }
        if c.starts_with('=') && c.chars().all(|ch| ch == '=' || ch.is_whitespace()) {
            // A table rule.
            return None;
        }
        if c.starts_with("VM Region Summary") {
            self.doc.header.crash_report = true;
            self.block = Block::None;
            return None;
        }
        if let Some(rest) = c.strip_prefix("REGION TYPE") {
            // The region list's header: `START - END  [ VSIZE ...] PRT/MAX ... REGION DETAIL`.
            if rest.contains("START") || rest.contains('[') || rest.contains("DETAIL") {
                self.block = Block::None;
                self.pending_first_row = None;
            } else {
                self.summary_header(line_no, rest);
            }
            return None;
        }
        if c.starts_with("MALLOC ZONE") && !c.contains('[') {
            self.malloc_header(c);
            return None;
        }
        if c.starts_with("VIRTUAL") && !c.contains('[') {
            let words: Vec<String> = c.split_whitespace().map(str::to_string).collect();
            if words.iter().any(|w| w == "ALLOCATION") {
                self.malloc_header(c);
                self.pending_first_row = Some(words);
            } else {
                self.block = Block::None;
                self.pending_first_row = Some(words);
            }
            return None;
        }
        if region_error.is_none() && self.block != Block::None && find_byte(c, b'[').is_some() {
            // A region line inside a table (a table header was damaged or
            // the table had no end): region lines never look like rows.
            if let Ok(line) = parse_region_line(c) {
                self.block = Block::None;
                return self.region(line_no, c, line);
            }
        }
        match self.block.clone() {
            Block::Summary { cols, pages } => {
                return self.summary_row(line_no, c, cols.as_deref(), pages);
            }
            Block::MallocZone => return self.malloc_row(line_no, c),
            Block::Legend => {
                self.doc.diagnostics.other_lines += 1;
                return None;
            }
            Block::None => {}
        }
        if self.header_fact(c) {
            return None;
        }
        if looks_like_region(c) {
            let err = match region_error {
                Some(e) => e,
                None => match parse_region_line(c) {
                    Ok(line) => return self.region(line_no, c, line),
                    Err(e) => e,
                },
            };
            self.doc.diagnostics.unreadable(line_no, c, err);
            return None;
        }
        self.doc.diagnostics.other_lines += 1;
        None
    }

    fn section(&mut self, c: &str) {
        self.pending_first_row = None;
        self.after_total = false;
        self.block = if c.starts_with("==== Legend") { Block::Legend } else { Block::None };
        if let Some(i) = c.find("for process ") {
            let rest = &c[i + "for process ".len()..];
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            if self.doc.header.pid.is_none() {
                self.doc.header.pid = digits.parse().ok();
            }
        }
    }

    fn summary_header(&mut self, line_no: usize, rest: &str) {
        self.after_total = false;
        let words: Vec<&str> = rest.split_whitespace().collect();
        let pages = words.contains(&"PAGES");
        let first = self.pending_first_row.take();
        let named = match &first {
            Some(first) => first.iter().map(|w| Col::from_word(w)).collect::<Option<Vec<Col>>>(),
            None if words.iter().any(|w| Col::from_word(w).is_some() && *w != "COUNT") => words
                .iter()
                .take_while(|w| !w.starts_with('('))
                .map(|w| Col::from_word(w))
                .collect::<Option<Vec<Col>>>(),
            None => None,
        };
        let cols = named.or_else(|| {
            // The second header row (`SIZE SIZE ... COUNT`) alone: infer.
            let sizes = words.iter().filter(|w| **w == "SIZE" || **w == "PAGES").count();
            let count = words.contains(&"COUNT");
            let mut cols = match sizes {
                1 => Some(vec![Col::Virtual]),
                2 => Some(vec![Col::Virtual, Col::Resident]),
                4 => Some(vec![Col::Virtual, Col::Resident, Col::Dirty, Col::Swapped]),
                7 => Some(vec![
                    Col::Virtual,
                    Col::Resident,
                    Col::Dirty,
                    Col::Swapped,
                    Col::Volatile,
                    Col::Nonvol,
                    Col::Empty,
                ]),
                _ => None,
            };
            if let (Some(c), true) = (cols.as_mut(), count) {
                c.push(Col::Count);
            }
            if cols.is_some() {
                let why = if first.is_some() { "not understood" } else { "missing" };
                self.doc.diagnostics.note(format!(
                    "line {line_no}: the summary table's first header row is {why}; columns inferred from the second row"
                ));
            }
            cols
        });
        let cols = cols.filter(|c| !c.is_empty());
        match &cols {
            Some(c) => {
                self.doc.summary_columns = c.iter().map(|c| c.name().to_string()).collect();
            }
            None => self.doc.diagnostics.note(format!(
                "line {line_no}: summary table header not understood; its rows are counted as unreadable"
            )),
        }
        self.block = Block::Summary { cols, pages };
    }

    fn malloc_header(&mut self, c: &str) {
        self.after_total = false;
        if let Some(first) = self.pending_first_row.take() {
            if self.doc.malloc_zone_columns.is_empty() {
                self.doc.malloc_zone_columns = first;
            }
        } else if self.doc.malloc_zone_columns.is_empty() && c.starts_with("VIRTUAL") {
            self.doc.malloc_zone_columns = c.split_whitespace().map(str::to_string).collect();
        }
        self.block = Block::MallocZone;
    }

    fn summary_row(
        &mut self,
        line_no: usize,
        c: &str,
        cols: Option<&[Col]>,
        pages: bool,
    ) -> Option<Record<'static>> {
        let Some(cols) = cols else {
            self.doc.diagnostics.unreadable(line_no, c, "summary table with unknown columns");
            return None;
        };
        let mult = if pages { self.page_mult() } else { 1 };
        let Some((name, values, note)) = split_row(c, cols.len(), cols.last() == Some(&Col::Count))
        else {
            self.doc.diagnostics.unreadable(
                line_no,
                c,
                format!("summary row without {} readable figures (cut short?)", cols.len()),
            );
            return None;
        };
        let mut row = SummaryRow {
            region_type: name.to_string(),
            note: note.map(str::to_string),
            line: line_no,
            total: name == "TOTAL" || name.starts_with("TOTAL,"),
            ..Default::default()
        };
        for (col, tok) in cols.iter().zip(values) {
            let v =
                if *col == Col::Count { tok.parse::<u64>().ok() } else { parse_size(tok, mult) };
            let Some(v) = v else {
                self.doc.diagnostics.unreadable(line_no, c, format!("bad figure {tok:?}"));
                return None;
            };
            let slot = match col {
                Col::Virtual => &mut row.virtual_size,
                Col::Resident => &mut row.resident,
                Col::Dirty => &mut row.dirty,
                Col::Swapped => &mut row.swapped,
                Col::Volatile => &mut row.volatile,
                Col::Nonvol => &mut row.nonvol,
                Col::Empty => &mut row.empty,
                Col::Count => &mut row.count,
            };
            *slot = Some(v);
        }
        if row.total {
            self.after_total = true;
            self.doc.summary_totals.push(row.clone());
        } else {
            self.doc.summary.push(row.clone());
        }
        Some(Record::Summary(row))
    }

    fn malloc_row(&mut self, line_no: usize, c: &str) -> Option<Record<'static>> {
        let toks: Vec<&str> = c.split_whitespace().collect();
        let Some(first_num) = toks.iter().position(|t| is_size_token(t)) else {
            self.doc.diagnostics.other_lines += 1;
            return None;
        };
        if first_num == 0 {
            self.doc.diagnostics.unreadable(line_no, c, "MALLOC ZONE row without a zone name");
            return None;
        }
        let zone = toks[..first_num].join(" ");
        self.after_total |= zone == "TOTAL";
        let row = MallocZoneRow {
            total: zone == "TOTAL",
            zone,
            values: toks[first_num..].iter().map(|s| s.to_string()).collect(),
            line: line_no,
        };
        self.doc.malloc_zones.push(row.clone());
        Some(Record::MallocZone(row))
    }

    /// `Key: value` lines of the header and the summary footer.
    fn header_fact(&mut self, c: &str) -> bool {
        if let Some(rest) = c.strip_prefix("Virtual Memory Map of process ") {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            let h = &mut self.doc.header;
            h.pid = h.pid.or(digits.parse().ok());
            if h.process.is_none() {
                if let (Some(a), Some(b)) = (rest.find('('), rest.rfind(')')) {
                    if a < b {
                        h.process = Some(rest[a + 1..b].to_string());
                    }
                }
            }
            return true;
        }
        if c == "----" || c == "Collected with PhysFootprint mode enabled" {
            return true;
        }
        let Some((key, value)) = c.split_once(':') else { return false };
        let plausible = !key.is_empty()
            && key.len() <= 40
            && key.starts_with(|ch: char| ch.is_ascii_alphabetic())
            && key.chars().all(|ch| ch.is_ascii_alphabetic() || " ()/-".contains(ch));
        if !plausible {
            return false;
        }
        let value = value.trim();
        let h = &mut self.doc.header;
        match key {
            "Process" => {
                let (name, pid) = name_and_pid(value);
                h.process = Some(name.to_string());
                h.pid = pid.or(h.pid);
            }
            "Path" => h.path = Some(value.to_string()),
            "OS Version" => h.os_version = Some(value.to_string()),
            "Code Type" => h.code_type = Some(value.to_string()),
            "Output report format" => {
                h.report_format = value.split_whitespace().next().map(str::to_string);
            }
            "Physical footprint" => h.physical_footprint = parse_size(value, 1),
            "Physical footprint (peak)" => h.physical_footprint_peak = parse_size(value, 1),
            "VM page size" => {
                h.page_size = value.split_whitespace().next().and_then(|v| v.parse().ok());
            }
            _ => {}
        }
        if h.facts.len() < 64 {
            h.facts.push(Fact { key: key.to_string(), value: value.to_string() });
        }
        true
    }

    fn page_mult(&mut self) -> u64 {
        if let Some(p) = self.opts.page_size.or(self.doc.header.page_size) {
            self.doc.header.page_size_used = Some(p);
            return p;
        }
        self.doc.header.page_size_assumed = true;
        self.doc.header.page_size_used = Some(ASSUMED_PAGE_SIZE);
        ASSUMED_PAGE_SIZE
    }

    fn region<'a>(&mut self, line_no: usize, c: &str, line: RegionLine<'a>) -> Option<Record<'a>> {
        let pages = match self.region_pages {
            Some(p) => p,
            None => {
                let cmd_pages = self
                    .doc
                    .header
                    .command
                    .as_deref()
                    .is_some_and(|cmd| cmd.split_whitespace().any(|w| w == "-pages"));
                let p = cmd_pages
                    || line
                        .sizes()
                        .iter()
                        .all(|t| t.bytes().all(|b| b.is_ascii_digit() || b == b'.'));
                self.region_pages = Some(p);
                self.doc.header.pages = p;
                p
            }
        };
        let mult = if pages { self.page_mult() } else { 1 };
        let mut figures = [None; 4];
        for (slot, tok) in figures.iter_mut().zip(line.sizes()) {
            match parse_size(tok, mult) {
                Some(v) => *slot = Some(v),
                None => {
                    self.doc.diagnostics.unreadable(line_no, c, format!("bad size {tok:?}"));
                    return None;
                }
            }
        }
        if let Some(d) = line.damage {
            self.doc.diagnostics.damaged(line_no, c, d);
        }
        self.doc.regions += 1;
        Some(Record::Region(VRegion {
            region_type: line.region_type,
            start: line.start,
            end: line.end,
            vsize: figures[0],
            resident: figures[1],
            dirty: if line.n_sizes == 4 { figures[2] } else { None },
            swap: if line.n_sizes == 4 { figures[3] } else { None },
            prot: line.prot,
            max_prot: line.max_prot,
            share_mode: line.share_mode,
            purge: line.purge,
            detail: line.detail,
        }))
    }
}

/// The line without publisher decoration: indents, `//` comment and `>`
/// quote prefixes, trailing whitespace.
pub fn content(raw: &str) -> &str {
    let mut t = raw.trim_start();
    loop {
        if let Some(r) = t.strip_prefix("//") {
            t = r.trim_start();
        } else if let Some(r) = t.strip_prefix('>') {
            if r.is_empty() || r.starts_with(' ') {
                t = r.trim_start();
            } else {
                break;
            }
        } else {
            break;
        }
    }
    t.trim_end()
}

fn is_elision(c: &str) -> bool {
    c.starts_with("...") && c.trim_start_matches('.').trim().is_empty()
}

/// `$ vmmap --wide 123`, `host:~ user$ vmmap -pages 1`, `vmmap 53799`.
fn prompt_command(c: &str) -> Option<&str> {
    if c.starts_with("vmmap ") || c == "vmmap" {
        return Some(c);
    }
    for marker in ["$ vmmap", "% vmmap", "# vmmap"] {
        if let Some(i) = c.find(marker) {
            return Some(&c[i + 2..]);
        }
    }
    None
}

fn name_and_pid(value: &str) -> (&str, Option<u32>) {
    if let (Some(a), Some(b)) = (value.rfind('['), value.rfind(']')) {
        if a < b {
            return (value[..a].trim(), value[a + 1..b].trim().parse().ok());
        }
    }
    (value, None)
}

fn looks_like_region(c: &str) -> bool {
    if c.contains("SM=") {
        return true;
    }
    match c.find('[') {
        Some(i) => {
            let before = c[..i].trim_end();
            before.split_whitespace().count() >= 2
                && before.rsplit(char::is_whitespace).next().is_some_and(|r| r.contains('-'))
        }
        None => false,
    }
}

/// Splits a table row into its name, `n` figures and a trailing note. The
/// name is the shortest prefix followed by `n` size tokens (the last one an
/// integer when `count_last`), then nothing or a note.
fn split_row(c: &str, n: usize, count_last: bool) -> Option<(&str, Vec<&str>, Option<&str>)> {
    // Token spans, so the name and note keep their inner spacing.
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut start = None;
    for (i, ch) in c.char_indices() {
        if ch.is_whitespace() {
            if let Some(s) = start.take() {
                spans.push((s, i));
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        spans.push((s, c.len()));
    }
    for first in 1..spans.len() {
        if first + n > spans.len() {
            break;
        }
        let toks: Vec<&str> = spans[first..first + n].iter().map(|&(a, b)| &c[a..b]).collect();
        let ok = toks.iter().enumerate().all(|(k, t)| {
            if count_last && k == n - 1 {
                t.bytes().all(|b| b.is_ascii_digit())
            } else {
                is_size_token(t)
            }
        });
        if ok {
            let name = c[..spans[first - 1].1].trim();
            let note = spans.get(first + n).map(|&(a, _)| c[a..].trim());
            return Some((name, toks, note));
        }
    }
    None
}

/// `12`, `0.20`, `56.0M`, `8K`, `1.5T`, `100B`.
pub fn is_size_token(t: &str) -> bool {
    let b = t.as_bytes();
    let digits = match b.last() {
        Some(b'B' | b'K' | b'M' | b'G' | b'T') => &b[..b.len() - 1],
        _ => b,
    };
    let mut dots = 0;
    !digits.is_empty()
        && digits[0].is_ascii_digit()
        && digits.iter().all(|&c| {
            dots += (c == b'.') as u32;
            c.is_ascii_digit() || c == b'.'
        })
        && dots <= 1
}

/// A size in bytes: a number with an optional unit B, K, M, G or T; a bare
/// number is multiplied by `bare` (1 for bytes, the page size for page
/// counts). Fractions are truncated to whole bytes, as the seed does.
#[inline]
pub fn parse_size(t: &str, bare: u64) -> Option<u64> {
    let b = t.as_bytes();
    let (digits, mult) = match b.last()? {
        b'B' => (&b[..b.len() - 1], 1u64),
        b'K' => (&b[..b.len() - 1], 1 << 10),
        b'M' => (&b[..b.len() - 1], 1 << 20),
        b'G' => (&b[..b.len() - 1], 1 << 30),
        b'T' => (&b[..b.len() - 1], 1 << 40),
        _ => (b, bare),
    };
    if digits.first().is_none_or(|c| !c.is_ascii_digit()) {
        return None;
    }
    let mut v: u64 = 0;
    let mut dot = false;
    for &c in digits {
        match c {
            b'0'..=b'9' if !dot => v = v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?,
            b'0'..=b'9' => {}
            b'.' if !dot => dot = true,
            _ => return None,
        }
    }
    if !dot {
        return v.checked_mul(mult);
    }
    // The seed computes int(float(v) * unit); f64 here gives the same bits.
    let f: f64 = t[..digits.len()].parse().ok()?;
    let x = f * mult as f64;
    if !x.is_finite() || x >= 18_446_744_073_709_551_616.0 {
        return None;
    }
    Some(x as u64)
}

/// The fields of a region line, borrowed from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionLine<'a> {
    pub region_type: &'a str,
    pub start: Option<u64>,
    pub end: Option<u64>,
    /// The size tokens in `[ ]`: the first `n_sizes` are set.
    pub size_tokens: [&'a str; 4],
    pub n_sizes: usize,
    pub prot: &'a str,
    pub max_prot: Option<&'a str>,
    pub share_mode: Option<&'a str>,
    pub purge: Purge,
    pub detail: Option<&'a str>,
    /// What was wrong with a field other than the sizes.
    pub damage: Option<String>,
}

impl<'a> RegionLine<'a> {
    /// The size tokens in `[ ]`.
    pub fn sizes(&self) -> &[&'a str] {
        &self.size_tokens[..self.n_sizes]
    }
}

fn is_prot(s: &str) -> bool {
    s.len() == 3 && s.bytes().all(|b| matches!(b, b'r' | b'w' | b'x' | b'-'))
}

fn split_token(s: &str) -> (&str, &str) {
    let s = s.trim_ascii_start();
    match s.bytes().position(|b| b.is_ascii_whitespace()) {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, ""),
    }
}

/// `trim_ascii_end` that steps over runs of spaces 8 bytes at a time (the
/// type column's padding).
fn trim_end_fast(s: &str) -> &str {
    let b = s.as_bytes();
    let mut end = b.len();
    while end >= 8 && b[end - 8..end] == [b' '; 8] {
        end -= 8;
    }
    s[..end].trim_ascii_end()
}

fn find_byte(s: &str, b: u8) -> Option<usize> {
    memchr::memchr(b, s.as_bytes())
}

/// Hex digit values; 0xff for anything else.
const HEX: [u8; 256] = {
    let mut t = [0xffu8; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

fn hex(s: &str) -> Option<u64> {
    if s.is_empty() || s.len() > 16 {
        return None;
    }
    let mut v = 0u64;
    let mut bad = 0u8;
    for &c in s.as_bytes() {
        let d = HEX[c as usize];
        bad |= d;
        v = (v << 4) | u64::from(d & 0x0f);
    }
    (bad & 0x80 == 0).then_some(v)
}

/// Reads `TYPE  START-END  [ SIZES ]  PRT/MAX  SM=XXX  [PURGE=X]  DETAIL`.
pub fn parse_region_line(c: &str) -> Result<RegionLine<'_>, String> {
    let lb = find_byte(c, b'[').ok_or("no [ sizes ]")?;
    let rb = lb + find_byte(&c[lb..], b']').ok_or("no closing ] (line cut short?)")?;
    let before = trim_end_fast(&c[..lb]);
    let split = memchr::memrchr2(b' ', b'\t', before.as_bytes())
        .ok_or("no region type before the address range")?;
    let region_type = trim_end_fast(&before[..split]).trim_ascii();
    let range = &before[split + 1..];
    if region_type.is_empty() {
        return Err("no region type".into());
    }
    let mut damage = None;
    let dash =
        find_byte(range, b'-').ok_or_else(|| format!("address range {range:?} has no '-'"))?;
    let (a, b) = (&range[..dash], &range[dash + 1..]);
    let (start, end) = match (hex(a), hex(b)) {
        (Some(s), Some(e)) if e >= s => (Some(s), Some(e)),
        (Some(_), Some(_)) => {
            // The sizes in [ ] stand on their own; the addresses are unknown.
            damage = Some(format!("address range {range:?} ends before it starts"));
            (None, None)
        }
        _ if !a.is_empty()
            && !b.is_empty()
            && a.bytes().chain(b.bytes()).all(|x| x.is_ascii_hexdigit()) =>
        {
            damage = Some(format!("address range {range:?} does not fit in 64 bits"));
            (None, None)
        }
        _ if !a.is_empty()
            && !b.is_empty()
            && a.bytes().chain(b.bytes()).all(|x| x.is_ascii_alphabetic())
            && !a.bytes().chain(b.bytes()).all(|x| x.is_ascii_hexdigit()) =>
        {
            (None, None) // a placeholder such as `kernel-kernel`
        }
        _ => return Err(format!("address range {range:?} is not hex")),
    };
    let mut size_tokens = [""; 4];
    let mut n_sizes = 0;
    for tok in c[lb + 1..rb].split_ascii_whitespace() {
        if n_sizes == 4 {
            return Err("more than 4 sizes in [ ]".into());
        }
        size_tokens[n_sizes] = tok;
        n_sizes += 1;
    }
    if !matches!(n_sizes, 1 | 2 | 4) {
        return Err(format!("{n_sizes} sizes in [ ] (expected 1, 2 or 4)"));
    }
    let (prot_tok, mut rest) = split_token(&c[rb + 1..]);
    if prot_tok.is_empty() {
        return Err("nothing after the sizes (line cut short?)".into());
    }
    let (prot, max_glued) = match prot_tok.split_once('/') {
        Some((p, m)) if is_prot(p) => (p, m),
        // The sizes are whole; the protection is damaged or cut short.
        _ => {
            damage = Some(format!("bad protection {prot_tok:?}"));
            (prot_tok, "")
        }
    };
    let mut share_mode = None;
    let glued = if is_prot(max_glued) || damage.is_some() { None } else { max_glued.find("SM=") };
    let max_prot = match glued {
        // `r--/rwSM=COW`: a `- ` was lost (seen in a mangled copy).
        Some(i) => {
            let (m, sm) = max_glued.split_at(i);
            share_mode = Some(&sm[3..]);
            damage = Some(format!("protection and share mode run together in {max_glued:?}"));
            if is_prot(m) {
                Some(m)
            } else {
                None
            }
        }
        None if is_prot(max_glued) => Some(max_glued),
        None if damage.is_some() => None,
        None => {
            damage = Some(format!("bad max protection {max_glued:?}"));
            None
        }
    };
    if share_mode.is_none() {
        let (tok, r) = split_token(rest);
        if let Some(sm) = tok.strip_prefix("SM=") {
            share_mode = Some(sm);
            rest = r;
        }
    }
    let mut purge = Purge::Unmarked;
    let (tok, r) = split_token(rest);
    if let Some(p) = tok.strip_prefix("PURGE=") {
        purge = Purge::from_code(p);
        if !matches!(p, "N" | "V" | "E") {
            damage = Some(format!("unknown purge state {tok:?}"));
        }
        rest = r;
    }
    let detail = rest.trim_ascii();
    Ok(RegionLine {
        region_type,
        start,
        end,
        size_tokens,
        n_sizes,
        prot,
        max_prot,
        share_mode,
        purge,
        detail: (!detail.is_empty()).then_some(detail),
        damage,
    })
}

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
