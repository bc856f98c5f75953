//! The lines of a `Read`, handed out in place from one fixed buffer (no
//! copy, no allocation per line), so memory stays flat however long the
//! input. A line with an invalid UTF-8 byte is handed out with it replaced.

use std::borrow::Cow;
use std::io::{ErrorKind, Read};

use super::READ_BUFFER;

/// What comes next in the input.
pub(crate) enum Next<'a> {
    /// One line, without its line ending (`\n`, and any `\r` before
    /// it); invalid UTF-8 replaced.
    Line(Cow<'a, str>),
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
        Lines { reader, buf: vec![0; READ_BUFFER], start: 0, end: 0, eof: false, skipping: false }
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
                // std's check first: the lossy reader is slower on valid text.
                let text = match std::str::from_utf8(line) {
                    Ok(t) => Cow::Borrowed(t),
                    Err(_) => String::from_utf8_lossy(line),
                };
                return Ok(Some(Next::Line(text)));
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
                Next::Line(text) => out.push(text.into_owned()),
                Next::TooLong => out.push("<too long>".into()),
            }
        }
        out
    }

    /// Each line as its own check would give it: valid lines as they
    /// are, a line with an invalid byte (or a character cut short) with
    /// it replaced, and the lines after it valid again, whatever the
    /// reads' sizes.
    #[test]
    fn lines_are_checked_one_at_a_time_whatever_the_reads() {
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
