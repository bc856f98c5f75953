//! The one SVG writer of memtally's pictures: `plot`'s charts and the
//! report page's waterfall, treemap and small multiples. Escaping,
//! numbers and the elements, written by hand: a few kinds of element
//! with presentation attributes (no `style`, no `opacity`), which every
//! renderer (browsers, ImageMagick, rsvg) draws alike.
//!
//! Text is set in the viewer's own sans-serif font: no font is embedded,
//! and no layout measures text. Labels are aligned with `text-anchor`
//! (right-aligned against an axis, centred under a tick) and cut to a
//! number of characters where they could run into something: at 13 px an
//! average sans-serif character is about 7 px wide (0.55 em), which is the
//! estimate the cuts are made with.

use std::fmt::Write as _;

/// Text for XML (an SVG element, an HTML page): `&`, `<`, `>` and quotes
/// escaped, and what a text view escapes (control characters, line and
/// paragraph separators, direction marks:
/// [`escape_controls`](crate::render::table::escape_controls)) as it
/// escapes them, so a name shows the same in a picture as in `top`.
pub fn esc(s: &str) -> String {
    xml(&crate::render::table::escape_controls(s.to_string()))
}

/// `&`, `<`, `>` and quotes as XML entities, nothing else changed (data
/// carried whole, as the JSON of a chart's `<desc>`).
pub fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A coordinate: at most two decimals, none for a whole number (`12`,
/// `12.5`, `12.33`), never `-0`.
pub fn num(v: f64) -> String {
    let v = if v.is_finite() { (v * 100.0).round() / 100.0 } else { 0.0 };
    if v == 0.0 {
        return "0".into();
    }
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// How a shape is painted: its fill (a colour or `none`), its outline.
#[derive(Debug, Clone, Copy)]
pub struct Paint<'a> {
    pub fill: &'a str,
    /// Colour and width, pixels.
    pub stroke: Option<(&'a str, f64)>,
    /// `stroke-dasharray`: dash and gap, pixels.
    pub dash: Option<(f64, f64)>,
}

impl<'a> Paint<'a> {
    /// Filled, no outline.
    pub fn fill(colour: &'a str) -> Paint<'a> {
        Paint { fill: colour, stroke: None, dash: None }
    }

    /// A line (or an outline) `width` pixels wide, nothing filled.
    pub fn stroke(colour: &'a str, width: f64) -> Paint<'a> {
        Paint { fill: "none", stroke: Some((colour, width)), dash: None }
    }

    /// The line drawn in dashes `dash` long, `gap` apart.
    pub fn dashed(self, dash: f64, gap: f64) -> Paint<'a> {
        Paint { dash: Some((dash, gap)), ..self }
    }

    fn write(&self, out: &mut String) {
        let _ = write!(out, r#" fill="{}""#, self.fill);
        match self.stroke {
            Some((colour, width)) => {
                let _ = write!(out, r#" stroke="{colour}" stroke-width="{}""#, num(width));
            }
            None => out.push_str(r#" stroke="none""#),
        }
        if let Some((dash, gap)) = self.dash {
            let _ = write!(out, r#" stroke-dasharray="{} {}""#, num(dash), num(gap));
        }
    }
}

/// Where a text sits against its point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    /// Starts at the point, centred on it vertically (a legend's entry).
    Start,
    /// Centred on the point across, its top at it (a tick's value under
    /// an axis).
    Below,
    /// Centred on the point across, its baseline on it (a title).
    Middle,
    /// Ends at the point, centred on it vertically (a label left of an axis).
    End,
    /// Turned a quarter left, centred on the point (a vertical axis' name).
    Up,
}

/// A text of `size` pixels placed by its anchor.
#[derive(Debug, Clone, Copy)]
pub struct Text {
    pub size: f64,
    pub anchor: Anchor,
}

/// An SVG document being written: `<svg>`, elements, [`Svg::finish`].
#[derive(Debug)]
pub struct Svg {
    out: String,
    /// What follows each element: a line break in a chart's file, nothing
    /// inside a page.
    sep: &'static str,
}

impl Svg {
    /// A drawing `width` × `height` pixels, with its `<title>` and the
    /// data it draws in its `<desc>` (JSON), so it is checkable and
    /// accessible, not just pixels.
    pub fn new(width: f64, height: f64, title: &str, desc: &str) -> Svg {
        let (w, h) = (num(width), num(height));
        let mut out = String::with_capacity(16 << 10);
        let _ = write!(
            out,
            "<svg width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" xmlns=\"http://www.w3.org/2000/svg\">\n<title>{}</title>\n<desc>{}</desc>\n",
            esc(title),
            xml(desc)
        );
        Svg { out, sep: "\n" }
    }

    /// A small picture with neither title nor data (a report's small
    /// multiple, whose caption is the page's).
    pub fn bare(width: f64, height: f64) -> Svg {
        let (w, h) = (num(width), num(height));
        Svg {
            out: format!(
                r#"<svg viewBox="0 0 {w} {h}" width="{w}" height="{h}" xmlns="http://www.w3.org/2000/svg">"#
            ),
            sep: "",
        }
    }

    /// A rectangle from (x, y), `w` × `h`.
    pub fn rect(&mut self, x: f64, y: f64, w: f64, h: f64, paint: Paint) {
        let _ = write!(
            self.out,
            r#"<rect x="{}" y="{}" width="{}" height="{}""#,
            num(x),
            num(y),
            num(w.max(0.0)),
            num(h.max(0.0))
        );
        self.end(paint);
    }

    /// A straight line from `a` to `b`.
    pub fn line(&mut self, a: (f64, f64), b: (f64, f64), paint: Paint) {
        let _ = write!(
            self.out,
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}""#,
            num(a.0),
            num(a.1),
            num(b.0),
            num(b.1)
        );
        self.end(paint);
    }

    /// A line through `points`.
    pub fn polyline(&mut self, points: impl IntoIterator<Item = (f64, f64)>, paint: Paint) {
        self.points("polyline", points, paint);
    }

    /// A closed shape through `points`.
    pub fn polygon(&mut self, points: impl IntoIterator<Item = (f64, f64)>, paint: Paint) {
        self.points("polygon", points, paint);
    }

    fn points(&mut self, tag: &str, points: impl IntoIterator<Item = (f64, f64)>, paint: Paint) {
        let _ = write!(self.out, r#"<{tag} points=""#);
        for (i, (x, y)) in points.into_iter().enumerate() {
            let sep = if i == 0 { "" } else { " " };
            let _ = write!(self.out, "{sep}{},{}", num(x), num(y));
        }
        self.out.push('"');
        self.end(paint);
    }

    /// `text` (escaped here) at (x, y), black, in the viewer's sans-serif.
    /// Vertical centring is done here, as the baseline's place (an
    /// average font's lower-case middle is 0.35 em above its baseline), not
    /// with `dy` or `dominant-baseline`, which renderers read differently.
    pub fn text(&mut self, x: f64, y: f64, text: &str, style: Text) {
        let size = style.size;
        let (anchor, baseline) = match style.anchor {
            Anchor::Start => ("start", y + 0.35 * size),
            Anchor::Below => ("middle", y + 0.8 * size),
            Anchor::Middle => ("middle", y),
            Anchor::End => ("end", y + 0.35 * size),
            Anchor::Up => ("middle", 0.0),
        };
        if style.anchor == Anchor::Up {
            // Turned about the origin, then moved there: the one spelling
            // of a rotation every renderer reads alike.
            let _ = write!(
                self.out,
                r#"<text x="0" y="{}" transform="translate({} {}) rotate(-90)""#,
                num(0.35 * size),
                num(x),
                num(y)
            );
        } else {
            let _ = write!(self.out, r#"<text x="{}" y="{}""#, num(x), num(baseline));
        }
        let _ = write!(
            self.out,
            r##" text-anchor="{anchor}" font-family="sans-serif" font-size="{}" fill="#000000">{}</text>{}"##,
            num(size),
            esc(text),
            self.sep
        );
    }

    fn end(&mut self, paint: Paint) {
        paint.write(&mut self.out);
        self.out.push_str("/>");
        self.out.push_str(self.sep);
    }

    /// The document, closed.
    pub fn finish(mut self) -> String {
        self.out.push_str("</svg>");
        self.out.push_str(self.sep);
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_short_and_text_is_escaped() {
        assert_eq!(num(12.0), "12");
        assert_eq!(num(12.5), "12.5");
        assert_eq!(num(12.333), "12.33");
        assert_eq!(num(-0.001), "0");
        assert_eq!(num(f64::NAN), "0");
        assert_eq!(esc("a<b & \"c\" 'd'\u{1b}"), "a&lt;b &amp; &quot;c&quot; &#39;d&#39;?");
        assert_eq!(xml("\u{1b}<"), "\u{1b}&lt;");
    }

    #[test]
    fn a_drawing_is_well_formed_svg_with_its_title_and_data() {
        let mut s = Svg::new(100.0, 50.0, "a <title>", r#"{"k":"v&w"}"#);
        s.rect(0.0, 0.0, 100.0, 50.0, Paint::fill("#FFFFFF"));
        s.polyline([(0.0, 1.5), (2.0, 3.0)], Paint::stroke("#000000", 2.0).dashed(7.0, 4.0));
        s.line((1.0, 0.0), (1.0, 50.0), Paint::stroke("#CCCCCC", 1.0));
        s.polygon([(0.0, 0.0), (1.0, 1.0), (0.0, 1.0)], Paint::fill("#9ECAE1"));
        s.text(5.0, 6.0, "MiB", Text { size: 12.0, anchor: Anchor::Up });
        let text = s.finish();
        let doc = roxmltree::Document::parse(&text).unwrap();
        let root = doc.root_element();
        assert_eq!(root.attribute("viewBox"), Some("0 0 100 50"));
        let get = |tag: &str| doc.descendants().find(|n| n.has_tag_name(tag)).unwrap();
        assert_eq!(get("title").text(), Some("a <title>"));
        assert_eq!(get("desc").text(), Some(r#"{"k":"v&w"}"#));
        assert_eq!(get("polyline").attribute("points"), Some("0,1.5 2,3"));
        assert_eq!(get("polyline").attribute("stroke-dasharray"), Some("7 4"));
        assert_eq!(get("polygon").attribute("stroke"), Some("none"));
        assert_eq!(get("text").attribute("transform"), Some("translate(5 6) rotate(-90)"));
        assert_eq!(get("text").attribute("font-family"), Some("sans-serif"));
    }
}
