//! What every chart's SVG text gets after plotters drew it: opacity
//! spelled so that every renderer draws it, and the data in `<desc>`.

/// plotters writes `opacity="A"` on every element. ImageMagick's own SVG
/// renderer applies it to the fill and stroke colours, so a `fill="none"`
/// line gets a black fill and faint grid lines come out solid black.
/// `opacity="1"` is the default and goes; any other value becomes
/// `fill-opacity` and `stroke-opacity`, which every renderer reads.
pub(super) fn portable_opacity(svg: &str) -> String {
    let mut out = String::with_capacity(svg.len());
    // Only inside tags: a label's text is left as written.
    for (i, piece) in svg.split('<').enumerate() {
        if i > 0 {
            out.push('<');
        }
        let (tag, text) = piece.split_at(piece.find('>').unwrap_or(piece.len()));
        out.push_str(&tag_opacity(&no_polygon_outline(tag)));
        out.push_str(text);
    }
    out
}

/// plotters writes a filled polygon with no `stroke`; SVG's default is
/// none, but ImageMagick outlines it in black: said explicitly.
fn no_polygon_outline(tag: &str) -> std::borrow::Cow<'_, str> {
    match tag.strip_prefix("polygon ") {
        Some(rest) if !tag.contains(" stroke=") => format!("polygon stroke=\"none\" {rest}").into(),
        _ => tag.into(),
    }
}

/// One tag's ` opacity="A"` rewritten (see [`portable_opacity`]).
fn tag_opacity(tag: &str) -> String {
    const KEY: &str = " opacity=\"";
    let Some(at) = tag.find(KEY) else { return tag.to_string() };
    let start = at + KEY.len();
    let Some(len) = tag[start..].find('"') else { return tag.to_string() };
    let value = &tag[start..start + len];
    let spelled = if value == "1" {
        String::new()
    } else {
        format!(" fill-opacity=\"{value}\" stroke-opacity=\"{value}\"")
    };
    format!("{}{spelled}{}", &tag[..at], &tag[start + len + 1..])
}

/// Puts `<title>` and a `<desc>` holding the data right after `<svg …>`.
pub(super) fn with_description(svg: String, title: &str, data: &serde_json::Value) -> String {
    use crate::render::table::escape_controls;
    let Some(end) = svg.find('>') else { return svg };
    let mut out = String::with_capacity(svg.len() + 512);
    out.push_str(&svg[..=end]);
    out.push_str(&format!(
        "\n<title>{}</title>\n<desc>{}</desc>",
        xml_escape(&escape_controls(title.to_string())),
        xml_escape(&data.to_string())
    ));
    out.push_str(&svg[end + 1..]);
    out
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opacity_becomes_fill_and_stroke_opacity_and_one_goes() {
        assert_eq!(
            portable_opacity(r##"<polygon fill="#9ECAE1" points="1,2 3,4 "/>"##),
            r##"<polygon stroke="none" fill="#9ECAE1" points="1,2 3,4 "/>"##
        );
        let svg = r##"<line opacity="0.1" stroke="#000000"/><polyline fill="none" opacity="1" points="1,2 "/><text opacity="1"> opacity="x"</text>"##;
        assert_eq!(
            portable_opacity(svg),
            r##"<line fill-opacity="0.1" stroke-opacity="0.1" stroke="#000000"/><polyline fill="none" points="1,2 "/><text> opacity="x"</text>"##
        );
    }
}
