//! A chart's legend, drawn in a strip of its own under the plotting area:
//! it can never hide a line or a bar, however the data runs.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// What an entry's sample looks like.
#[derive(Debug, Clone, Copy)]
pub(super) enum Swatch {
    /// A line of this colour.
    Line(RGBColor),
    /// A dashed line of this colour (the total).
    Dashed(RGBColor),
    /// A filled box (a bar, a stacked area).
    Fill(RGBColor),
}

/// One entry: its sample and its text.
pub(super) type Entry = (Swatch, String);

/// Height of one entry's row, pixels.
const ROW: u32 = 20;
/// Entries per row.
const COLUMNS: usize = 2;
/// The strip's width: its left edge to this far from the chart's right.
const RIGHT_MARGIN: i32 = 16;

/// The strip's height for `n` entries: whole rows and a margin.
pub(super) fn height(n: usize) -> u32 {
    (n.div_ceil(COLUMNS).max(1) as u32) * ROW + 16
}

/// Draws the entries into `area` (the strip), framed, from its top left,
/// left to right then down.
pub(super) fn draw(
    area: &DrawingArea<SVGBackend, Shift>,
    entries: &[Entry],
    left: i32,
) -> Result<(), String> {
    let err = |e: DrawingAreaErrorKind<_>| e.to_string();
    let rows = entries.len().div_ceil(COLUMNS).max(1) as i32;
    let width = area.dim_in_pixel().0 as i32 - left - RIGHT_MARGIN;
    let column = width / COLUMNS as i32;
    let (top, row) = (4, ROW as i32);
    area.draw(&Rectangle::new([(left, top), (left + width, top + rows * row + 4)], BLACK))
        .map_err(err)?;
    for (i, (swatch, label)) in entries.iter().enumerate() {
        let x = left + 10 + column * (i % COLUMNS) as i32;
        let y = top + 2 + row * (i / COLUMNS) as i32 + row / 2;
        match *swatch {
            Swatch::Line(c) => area
                .draw(&PathElement::new(vec![(x, y), (x + 24, y)], c.stroke_width(2)))
                .map_err(err)?,
            Swatch::Dashed(c) => {
                let dashes =
                    DashedLineSeries::new(vec![(x, y), (x + 24, y)], 7, 4, c.stroke_width(2));
                for dash in dashes {
                    area.draw(&dash).map_err(err)?;
                }
            }
            Swatch::Fill(c) => area
                .draw(&Rectangle::new([(x, y - 6), (x + 24, y + 6)], c.filled()))
                .map_err(err)?,
        }
        // Centred on the swatch (renderers that ignore `dy` put it a
        // little higher, still beside its swatch).
        let font =
            TextStyle::from(("sans-serif", 14).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
        let text = Text::new(label.clone(), (x + 32, y), font);
        area.draw(&text).map_err(err)?;
    }
    Ok(())
}
