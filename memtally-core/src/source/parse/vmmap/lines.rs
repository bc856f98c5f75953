//! The lines of a `Read`, handed out in place from one fixed buffer (no
//! copy, no allocation per line): the sequential parse and the split
//! parse's second thread both read through it.
//!
//! Each line's UTF-8 is checked by simdutf8 (made for this: SIMD, and
//! faster than std's `from_utf8` on lines of this length; std's was 157
//! instructions of the ~2,950 a region line cost, docs/benchmarks.md,
//! vmmap). A check once a buffer, handing lines out unchecked, was
//! cheaper still (3%), but a parser may not skip the check (the layout
//! test). A line with an invalid byte is handed out with it
//! replaced, as before.

use std::borrow::Cow;
use std::io::{ErrorKind, Read};

use super::READ_BUFFER;

/// One line, without its line ending (`\n`, and any `\r` before it).
pub(crate) struct Line<'a> {
    /// Its text; invalid UTF-8 replaced.
    pub text: Cow<'a, str>,
    /// Bytes it took in the input, line ending included (the last line
    /// of an input may lack one).
    pub bytes: usize,
}

/// What comes next in the input.
pub(crate) enum Next<'a> {
    Line(Line<'a>),
    /// A line longer than the buffer: not vmmap output. The rest of it is
    /// skipped; the line after it comes next.
    TooLong,
}

/// A reader of lines of at most [`READ_BUFFER`] bytes.
pub(crate) struct Lines<R> {
    reader: R,
    buf: Vec<u8>,
    /// The bytes not handed out yet: `buf[start..end]`.
    start: usize,
    end: usize,
    eof: bool,
    /// Inside a line longer than the buffer.
    skipping: bool,
}

impl<R: Read> Lines<R> {
    pub(crate) fn new(reader: R) -> Lines<R> {
        Lines::with_buffer(reader, Vec::new())
    }

    /// Reads through `buf` (resized to [`READ_BUFFER`]), a buffer an
    /// earlier reader gave back with [`into_buffer`](Self::into_buffer):
    /// a parse in many parts touches its megabyte once, not once a part.
    pub(crate) fn with_buffer(reader: R, mut buf: Vec<u8>) -> Lines<R> {
        buf.resize(READ_BUFFER, 0);
        Lines { reader, buf, start: 0, end: 0, eof: false, skipping: false }
    }

    /// The buffer, for the next reader.
    pub(crate) fn into_buffer(self) -> Vec<u8> {
        self.buf
    }

    /// The next line; `Ok(None)` at the end of the input.
    pub(crate) fn next(&mut self) -> std::io::Result<Option<Next<'_>>> {
        loop {
            let line_end = match memchr::memchr(b'\n', &self.buf[self.start..self.end]) {
                Some(i) => Some(self.start + i),
                None if self.eof => (self.start < self.end).then_some(self.end),
                None => None,
            };
            if let Some(le) = line_end {
                let from = self.start;
                self.start = (le + 1).min(self.end);
                if std::mem::take(&mut self.skipping) {
                    continue;
                }
                let mut to = le;
                while to > from && matches!(self.buf[to - 1], b'\n' | b'\r') {
                    to -= 1;
                }
                let line = &self.buf[from..to];
                let text = match simdutf8::basic::from_utf8(line) {
                    Ok(t) => Cow::Borrowed(t),
                    Err(_) => String::from_utf8_lossy(line),
                };
                let bytes = (le + 1).min(self.end) - from;
                return Ok(Some(Next::Line(Line { text, bytes })));
            }
            if self.eof {
                return Ok(None);
            }
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            if self.end == self.buf.len() {
                self.end = 0;
                if !std::mem::replace(&mut self.skipping, true) {
                    return Ok(Some(Next::TooLong));
                }
            }
            match self.reader.read(&mut self.buf[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.end += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out `step` bytes a call, so that reads end
    /// inside characters and inside lines.
    struct Trickle<'a> {
        bytes: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.bytes.len());
            buf[..n].copy_from_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            Ok(n)
        }
    }

    fn texts(input: &[u8], step: usize) -> Vec<String> {
        let mut lines = Lines::new(Trickle { bytes: input, step });
        let mut out = Vec::new();
        while let Some(next) = lines.next().unwrap() {
            match next {
                Next::Line(line) => out.push(line.text.into_owned()),
                Next::TooLong => out.push("<too long>".into()),
            }
        }
        out
    }

    /// UTF-8 checked once a buffer gives each line as a check of its own
    /// would: valid lines as they are, a line with an invalid byte (or a
    /// character cut short) with it replaced, and the lines after it
    /// valid again, whatever the reads' sizes.
    #[test]
    fn lines_are_checked_as_one_line_at_a_time_would() {
        let input: Vec<u8> = [
            "a é 1\nü".as_bytes(),
            b"\xff b\r\nok ",
            "✓".as_bytes(),
            b"\n\xe2\x9c\nplain\n\n",
            "€ end".as_bytes(),
        ]
        .concat();
        let input = &input[..];
        let expected: Vec<String> = input
            .split(|&b| b == b'\n')
            .map(|l| String::from_utf8_lossy(l.strip_suffix(b"\r").unwrap_or(l)).into_owned())
            .collect();
        for step in [1, 2, 3, 5, 7, 64, READ_BUFFER] {
            assert_eq!(texts(input, step), expected, "{step} bytes a read");
        }
    }
}
