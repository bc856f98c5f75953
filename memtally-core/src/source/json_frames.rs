//! Cuts a JSON document read from a stream into the raw bytes of its
//! values, one at a time, with the byte offset where each begins.
//!
//! Why: serde_json parses a byte slice two to three times faster than an
//! `io::Read` stream (it borrows strings and skips bytes in bulk), but a
//! snapshot must never be held whole (`diff` of two large files stays
//! under one file's size in memory). So the structure around the regions
//! (the document's and each process's keys) is walked here, and each
//! region, one value of a few hundred bytes, is handed to serde_json as a
//! slice. The offsets let a reader come back for one value later without
//! reading the file again.
//!
//! This is a framer, not a validator: it finds where a value ends (strings
//! and their escapes, nesting); whoever parses the bytes checks them.

use std::io::{self, BufRead};

/// What went wrong at a byte offset of the document.
#[derive(Debug)]
pub enum FrameError {
    /// The stream failed.
    Io(io::Error),
    /// Not JSON where byte `at` needed `what`.
    Syntax { at: u64, what: &'static str },
    /// JSON, but at byte `at` a value of another kind than `what`.
    Shape { at: u64, what: &'static str },
    /// The value at byte `at` did not parse as what the reader wanted.
    Value { at: u64, error: serde_json::Error },
}

impl From<io::Error> for FrameError {
    fn from(e: io::Error) -> FrameError {
        FrameError::Io(e)
    }
}

/// A document's values as raw bytes (see the module's notes).
pub struct Frames<R> {
    r: R,
    /// Bytes consumed so far: the offset of the next byte.
    pos: u64,
    /// The last value's bytes (reused: no allocation per value).
    buf: Vec<u8>,
}

impl<R: BufRead> Frames<R> {
    /// Frames `r`, whose first byte is at offset `pos` of the document.
    pub fn new(r: R, pos: u64) -> Frames<R> {
        Frames { r, pos, buf: Vec::with_capacity(4096) }
    }

    /// The offset of the next byte not yet consumed.
    pub fn pos(&self) -> u64 {
        self.pos
    }

    fn syntax(&self, what: &'static str) -> FrameError {
        FrameError::Syntax { at: self.pos, what }
    }

    /// The next byte that is not JSON whitespace, not consumed; `None` at
    /// the end of the stream.
    pub fn peek(&mut self) -> Result<Option<u8>, FrameError> {
        loop {
            let chunk = self.r.fill_buf()?;
            if chunk.is_empty() {
                return Ok(None);
            }
            let blank = chunk.iter().take_while(|b| matches!(b, b' ' | b'\n' | b'\r' | b'\t'));
            let n = blank.count();
            let found = chunk.get(n).copied();
            self.r.consume(n);
            self.pos += n as u64;
            if found.is_some() {
                return Ok(found);
            }
        }
    }

    /// The bytes buffered from the next one on (at least one unless the
    /// stream ended), to be read in place and then [`Frames::consume`]d.
    pub fn buffered(&mut self) -> Result<&[u8], FrameError> {
        Ok(self.r.fill_buf()?)
    }

    /// Consumes `n` bytes of what [`Frames::buffered`] returned.
    pub fn consume(&mut self, n: usize) {
        self.r.consume(n);
        self.pos += n as u64;
    }

    /// Consumes the next non-blank byte, which must be `b`.
    pub fn expect(&mut self, b: u8, what: &'static str) -> Result<(), FrameError> {
        match self.peek()? {
            Some(c) if c == b => {
                self.r.consume(1);
                self.pos += 1;
                Ok(())
            }
            _ => Err(self.syntax(what)),
        }
    }

    /// After a member of an object or array: `true` when another follows
    /// (a `,` consumed), `false` at its end (`close` consumed).
    pub fn more(&mut self, close: u8, what: &'static str) -> Result<bool, FrameError> {
        match self.peek()? {
            Some(b',') => {
                self.r.consume(1);
                self.pos += 1;
                Ok(true)
            }
            Some(c) if c == close => {
                self.r.consume(1);
                self.pos += 1;
                Ok(false)
            }
            _ => Err(self.syntax(what)),
        }
    }

    /// Consumes `open` and says whether the object or array it opens is
    /// empty (its `close` consumed too).
    pub fn open(&mut self, open: u8, close: u8, what: &'static str) -> Result<bool, FrameError> {
        match self.peek()? {
            Some(c) if c == open => {}
            Some(b'{' | b'[' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n') => {
                return Err(FrameError::Shape { at: self.pos, what });
            }
            _ => return Err(self.syntax(what)),
        }
        self.r.consume(1);
        self.pos += 1;
        if self.peek()? == Some(close) {
            self.r.consume(1);
            self.pos += 1;
            return Ok(true);
        }
        Ok(false)
    }

    /// An object's next key and its `:`.
    pub fn key(&mut self) -> Result<String, FrameError> {
        if self.peek()? != Some(b'"') {
            return Err(self.syntax("a key (a string)"));
        }
        let (at, bytes) = self.value()?;
        let key = serde_json::from_slice(bytes).map_err(|error| FrameError::Value { at, error })?;
        self.expect(b':', "':' after a key")?;
        Ok(key)
    }

    /// The next value's raw bytes and the offset where they begin.
    pub fn value(&mut self) -> Result<(u64, &[u8]), FrameError> {
        let first = self.peek()?.ok_or_else(|| self.syntax("a value (the file ends)"))?;
        let at = self.pos;
        self.buf.clear();
        let mut scan = Scan { depth: 0, in_string: false, escaped: false };
        let scalar = !matches!(first, b'{' | b'[' | b'"');
        loop {
            let chunk = self.r.fill_buf()?;
            if chunk.is_empty() {
                if scalar && !self.buf.is_empty() {
                    break;
                }
                return Err(self.syntax("the rest of a value (the file ends)"));
            }
            let (n, done) =
                if scalar { scan.scalar(chunk, self.buf.is_empty()) } else { scan.nested(chunk) };
            self.buf.extend_from_slice(&chunk[..n]);
            self.r.consume(n);
            self.pos += n as u64;
            if done {
                break;
            }
        }
        Ok((at, &self.buf))
    }
}

impl<S: io::Read + io::Seek> Frames<io::BufReader<S>> {
    /// Goes on from byte `pos` of the document: within the buffer when it
    /// holds it, else one seek.
    pub fn skip_to(&mut self, pos: u64) -> io::Result<()> {
        let by =
            i64::try_from(pos).unwrap_or(i64::MAX) - i64::try_from(self.pos).unwrap_or(i64::MAX);
        self.r.seek_relative(by)?;
        self.pos = pos;
        Ok(())
    }
}

/// Where a value's scan stands between two chunks of the stream.
struct Scan {
    depth: u32,
    in_string: bool,
    escaped: bool,
}

impl Scan {
    /// How many bytes of `chunk` belong to the string, object or array
    /// being scanned, and whether it ends there.
    fn nested(&mut self, chunk: &[u8]) -> (usize, bool) {
        let mut i = 0;
        while i < chunk.len() {
            if self.in_string {
                if self.escaped {
                    // The escaped byte (maybe a quote), in this chunk or
                    // the first of the next.
                    self.escaped = false;
                    i += 1;
                    continue;
                }
                // Bulk skip to the next quote or backslash: strings are
                // most of a snapshot's bytes.
                let Some(k) = memchr::memchr2(b'"', b'\\', &chunk[i..]) else {
                    return (chunk.len(), false);
                };
                i += k;
                if chunk[i] == b'\\' {
                    self.escaped = true;
                } else {
                    self.in_string = false;
                    if self.depth == 0 {
                        return (i + 1, true);
                    }
                }
                i += 1;
                continue;
            }
            match chunk[i] {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 {
                        return (i + 1, true);
                    }
                }
                _ => {}
            }
            i += 1;
        }
        (chunk.len(), false)
    }

    /// How many bytes of `chunk` belong to a number, `true`, `false` or
    /// `null` (up to the next delimiter), and whether it ends there.
    fn scalar(&mut self, chunk: &[u8], first: bool) -> (usize, bool) {
        let end = chunk.iter().position(|b| {
            matches!(
                b,
                b',' | b'}' | b']' | b':' | b' ' | b'\n' | b'\r' | b'\t' | b'"' | b'{' | b'['
            )
        });
        match end {
            // A delimiter first: at least one byte, so a stray one is
            // handed to the parser to be refused.
            Some(0) if first => (1, true),
            Some(n) => (n, true),
            None => (chunk.len(), false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every top-level array element's bytes and offset, read through a
    /// reader that hands out `step` bytes at a time (values split across
    /// chunks at every place).
    fn elements(doc: &[u8], step: usize) -> Vec<(u64, String)> {
        let r = io::BufReader::with_capacity(step, doc);
        let mut f = Frames::new(r, 0);
        let mut out = Vec::new();
        if f.open(b'[', b']', "an array").unwrap() {
            return out;
        }
        loop {
            let (at, v) = f.value().unwrap();
            out.push((at, String::from_utf8(v.to_vec()).unwrap()));
            if !f.more(b']', "',' or ']'").unwrap() {
                break;
            }
        }
        assert_eq!(f.peek().unwrap(), None);
        out
    }

    #[test]
    fn values_are_cut_where_they_end_whatever_the_chunks() {
        let doc = br#" [ {"a":"x\"}]","b":[1,{"c":"\\"}]}, "s\\\"", 12.5e3 ,null,true, [] ,{}]"#;
        let want = [
            r#"{"a":"x\"}]","b":[1,{"c":"\\"}]}"#,
            r#""s\\\"""#,
            "12.5e3",
            "null",
            "true",
            "[]",
            "{}",
        ];
        for step in 1..=doc.len() {
            let got = elements(doc, step);
            let texts: Vec<&str> = got.iter().map(|(_, s)| s.as_str()).collect();
            assert_eq!(texts, want, "chunks of {step}");
            for (at, s) in &got {
                assert_eq!(&doc[*at as usize..*at as usize + s.len()], s.as_bytes());
            }
        }
    }

    #[test]
    fn a_cut_document_is_an_error_not_a_value() {
        for doc in [&br#"[{"a":1"#[..], br#"["abc"#, br#"["a\"#, br#"[1,"#, b"["] {
            let mut f = Frames::new(io::BufReader::with_capacity(2, doc), 0);
            let r = (|| {
                f.expect(b'[', "[")?;
                loop {
                    f.value()?;
                    if !f.more(b']', "',' or ']'")? {
                        return Ok(());
                    }
                }
            })();
            assert!(
                matches!(r, Err(FrameError::Syntax { .. })),
                "{}",
                String::from_utf8_lossy(doc)
            );
        }
    }

    #[test]
    fn keys_are_unescaped() {
        let doc = br#"{"a\u00e9\"b" : 1}"#;
        let mut f = Frames::new(&doc[..], 0);
        f.expect(b'{', "{").unwrap();
        assert_eq!(f.key().unwrap(), "a\u{e9}\"b");
        assert_eq!(f.value().unwrap().1, b"1");
        assert!(!f.more(b'}', "}").unwrap());
    }
}
