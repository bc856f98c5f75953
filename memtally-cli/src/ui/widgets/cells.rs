//! Table cells every level draws with: a bold header row, figure columns
//! that never cut a figure, right-aligned figures.

use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Cell, Row};

/// A table's header row, bold; figure columns right-aligned like their cells.
pub fn header(cells: Vec<(&'static str, bool)>) -> Row<'static> {
    let cells: Vec<Cell> = cells
        .into_iter()
        .map(|(h, right)| {
            let line = Line::from(h);
            Cell::from(if right { line.right_aligned() } else { line })
        })
        .collect();
    Row::new(cells).style(Style::default().add_modifier(Modifier::BOLD))
}

/// A figure column's width: `least` (its header, or a figure like
/// `1023M`), widened to its widest cell. A fixed width cut the leading
/// digits of a large figure (`8388608T` shown as `88608T`); a figure is
/// never cut, the text columns beside it give way instead.
pub fn figure_width(least: u16, cells: impl IntoIterator<Item = String>) -> u16 {
    let widest = cells.into_iter().map(|c| crate::render::width::columns(&c)).max().unwrap_or(0);
    least.max(u16::try_from(widest).unwrap_or(u16::MAX))
}

/// A right-aligned cell, for figures.
pub fn right(s: String) -> Cell<'static> {
    Cell::from(Line::from(s).right_aligned())
}
