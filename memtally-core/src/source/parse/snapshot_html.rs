//! The snapshot a `memtally report` page carries: the page embeds the
//! snapshot JSON in one `<script type="application/json">` element, so the
//! page itself can be handed to `diff` and `report` again. This finds that
//! element and reads the JSON in it; nothing else of the page is parsed.

use crate::model::snapshot::Snapshot;
use crate::source::parse::ParseError;

/// The opening tag of the element the page carries its snapshot in; the
/// writer (the HTML printer) writes exactly this.
pub const OPEN: &str = r#"<script type="application/json" id="memtally-snapshot">"#;

/// Where the element ends. The writer escapes every `<` inside the JSON
/// (as `\u003c`, which JSON reads back as `<`), so the first `</script`
/// after [`OPEN`] is the element's own end.
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

/// The JSON between [`OPEN`] and its end, or what is wrong.
pub fn embedded(input: &[u8]) -> Result<&[u8], ParseError> {
    let open = OPEN.as_bytes();
    let at = find(input, open).ok_or_else(|| {
        ParseError::at(
            0,
            "an HTML page without an embedded memtally snapshot (not written by memtally report?)",
        )
    })?;
    let body = &input[at + open.len()..];
    let end = find(body, CLOSE).ok_or_else(|| {
        ParseError::at(0, "the embedded memtally snapshot has no end (cut short?)")
    })?;
    Ok(&body[..end])
}

/// The snapshot a report page carries.
pub fn parse(input: &[u8]) -> Result<Snapshot, ParseError> {
    let json = embedded(input)?;
    let line = 1 + input[..input.len() - json.len()].iter().filter(|&&b| b == b'\n').count();
    crate::source::parse::snapshot::parse(json)
        .map_err(|e| ParseError::at(line, format!("the embedded memtally snapshot: {}", e.message)))
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w.eq_ignore_ascii_case(needle))
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
        let page = format!(
            "<!doctype html><p>x</p>{OPEN}{{\"a\":\"\\u003c/script>\"}}</script><script>1</script>"
        );
        assert_eq!(embedded(page.as_bytes()).unwrap(), br#"{"a":"\u003c/script>"}"#);
    }

    #[test]
    fn a_page_without_one_or_cut_short_says_so() {
        assert!(embedded(b"<!doctype html><p>hi</p>").unwrap_err().message.contains("without"));
        let cut = format!("<!doctype html>{OPEN}{{\"memtally_snapshot\":1");
        assert!(embedded(cut.as_bytes()).unwrap_err().message.contains("no end"));
        let bad = format!("<!doctype html>\n{OPEN}{{]</script>");
        let e = parse(bad.as_bytes()).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("not valid JSON"), "{e:?}");
    }
}
