//! A regular file parsed in parts on several threads, with the sequential
//! parse's result.
//!
//! The file is cut at line starts into parts (about [`PART_BYTES`] each).
//! Worker threads take the parts in turn and read each on the guess that
//! it starts inside a region list whose sizes are bytes, the state the
//! parser is in for nearly all of a large report
//! (`Parser::list_line` in source::parse::vmmap): a part's
//! reader goes on through regions, blank lines, unreadable lines and the
//! like, and stops at the first line that would change more than
//! counters (a table, a section, a header fact) or at the part's end.
//!
//! This thread takes the parts back in order and checks each guess: when
//! the parse so far ends in that state, the part's counts and sink are
//! appended (lines renumbered) and the rest of the part, from the line its
//! reader stopped at, is parsed here; otherwise the whole part is. So a
//! line the guess cannot read costs the rest of one part, never the rest
//! of the file, and the [`Document`] and sink are what
//! [`parse`](crate::source::parse::vmmap::parse) would have given.
//! Readers run at most a few parts ahead of the merge, so memory stays
//! bounded whatever the file's size.

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::{Condvar, Mutex, MutexGuard};

use crate::model::vmmap::{Document, SplitSink, VRegionSink};
use crate::source::parse::vmmap::parser::Parser;
use crate::source::parse::vmmap::{parse_lines, Lines, Next, ParseOptions, READ_BUFFER};

/// Files smaller than this are parsed on one thread.
pub const MIN_SPLIT_BYTES: u64 = 8 << 20;

/// About the size of a part: small enough that the parts in flight stay a
/// few megabytes, large enough that each costs little to hand over.
pub const PART_BYTES: u64 = 512 << 10;

/// How a parse in parts went.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SplitInfo {
    /// Parts the file was cut into (0: parsed on this thread alone).
    pub parts: usize,
    /// Parts whose reader's guess was right and whose lines were kept.
    pub kept: usize,
    /// Lines read by the parts' readers and kept.
    pub lines_kept: usize,
}

/// The cut points at about every [`PART_BYTES`] of a file `len` bytes long.
pub fn part_cuts(len: u64) -> Vec<u64> {
    (1..).map(|k| k * PART_BYTES).take_while(|&c| c < len).collect()
}

/// What a part's reader read.
struct Part<P> {
    parser: Parser,
    sink: P,
    /// Lines read, and the bytes they took from the part's start.
    lines: usize,
    bytes: u64,
}

/// What the threads share: the next part to read, the parts read and not
/// yet merged, and what can be reused.
struct Shared<P> {
    next: usize,
    merged: usize,
    done: Vec<Option<Part<P>>>,
    spare_sinks: Vec<P>,
    spare_buffers: Vec<Vec<u8>>,
    /// The merge is over (finished, stopped or failed): readers quit.
    over: bool,
    /// A reader panicked.
    failed: bool,
}

/// Parses the file at `path` as [`parse`](crate::source::parse::vmmap::parse)
/// would, regions to `sink`, cut at the first line start at or after each
/// of `cuts`, the parts read on `threads` threads into sinks made by
/// `fresh` (or reused once absorbed). No cut inside the file, or fewer
/// than 1 thread, parses on this thread only.
pub fn parse_file_parts<S, P, F>(
    path: &Path,
    opts: ParseOptions,
    cuts: &[u64],
    threads: usize,
    sink: &mut S,
    fresh: F,
) -> io::Result<(Document, SplitInfo)>
where
    S: SplitSink<P>,
    P: VRegionSink + Send,
    F: Fn() -> P + Sync,
{
    let file = File::open(path)?;
    let len = file.metadata()?.len();
    let mut starts = vec![0];
    for &c in cuts {
        if let Some(s) = line_start_at(&file, c, len)? {
            if s > *starts.last().unwrap_or(&0) {
                starts.push(s);
            }
        }
    }
    starts.push(len);
    let mut parser = Parser::new(opts.clone());
    let n = starts.len() - 1;
    if n < 2 || threads == 0 {
        let mut lines = Lines::new(At { file: &file, pos: 0, end: len });
        parse_lines(&mut parser, &mut lines, 0, sink)?;
        return Ok((parser.finish(), SplitInfo::default()));
    }
    let shared = Mutex::new(Shared {
        next: 0,
        merged: 0,
        done: (0..n).map(|_| None).collect(),
        spare_sinks: Vec::new(),
        spare_buffers: Vec::new(),
        over: false,
        failed: false,
    });
    let wake = Condvar::new();
    // Parts read and not merged yet, at most: what bounds the memory.
    let ahead = threads + 1;
    let mut info = SplitInfo { parts: n, ..Default::default() };
    let merged = std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let guard = FailGuard { shared: &shared, wake: &wake };
                reader(&file, &starts, &opts, &shared, &wake, ahead, &fresh);
                std::mem::forget(guard);
            });
        }
        let merged = merge(&file, &starts, &mut parser, sink, &shared, &wake, &mut info);
        lock(&shared).over = true;
        wake.notify_all();
        merged
    });
    merged?;
    Ok((parser.finish(), info))
}

/// Takes the parts back in order: each one's reader's lines when the
/// guess holds, then the rest of the part on this thread.
fn merge<S: SplitSink<P>, P>(
    file: &File,
    starts: &[u64],
    parser: &mut Parser,
    sink: &mut S,
    shared: &Mutex<Shared<P>>,
    wake: &Condvar,
    info: &mut SplitInfo,
) -> io::Result<()> {
    let mut buffer = Vec::new();
    let mut line_no = 0;
    for (i, w) in starts.windows(2).enumerate() {
        let mut part = {
            let mut g = lock(shared);
            loop {
                if let Some(p) = g.done[i].take() {
                    g.merged = i + 1;
                    break p;
                }
                if g.failed {
                    return Err(io::Error::other("a vmmap part reader failed"));
                }
                g = wake.wait(g).unwrap_or_else(|e| e.into_inner());
            }
        };
        wake.notify_all();
        let mut resume = w[0];
        if part.lines > 0 && parser.is_in_list() {
            parser.absorb(part.parser, line_no);
            let flow = sink.absorb(&mut part.sink, line_no);
            lock(shared).spare_sinks.push(part.sink);
            info.kept += 1;
            info.lines_kept += part.lines;
            line_no += part.lines;
            resume += part.bytes;
            if flow.is_stop() {
                return Ok(());
            }
        }
        if resume < w[1] {
            let mut lines = Lines::with_buffer(
                At { file, pos: resume, end: w[1] },
                std::mem::take(&mut buffer),
            );
            let (n, stopped) = parse_lines(parser, &mut lines, line_no, sink)?;
            buffer = lines.into_buffer();
            line_no = n;
            if stopped {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// A reader thread: the next part not yet taken, while the merge is no
/// more than `ahead` parts behind.
fn reader<P: VRegionSink, F: Fn() -> P>(
    file: &File,
    starts: &[u64],
    opts: &ParseOptions,
    shared: &Mutex<Shared<P>>,
    wake: &Condvar,
    ahead: usize,
    fresh: &F,
) {
    loop {
        let (i, sink, buffer) = {
            let mut g = lock(shared);
            loop {
                if g.over || g.next + 1 >= starts.len() {
                    return;
                }
                if g.next < g.merged + ahead {
                    break;
                }
                g = wake.wait(g).unwrap_or_else(|e| e.into_inner());
            }
            let i = g.next;
            g.next += 1;
            let sink = g.spare_sinks.pop().unwrap_or_else(fresh);
            (i, sink, g.spare_buffers.pop().unwrap_or_default())
        };
        let at = At { file, pos: starts[i], end: starts[i + 1] };
        let (part, buffer) = read_part(at, opts.clone(), sink, buffer);
        let mut g = lock(shared);
        g.done[i] = Some(part);
        g.spare_buffers.push(buffer);
        drop(g);
        wake.notify_all();
    }
}

/// Reads a part on the guess, until a line the guess cannot read, a line
/// too long, a read error (the merge meets it again) or the part's end.
fn read_part<P: VRegionSink>(
    at: At<'_>,
    opts: ParseOptions,
    mut sink: P,
    buffer: Vec<u8>,
) -> (Part<P>, Vec<u8>) {
    let mut parser = Parser::in_list(opts);
    let (mut lines, mut bytes) = (0usize, 0u64);
    let mut input = Lines::with_buffer(at, buffer);
    while let Ok(Some(Next::Line(line))) = input.next() {
        let Ok(record) = parser.list_line(lines + 1, &line.text) else { break };
        lines += 1;
        let flow = sink.line(lines, &line.text, record.as_ref());
        debug_assert!(!flow.is_stop(), "a part's sink takes every region");
        bytes += line.bytes as u64;
    }
    (Part { parser, sink, lines, bytes }, input.into_buffer())
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Tells the merge that a reader panicked (it would wait for its part).
struct FailGuard<'a, P> {
    shared: &'a Mutex<Shared<P>>,
    wake: &'a Condvar,
}

impl<P> Drop for FailGuard<'_, P> {
    fn drop(&mut self) {
        lock(self.shared).failed = true;
        self.wake.notify_all();
    }
}

/// Bytes `pos..end` of a file, read at their offsets (the threads share
/// one open file).
struct At<'a> {
    file: &'a File,
    pos: u64,
    end: u64,
}

impl Read for At<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let want = (buf.len() as u64).min(self.end - self.pos) as usize;
        if want == 0 {
            return Ok(0);
        }
        let n = self.file.read_at(&mut buf[..want], self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

/// The first line start at or after `at` (after the line that holds byte
/// `at - 1`), when there is one inside the file within a line's longest.
fn line_start_at(file: &File, at: u64, len: u64) -> io::Result<Option<u64>> {
    if at == 0 || at >= len {
        return Ok(None);
    }
    let mut buf = vec![0u8; 4096];
    let mut pos = at - 1;
    while pos < len && pos - (at - 1) < READ_BUFFER as u64 {
        let n = file.read_at(&mut buf, pos)?;
        if n == 0 {
            break;
        }
        if let Some(i) = memchr::memchr(b'\n', &buf[..n]) {
            let start = pos + i as u64 + 1;
            return Ok((start < len).then_some(start));
        }
        pos += n as u64;
    }
    Ok(None)
}
