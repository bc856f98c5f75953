//! The snapshot a `memtally report` page carries: the page embeds the
//! snapshot JSON in one `<script type="application/json">` element, so the
//! page itself can be handed to `diff` and `report` again. This finds that
//! element and reads the JSON in it; nothing else of the page is parsed.

use std::io::BufRead;

use crate::model::snapshot::Snapshot;
use crate::model::{FAULTS_ELEMENT, SNAPSHOT_ELEMENT};
pub use crate::source::parse::snapshot::ReadError;
use crate::source::parse::snapshot::{self, Start};
use crate::source::parse::snapshot_feed::{self, FeedShape, Kept, LinesFeed};
use crate::source::parse::{snapshot_lines, ParseError};

/// Where the element ends. The writer escapes every `<` inside the JSON
/// (as `\u003c`, which JSON reads back as `<`), so the first `</script`
/// after [`SNAPSHOT_ELEMENT`] is the element's own end.
const CLOSE: &[u8] = b"</script";

/// Whether `input` looks like an HTML page (its first non-blank bytes are
/// `<!doctype` or `<html`), as opposed to JSON or vmmap text.
pub fn is_html(input: &[u8]) -> bool {
    let start: Vec<u8> = input
        .iter()
        .copied()
        .skip_while(u8::is_ascii_whitespace)
        .take(9)
        .map(|b| b.to_ascii_lowercase())
        .collect();
    start.starts_with(b"<!doctype") || start.starts_with(b"<html")
}

/// A page without the element.
fn without() -> ParseError {
    ParseError::at(
        0,
        "an HTML page without an embedded memtally snapshot (not written by memtally report?)",
    )
}

/// A page that ends inside the element.
fn no_end() -> ParseError {
    ParseError::at(0, "the embedded memtally snapshot has no end (cut short?)")
}

/// The snapshot a report page carries (see [`read`]).
pub fn parse(input: &[u8]) -> Result<Snapshot, ParseError> {
    read(input).map_err(|e| match e {
        ReadError::Parse(e) => e,
        ReadError::Io(e) => ParseError::at(0, e.to_string()),
    })
}

/// The snapshot a report page carries, read from a stream: the page up to
/// the element passed over, the JSON in it read by serde as it comes (a
/// snapshot object into its typed shape), nothing held whole. What it
/// reads, and says of a page it cannot, is what [`parse`] does.
pub fn read(r: impl BufRead) -> Result<Snapshot, ReadError> {
    let mut kept = Kept::default();
    let snap = read_feeding(r, &mut kept)?;
    Ok(kept.into_snapshot(snap))
}

/// [`read`], the regions handed to `feed` (the snapshot returned has none).
pub(crate) fn read_feeding(
    r: impl BufRead,
    feed: &mut impl LinesFeed,
) -> Result<Snapshot, ReadError> {
    with_element(r, |json, start| match start {
        Start::Lines => {
            snapshot_lines::read_feeding(json, feed, false).map_err(snapshot::lines_error)
        }
        Start::Document => snapshot_feed::read(json, FeedShape::Snapshot, feed)
            .map_err(|e| ParseError::at(0, format!("not a valid snapshot: {e}")))
            .and_then(|snap| {
                snapshot::check_document(snap.memtally_snapshot)
                    .map_err(|m| ParseError::at(0, m))?;
                Ok(snap)
            }),
        // Not memtally's: the element, held, read as JSON.
        Start::Unknown(_) | Start::Other => {
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(json, &mut bytes)
                .map_err(|e| ParseError::at(0, e.to_string()))?;
            snapshot::parse_feeding(&bytes, feed)
        }
    })
}

/// What `f` reads of the JSON a page carries (handed as a stream, and
/// how it starts), the page read from `r` up to the element's end: the
/// errors as [`read`] words them.
pub(crate) fn with_element<T, R: BufRead>(
    r: R,
    f: impl FnOnce(&mut dyn BufRead, Start) -> Result<T, ParseError>,
) -> Result<T, ReadError> {
    let found = element(r, SNAPSHOT_ELEMENT, |json| {
        let head = json.fill_buf().map_err(ReadError::Io)?;
        let start = crate::source::parse::snapshot::start_of(head);
        Ok(f(json, start))
    });
    let Some((line, read, cut)) = found.map_err(ReadError::Io)? else {
        return Err(ReadError::Parse(without()));
    };
    match (cut, read?) {
        (true, _) => Err(ReadError::Parse(no_end())),
        (false, read) => read.map_err(|e| {
            let message = format!("the embedded memtally snapshot: {}", e.message);
            ReadError::Parse(ParseError::at(line, message))
        }),
    }
}

/// What `f` reads of the element opened by `open` (the JSON handed as a
/// stream), with the line the tag is on and whether the page ended inside
/// the element; `None` where the page has none.
fn element<T, R: BufRead>(
    mut r: R,
    open: &str,
    f: impl FnOnce(&mut dyn BufRead) -> T,
) -> std::io::Result<Option<(usize, T, bool)>> {
    let Some(line) = skip_to(&mut r, open)? else { return Ok(None) };
    let mut json = std::io::BufReader::with_capacity(64 << 10, Element { r, state: State::Body });
    let read = f(&mut json);
    // A page cut before the element's end says so, whatever the JSON read
    // as (what is left of the element is read to find its end).
    let _ = std::io::copy(&mut json, &mut std::io::sink());
    Ok(Some((line, read, json.get_ref().state == State::Cut)))
}

/// Reads `r` up to the end of the tag `open`: the line it is on, or
/// `None` where the page has none. Its first byte, `<`, is in it nowhere
/// else: a mismatch starts the match again.
fn skip_to(r: &mut impl BufRead, open: &str) -> std::io::Result<Option<usize>> {
    let open = open.as_bytes();
    let (mut matched, mut newlines) = (0, 0);
    while matched < open.len() {
        let chunk = r.fill_buf()?;
        if chunk.is_empty() {
            return Ok(None);
        }
        let mut used = 0;
        for &b in chunk {
            used += 1;
            newlines += usize::from(b == b'\n');
            matched = match b.eq_ignore_ascii_case(&open[matched]) {
                true => matched + 1,
                false => usize::from(b == b'<'),
            };
            if matched == open.len() {
                break;
            }
        }
        r.consume(used);
    }
    Ok(Some(1 + newlines))
}

/// The JSON document in the element [`FAULTS_ELEMENT`] of a report page,
/// read as it comes; `None` for a page without the element.
pub fn read_faults<T: serde::de::DeserializeOwned>(
    r: impl BufRead,
) -> Result<Option<T>, ReadError> {
    let found = element(r, FAULTS_ELEMENT, |json| serde_json::from_reader::<_, T>(json));
    let Some((line, read, cut)) = found.map_err(ReadError::Io)? else { return Ok(None) };
    let at = |message: String| ReadError::Parse(ParseError::at(line, message));
    match (cut, read) {
        (true, _) => Err(at("the embedded page-fault recording has no end (cut short?)".into())),
        (false, Ok(t)) => Ok(Some(t)),
        (false, Err(e)) => Err(at(format!("the embedded page-fault recording: {e}"))),
    }
}

/// Where [`Element`] is in the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Inside the element.
    Body,
    /// Past its end (`</script`).
    Closed,
    /// The page ended inside it.
    Cut,
    /// A `<` inside it that does not end it.
    Stray,
}

/// The bytes of the element a page carries its snapshot in, read from
/// the page: up to the first `<`, which the writer never leaves in the
/// JSON, and which must begin [`CLOSE`].
struct Element<R> {
    r: R,
    state: State,
}

impl<R: BufRead> std::io::Read for Element<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.state != State::Body {
            return Ok(0);
        }
        let chunk = self.r.fill_buf()?;
        if chunk.is_empty() {
            self.state = State::Cut;
            return Ok(0);
        }
        let body = match memchr::memchr(b'<', chunk) {
            Some(0) => {
                // The end: `</script` (read a byte at a time: it may lie
                // across the reader's buffer).
                let mut tag = [0u8; 8];
                let mut n = 0;
                while n < CLOSE.len() {
                    let chunk = self.r.fill_buf()?;
                    let Some(&b) = chunk.first() else { break };
                    if !b.eq_ignore_ascii_case(&CLOSE[n]) {
                        break;
                    }
                    tag[n] = b;
                    n += 1;
                    self.r.consume(1);
                }
                self.state = match n == CLOSE.len() {
                    true => State::Closed,
                    // A `<` that is not the end: JSON never has one.
                    false => State::Stray,
                };
                return match self.state {
                    State::Closed => Ok(0),
                    _ => Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        "a `<` inside the embedded snapshot that does not end it",
                    )),
                };
            }
            Some(i) => i,
            None => chunk.len(),
        };
        let n = body.min(buf.len());
        buf[..n].copy_from_slice(&chunk[..n]);
        self.r.consume(n);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_is_told_from_json_and_text() {
        assert!(is_html(b"\n  <!DOCTYPE html><html>"));
        assert!(is_html(b"<html lang=en>"));
        assert!(!is_html(b"{\"memtally_snapshot\":1}"));
        assert!(!is_html(b"Process:  Foo [12]"));
    }

    #[test]
    fn the_element_ends_at_its_own_close_tag() {
        // The JSON's `<` is escaped; the first `</script` ends it, in any case,
        // and a page read a byte at a time reads the same.
        let page = format!(
            "<!doctype html><p>x</p>{SNAPSHOT_ELEMENT}{{\"memtally_snapshot\":1,\"kind\":\"li\\u003cnux\"}}</SCRIPT><script>1</script>"
        );
        let e = parse(page.as_bytes()).unwrap_err();
        assert!(e.message.contains("unknown variant `li<nux`"), "{e:?}");
        let bytewise = std::io::BufReader::with_capacity(1, page.as_bytes());
        let ReadError::Parse(again) = read(bytewise).unwrap_err() else { panic!("a parse error") };
        assert_eq!(again, e);
    }

    #[test]
    fn the_faults_element_is_read_where_present() {
        let page = format!(
            "<!doctype html>{SNAPSHOT_ELEMENT}{{\"a\":1}}</script>\n{FAULTS_ELEMENT}{{\"f\":\"x\\u003cy\"}}</script>"
        );
        let got: Option<serde_json::Value> = read_faults(page.as_bytes()).unwrap();
        assert_eq!(got, Some(serde_json::json!({"f": "x<y"})));
        let none: Option<serde_json::Value> =
            read_faults(format!("<!doctype html>{SNAPSHOT_ELEMENT}{{}}</script>").as_bytes())
                .unwrap();
        assert_eq!(none, None);
        let cut = format!("<!doctype html>{FAULTS_ELEMENT}{{\"f\":");
        let Err(ReadError::Parse(e)) = read_faults::<serde_json::Value>(cut.as_bytes()) else {
            panic!("a cut page is an error")
        };
        assert!(e.message.contains("no end"), "{e:?}");
    }

    #[test]
    fn a_page_without_one_or_cut_short_says_so() {
        assert!(parse(b"<!doctype html><p>hi</p>").unwrap_err().message.contains("without"));
        let cut = format!("<!doctype html>{SNAPSHOT_ELEMENT}{{\"memtally_snapshot\":1");
        assert!(parse(cut.as_bytes()).unwrap_err().message.contains("no end"));
        let stray =
            format!("<!doctype html>{SNAPSHOT_ELEMENT}{{\"memtally_snapshot\":1<b>}}</script>");
        assert!(parse(stray.as_bytes()).unwrap_err().message.contains("does not end it"));
        let bad = format!("<!doctype html>\n{SNAPSHOT_ELEMENT}{{]</script>");
        let e = parse(bad.as_bytes()).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("not valid JSON"), "{e:?}");
    }
}
