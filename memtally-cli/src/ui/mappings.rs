//! The mappings level: every mapping of one category of one process, its
//! address range, permissions, path and sizes; every size of the selected
//! one below.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Table, TableState};
use ratatui::Frame;

use memtally_core::model::Region;

use crate::render::table::escape_controls;
use crate::render::units::human;
use crate::ui::app::App;
use crate::ui::widgets::category_rows::{cells, columns, width};
use crate::ui::widgets::cells::{figure_width, header, right};

pub fn mappings(app: &App) -> &[Region] {
    app.detail.as_ref().map_or(&[], |d| d.mappings.as_slice())
}

fn range(r: &Region) -> String {
    match (r.start, r.end) {
        (Some(s), Some(e)) => format!("{s:x}-{e:x}"),
        _ => "-".into(),
    }
}

pub fn draw(frame: &mut Frame, area: Rect, app: &App) {
    let Some(detail) = &app.detail else { return };
    let maps = mappings(app);
    let [list, info] = Layout::vertical([Constraint::Min(3), Constraint::Length(5)]).areas(area);
    let cols = columns(list.width.saturating_sub(25 + 1 + 5 + 1 + 12));
    let mut headers = vec![("ADDRESS", false), ("PERMS", false)];
    headers.extend(cols.iter().map(|(h, _)| (*h, true)));
    headers.push(("PATH", false));
    let all_cells: Vec<Vec<String>> = maps.iter().map(|r| cells(&r.sizes, &cols)).collect();
    let mut widths = vec![Constraint::Length(25), Constraint::Length(5)];
    widths.extend(cols.iter().enumerate().map(|(i, (h, _))| {
        Constraint::Length(figure_width(width(h), all_cells.iter().map(|c| c[i].clone())))
    }));
    widths.push(Constraint::Min(8));
    // The path's room: the row less the fixed columns and the one-cell
    // gaps between columns; cut as the CLI cuts a path, keeping the file
    // name (`/usr/lib/…/libc.so.6`), where it lost its end unmarked.
    let fixed: u16 =
        widths.iter().map(|c| if let Constraint::Length(n) = c { *n } else { 0 }).sum();
    let path_width = usize::from(list.width.saturating_sub(fixed + widths.len() as u16 - 1));
    let grey =
        if detail.gone.is_some() { Style::default().fg(Color::DarkGray) } else { Style::default() };
    let rows: Vec<Row> = maps
        .iter()
        .map(|r| {
            let mut c = vec![Cell::from(range(r)), Cell::from(r.perms.clone())];
            c.extend(cells(&r.sizes, &cols).into_iter().map(right));
            c.push(Cell::from(path_cell(r, path_width)));
            Row::new(c).style(grey)
        })
        .collect();
    let table = Table::new(rows, widths)
        .header(header(headers))
        .row_highlight_style(Style::default().add_modifier(Modifier::REVERSED));
    let selected = app.cursor[3].min(maps.len().saturating_sub(1));
    let mut state = TableState::default().with_selected(Some(selected));
    frame.render_stateful_widget(table, list, &mut state);
    let mut parts: Vec<String> = match maps.get(selected) {
        Some(r) => {
            let mut p: Vec<String> =
                r.sizes.present().iter().map(|(k, v)| format!("{k} {}", human(*v))).collect();
            p.extend(r.vm_flags.as_ref().map(|f| format!("flags {f}")));
            p
        }
        None => vec!["no mappings in this category".into()],
    };
    let text = pack(&mut parts, info.width as usize);
    let more = if detail.more_mappings > 0 {
        format!(" ({} more not kept)", detail.more_mappings)
    } else {
        String::new()
    };
    let block = Block::default()
        .borders(Borders::TOP)
        .title(format!("every size of the selected mapping{more}"));
    frame.render_widget(Paragraph::new(text).block(block), info);
}

/// A mapping's path (controls escaped) in `width` columns, cut in the
/// middle so the file name stays, as `show --by path` cuts it.
fn path_cell(r: &Region, width: usize) -> String {
    let path = r.path.clone().map(escape_controls).unwrap_or_default();
    crate::render::width::cut_path(&path, width).into_owned()
}

/// How many rows the level has.
pub fn len(app: &App) -> usize {
    mappings(app).len()
}

/// Lays `name value` pairs out in lines of `width`, never splitting one.
fn pack(parts: &mut [String], width: usize) -> Vec<Line<'static>> {
    let mut lines: Vec<Line> = Vec::new();
    let mut line = String::new();
    for p in parts.iter_mut() {
        if !line.is_empty() && line.chars().count() + 2 + p.chars().count() > width {
            lines.push(Line::from(std::mem::take(&mut line)));
        }
        if !line.is_empty() {
            line.push_str("  ");
        }
        line.push_str(p);
    }
    lines.push(Line::from(line));
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use memtally_core::model::Backing;

    /// Issue 37, item 13: at 80 columns the path column keeps the file
    /// name and marks the cut (`/usr/lib/…/libc.so.6`), where it read
    /// `/usr/lib/x86_`.
    #[test]
    fn a_long_path_keeps_its_file_name() {
        let mut r = Region::new(Backing::File);
        r.path = Some("/usr/lib/x86_64-linux-gnu/libgstaudio-1.0.so.0.2200.0".into());
        let cell = path_cell(&r, 40);
        assert_eq!(cell, "/usr/lib/…/libgstaudio-1.0.so.0.2200.0");
        assert_eq!(path_cell(&r, 80), r.path.clone().unwrap(), "whole where it fits");
    }
}
