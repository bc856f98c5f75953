//! A regular file parsed on two threads, with the sequential parse's result.
//!
//! The file is cut at the first line boundary at or after a byte offset.
//! The first part is parsed as usual. Meanwhile a second thread reads the
//! second part on its own file handle, guessing that it starts inside the
//! region list of a report whose sizes are bytes (the state the parser is
//! in for nearly all of a large report), and takes region lines only: it
//! stops at the first line that is anything else (blank, a table, a header,
//! a line the hot path cannot read) or at the end of the file.
//!
//! The guess is then checked: a region line changes no parser state but
//! its counters, so if the first part ended outside every table with byte
//! sizes, the second thread read its lines exactly as the sequential parse
//! would have. Its counts, samples and sink are appended (line numbers
//! shifted), and the parse goes on sequentially from where it stopped (the
//! summary and MALLOC ZONE tables). Otherwise its work is dropped and the
//! parse goes on sequentially from the cut. Either way the [`Document`]
//! and the sink are what [`parse`](crate::source::parse::vmmap::parse) would have given.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use crate::model::vmmap::{Document, Problem, Record, SplitSink, MAX_SAMPLES};
use crate::source::parse::vmmap::parser::{Block, Parser};
use crate::source::parse::vmmap::region_line::parse_region_line;
use crate::source::parse::vmmap::tokens::{content, find_byte};
use crate::source::parse::vmmap::{parse_from, Lines, Next, ParseOptions, READ_BUFFER};

/// Files smaller than this are parsed on one thread.
pub const MIN_SPLIT_BYTES: u64 = 8 << 20;

/// How a split parse went.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SplitInfo {
    /// Byte offset where the second part began (0: not split).
    pub cut: u64,
    /// Lines of the first part.
    pub first_lines: usize,
    /// Lines the second thread read and that were kept.
    pub second_lines: usize,
    /// The second thread's guess was right (its lines were kept).
    pub kept: bool,
}

/// What the second thread read.
struct Ahead {
    parser: Parser,
    lines: usize,
    bytes: u64,
}

/// Parses the file at `path` as [`parse`](crate::source::parse::vmmap::parse) would, regions to
/// `sink`, cutting it near byte `split` and reading the second part on
/// another thread into `second` (a fresh sink, merged into `sink`).
/// `split` of 0 or past the end parses on this thread only.
pub fn parse_file_split<S: SplitSink>(
    path: &Path,
    opts: ParseOptions,
    split: u64,
    sink: &mut S,
    mut second: S,
) -> std::io::Result<(Document, SplitInfo)> {
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    let mut parser = Parser::new(opts.clone());
    let cut = match cut_at(&mut file, split, len)? {
        Some(c) => c,
        None => {
            file.seek(SeekFrom::Start(0))?;
            parse_from(&mut parser, file, 0, sink)?;
            return Ok((parser.finish(), SplitInfo::default()));
        }
    };
    file.seek(SeekFrom::Start(0))?;
    let (first_lines, ahead, file) = std::thread::scope(|s| {
        let worker = s.spawn(|| -> std::io::Result<Ahead> {
            let mut f = File::open(path)?;
            f.seek(SeekFrom::Start(cut))?;
            Ok(read_ahead(f, opts, &mut second))
        });
        let mut head = file.take(cut);
        let first = parse_from(&mut parser, &mut head, 0, sink);
        // Join before returning any error: the thread borrows `second`.
        let ahead = worker.join().expect("vmmap second thread panicked");
        first.map(|n| (n, ahead, head.into_inner()))
    })?;
    let mut file = file;
    let mut info = SplitInfo { cut, first_lines, ..Default::default() };
    let mut resume = (cut, first_lines);
    if let Ok(ahead) = ahead {
        if ahead.lines > 0 && parser.block == Block::None && parser.region_pages == Some(false) {
            parser.absorb(ahead.parser, first_lines);
            sink.absorb(second, first_lines);
            info.second_lines = ahead.lines;
            info.kept = true;
            resume = (cut + ahead.bytes, first_lines + ahead.lines);
        }
    }
    file.seek(SeekFrom::Start(resume.0))?;
    parse_from(&mut parser, file, resume.1, sink)?;
    Ok((parser.finish(), info))
}

/// The first line start at or after `split` (after the line that holds
/// byte `split - 1`), when there is one inside the file and not too far.
fn cut_at(file: &mut File, split: u64, len: u64) -> std::io::Result<Option<u64>> {
    if split == 0 || split >= len {
        return Ok(None);
    }
    file.seek(SeekFrom::Start(split - 1))?;
    let mut buf = vec![0u8; 64 << 10];
    let mut at = split - 1;
    while at < len && at - (split - 1) < READ_BUFFER as u64 {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        if let Some(i) = memchr::memchr(b'\n', &buf[..n]) {
            let cut = at + i as u64 + 1;
            return Ok((cut < len).then_some(cut));
        }
        at += n as u64;
    }
    Ok(None)
}

/// Reads region lines (in a region list, sizes in bytes) until any other
/// line, a line without its newline, a line too long, or a read error.
fn read_ahead<R: Read, S: SplitSink>(reader: R, opts: ParseOptions, sink: &mut S) -> Ahead {
    let mut parser = Parser::new(opts);
    parser.region_pages = Some(false);
    let (mut lines, mut bytes) = (0usize, 0u64);
    let mut input = Lines::new(reader);
    // A read error, a line too long or one without its newline: the
    // sequential parse takes it from there.
    while let Ok(Some(Next::Line(line))) = input.next() {
        // The parser's hot path, with the state it has in a region list.
        let c = content(&line.text);
        if !line.ended || c.is_empty() || c.starts_with('=') || find_byte(c, b'[').is_none() {
            break;
        }
        let Ok(region) = parse_region_line(c) else { break };
        lines += 1;
        parser.doc.diagnostics.lines += 1;
        if let Some(Record::Region(r)) = parser.region(lines, c, region) {
            let flow = sink.region(lines, &r);
            debug_assert!(!flow.is_stop(), "a split sink takes every region");
        }
        bytes += line.bytes as u64;
    }
    Ahead { parser, lines, bytes }
}

impl Parser {
    /// Adds the counts of a parser that read the region lines following
    /// this one's, numbering them from 1 (line `line_offset + 1`).
    fn absorb(&mut self, later: Parser, line_offset: usize) {
        let (d, l) = (&mut self.doc.diagnostics, later.doc.diagnostics);
        d.lines += l.lines;
        d.unreadable += l.unreadable;
        d.damaged += l.damaged;
        append_samples(&mut d.unreadable_samples, l.unreadable_samples, line_offset);
        append_samples(&mut d.damaged_samples, l.damaged_samples, line_offset);
        self.doc.regions += later.doc.regions;
    }
}

fn append_samples(to: &mut Vec<Problem>, from: Vec<Problem>, line_offset: usize) {
    for mut p in from {
        if to.len() >= MAX_SAMPLES {
            break;
        }
        p.line += line_offset;
        to.push(p);
    }
}
