//! The categories level: one process's memory by category, from its full
//! smaps, as `memtally show PID` prints it (GPU rows included); the rows
//! are built in `widgets::category_rows`.

use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::{Cell, Row, Table, TableState};
use ratatui::Frame;

use memtally_core::model::Sizes;

use crate::ui::app::App;
use crate::ui::widgets::category_rows::{cells, columns, width};
use crate::ui::widgets::cells::{figure_width, header, right};

pub fn draw(frame: &mut Frame, area: Rect, app: &App) {
    let Some(detail) = &app.detail else { return };
    let Some(report) = &detail.report else { return };
    let rows = app.category_rows();
    let cols = columns(area.width.saturating_sub(20 + 8));
    let mut headers = vec![("CATEGORY", false)];
    headers.extend(cols.iter().map(|(h, _)| (*h, true)));
    headers.push(("REGIONS", true));
    let all_cells: Vec<Vec<String>> =
        rows.iter().map(|r| &r.sizes).chain([&report.totals]).map(|s| cells(s, &cols)).collect();
    let mut widths = vec![Constraint::Length(20)];
    widths.extend(cols.iter().enumerate().map(|(i, (h, _))| {
        Constraint::Length(figure_width(width(h), all_cells.iter().map(|c| c[i].clone())))
    }));
    widths.push(Constraint::Length(7));
    let line = |label: &str, regions: String, sizes: &Sizes| {
        let mut c = vec![Cell::from(label.to_string())];
        c.extend(cells(sizes, &cols).into_iter().map(right));
        c.push(right(regions));
        c
    };
    let grey =
        if detail.gone.is_some() { Style::default().fg(Color::DarkGray) } else { Style::default() };
    let mut table_rows: Vec<Row> = rows
        .iter()
        .map(|r| {
            Row::new(line(&r.label, r.regions.map_or("-".into(), |n| n.to_string()), &r.sizes))
                .style(grey)
        })
        .collect();
    let total = Row::new(line("total", report.region_count.to_string(), &report.totals))
        .style(grey.add_modifier(Modifier::BOLD));
    table_rows.push(total);
    let table = Table::new(table_rows, widths)
        .header(header(headers))
        .row_highlight_style(Style::default().add_modifier(Modifier::REVERSED));
    let mut state =
        TableState::default().with_selected(Some(app.cursor[2].min(rows.len().saturating_sub(1))));
    frame.render_stateful_widget(table, area, &mut state);
}

/// How many rows the level has (for moving the cursor).
pub fn len(app: &App) -> usize {
    app.category_rows().len()
}
