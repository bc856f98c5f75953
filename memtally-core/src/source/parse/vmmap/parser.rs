//! The line-by-line state machine: which block of the report a line is
//! in (header, region list, summary table, MALLOC ZONE table, legend), and
//! what each line is read as.

use super::region_line::{parse_region_line, RegionLine};
use super::tokens::{
    content, fact, is_backtrace_frame, is_elision, is_size_token, looks_like_region, parse_size,
    prompt_command, set_fact, split_row, Col,
};
use super::{ParseOptions, ASSUMED_PAGE_SIZE, READ_BUFFER};
use crate::model::vmmap::{
    printed_step, Document, DocumentNote, MallocZoneRow, Record, SummaryRow, VRegion, MAX_TYPES,
    OTHER_TYPES,
};

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
    /// A crash report's `VM Region Info:` block: the few regions around
    /// the faulting address, not the process's region list (its summary
    /// follows under `VM Region Summary:`). Read as prose, until a blank
    /// line.
    RegionInfo,
}

/// The line-by-line reader. Feed lines with [`Parser::line`], then call
/// [`Parser::finish`]. [`parse`](super::parse) drives it over a `BufRead`.
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
    /// Summary rows summed in the one row past [`MAX_TYPES`], and MALLOC
    /// ZONE rows left out there.
    folded_rows: u64,
    cut_zones: u64,
    /// A second report began: its header facts are not the first's.
    later_report: bool,
}

impl Parser {
    pub fn new(opts: ParseOptions) -> Parser {
        Parser {
            opts,
            doc: Document::default(),
            block: Block::None,
            pending_first_row: None,
            after_total: false,
            region_pages: None,
            folded_rows: 0,
            cut_zones: 0,
            later_report: false,
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
            self.doc.diagnostics.note(DocumentNote::PageSizeAssumed { bytes: ASSUMED_PAGE_SIZE });
        }
        let (kept, rows, zones) = (MAX_TYPES, self.folded_rows, self.cut_zones);
        for note in [
            (rows > 0).then_some(DocumentNote::SummaryRowsFolded { kept, rows }),
            (zones > 0).then_some(DocumentNote::MallocZonesCut { kept, rows: zones }),
        ]
        .into_iter()
        .flatten()
        {
            self.doc.diagnostics.note(note);
        }
        self.doc
    }

    /// Reads one line (without its line ending).
    pub fn line<'a>(&mut self, line_no: usize, raw: &'a str) -> Option<Record<'a>> {
        self.doc.diagnostics.lines += 1;
        let c = content(raw);
        if c.is_empty() {
            if self.block == Block::RegionInfo {
                self.block = Block::None;
            }
            if self.after_total {
                self.block = Block::None;
                self.after_total = false;
            }
            return None;
        }
        if self.block == Block::RegionInfo
            && !c.starts_with("VM Region Summary")
            && !c.starts_with("==== ")
        {
            self.doc.diagnostics.other_lines += 1;
            return None;
        }
        if c.starts_with("VM Region Info:") {
            self.doc.header.crash_report = true;
            self.block = Block::RegionInfo;
            self.doc.diagnostics.other_lines += 1;
            return None;
        }
        // A crash report's backtrace frame (`0   AppKit  \t0x… -[NSApplication
        // run] + 480`): prose to a vmmap reader, never a region line.
        if is_backtrace_frame(c) {
            self.doc.diagnostics.other_lines += 1;
            return None;
        }
        // A region line outside the tables: most lines of a report.
        let mut region_error = None;
        if self.block == Block::None && !c.starts_with('=') && c.contains('[') {
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
        if region_error.is_none() && self.block != Block::None && c.contains('[') {
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
            Block::Legend | Block::RegionInfo => {
                self.doc.diagnostics.other_lines += 1;
                return None;
            }
            Block::None => {}
        }
        if self.header_fact(line_no, c) {
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
                self.doc.diagnostics.note(DocumentNote::ColumnsInferred {
                    line: line_no,
                    first_row_seen: first.is_some(),
                });
            }
            cols
        });
        let cols = cols.filter(|c| !c.is_empty());
        match &cols {
            Some(c) => {
                self.doc.summary_columns = c.iter().map(|c| c.name().to_string()).collect();
            }
            None => self.doc.diagnostics.note(DocumentNote::SummaryHeaderUnknown { line: line_no }),
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
            if *col != Col::Count {
                // The size columns are declared in `steps` order.
                row.steps[*col as usize] = printed_step(tok, mult);
            }
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
            if self.doc.summary_totals.len() < MAX_TYPES {
                self.doc.summary_totals.push(row.clone());
            }
        } else if self.doc.summary.len() < MAX_TYPES {
            self.doc.summary.push(row.clone());
        } else {
            // Past MAX_TYPES rows, one more: the rest summed (made by the first).
            self.folded_rows += 1;
            match self.doc.summary.get_mut(MAX_TYPES) {
                Some(other) => other.add(&row),
                None => self.doc.summary.push(SummaryRow {
                    region_type: OTHER_TYPES.to_string(),
                    note: None,
                    ..row.clone()
                }),
            }
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
        match self.doc.malloc_zones.len() < MAX_TYPES {
            true => self.doc.malloc_zones.push(row.clone()),
            false => self.cut_zones += 1,
        }
        Some(Record::MallocZone(row))
    }

    /// `Key: value` lines of the header and the summary footer.
    fn header_fact(&mut self, line_no: usize, c: &str) -> bool {
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
        let Some((key, value)) = fact(c) else { return false };
        let h = &mut self.doc.header;
        if key == "Process" && h.facts.iter().any(|f| f.key == "Process") {
            // A second report: said, its header not mixed into the first's.
            let note = DocumentNote::SeveralReports { line: line_no, process: value.into() };
            self.doc.diagnostics.note(note);
            self.later_report = true;
        }
        if self.later_report {
            return true;
        }
        set_fact(h, key, value);
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
