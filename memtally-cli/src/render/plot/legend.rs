//! A chart's legend, drawn in a strip of its own under the plotting area:
//! it can never hide a line or a bar, however the data runs.

use super::{INK, WIDTH};
use crate::render::svg::{Anchor, Paint, Svg, Text};

/// What an entry's sample looks like.
#[derive(Debug, Clone, Copy)]
pub(super) enum Swatch {
    /// A line of this colour.
    Line(&'static str),
    /// A dashed line of this colour (the total).
    Dashed(&'static str),
    /// A filled box (a bar, a stacked area).
    Fill(&'static str),
}

/// One entry: its sample and its text.
pub(super) type Entry = (Swatch, String);

/// Height of one entry's row, pixels.
const ROW: f64 = 20.0;
/// Entries per row. A column is at least (960 - 216 - 16) / 2 = 364
/// pixels; a label is at most 48 characters (series labels are cut so),
/// about 48 × 7 = 336 pixels at 13 px: it stays in its column.
const COLUMNS: usize = 2;
/// The strip's width: its left edge to this far from the chart's right.
const RIGHT_MARGIN: f64 = 16.0;
/// The entries' text.
const LABEL: Text = Text { size: 13.0, anchor: Anchor::Start };

/// The strip's height for `n` entries: whole rows and a margin.
pub(super) fn height(n: usize) -> f64 {
    n.div_ceil(COLUMNS).max(1) as f64 * ROW + 16.0
}

/// Draws the entries into the strip that starts at `top`, framed, from
/// `left`, left to right then down.
pub(super) fn draw(svg: &mut Svg, top: f64, entries: &[Entry], left: f64) {
    let rows = entries.len().div_ceil(COLUMNS).max(1) as f64;
    let width = WIDTH - left - RIGHT_MARGIN;
    let column = (width / COLUMNS as f64).floor();
    let top = top + 4.0;
    svg.rect(left, top, width, rows * ROW + 4.0, Paint::stroke(INK, 1.0));
    for (i, (swatch, label)) in entries.iter().enumerate() {
        let x = left + 10.0 + column * (i % COLUMNS) as f64;
        let y = top + 2.0 + ROW * (i / COLUMNS) as f64 + ROW / 2.0;
        match *swatch {
            Swatch::Line(c) => svg.polyline([(x, y), (x + 24.0, y)], Paint::stroke(c, 2.0)),
            Swatch::Dashed(c) => {
                svg.polyline([(x, y), (x + 24.0, y)], Paint::stroke(c, 2.0).dashed(7.0, 4.0))
            }
            Swatch::Fill(c) => svg.rect(x, y - 6.0, 24.0, 12.0, Paint::fill(c)),
        }
        svg.text(x + 32.0, y, label, LABEL);
    }
}
