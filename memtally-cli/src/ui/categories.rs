//! The categories level: one process's memory by category, from its full
//! smaps, as `memtally show PID` prints it (GPU rows included).

use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::{Cell, Row, Table, TableState};
use ratatui::Frame;

use memtally_core::analyze::category::Category;
use memtally_core::model::{Figure, Sizes};

use crate::render::show::{figures, gpu_rows, COLUMNS};
use crate::ui::app::App;
use crate::ui::draw::{figure_width, header, right};

/// One row as shown.
#[derive(Debug, Clone)]
pub struct CatRow {
    pub label: String,
    /// The category to go down into (none for GPU rows).
    pub category: Option<Category>,
    /// Mappings in it (`-` for GPU rows).
    pub regions: Option<usize>,
    pub sizes: Sizes,
}

pub fn rows(app: &App) -> Vec<CatRow> {
    let Some(report) = app.detail.as_ref().and_then(|d| d.report.as_ref()) else {
        return Vec::new();
    };
    let mut rows: Vec<CatRow> = report
        .rows
        .iter()
        .map(|r| CatRow {
            label: r.label.clone(),
            category: Category::ALL.iter().copied().find(|c| c.key() == r.key),
            regions: Some(r.regions),
            sizes: r.sizes.clone(),
        })
        .collect();
    for (label, sizes) in report.gpu.as_ref().map(gpu_rows).unwrap_or_default() {
        rows.push(CatRow { label, category: None, regions: None, sizes });
    }
    rows
}

/// The columns of `show` that fit in `room` cells, most telling first
/// (private dirty, RSS, PSS, shared dirty, swap, clean, virtual), in
/// `show`'s order.
pub fn columns(room: u16) -> Vec<(&'static str, Figure)> {
    const PRIORITY: [Figure; 7] = [
        Figure::PrivateDirty,
        Figure::Rss,
        Figure::Pss,
        Figure::SharedDirty,
        Figure::Swap,
        Figure::Clean,
        Figure::Size,
    ];
    let mut left = room as usize;
    let mut keep: Vec<Figure> = Vec::new();
    for f in PRIORITY {
        let Some((h, _)) = COLUMNS.iter().find(|(_, c)| *c == f) else { continue };
        let cost = width(h) as usize + 1;
        if cost > left {
            break;
        }
        left -= cost;
        keep.push(f);
    }
    COLUMNS.iter().copied().filter(|(_, f)| keep.contains(f)).collect()
}

/// A figure column's width: its header, or a figure like `1023M`.
pub fn width(header: &str) -> u16 {
    header.len().max(6) as u16
}

/// A row's cells for the chosen columns.
pub fn cells(sizes: &Sizes, columns: &[(&str, Figure)]) -> Vec<String> {
    let all = figures(sizes);
    COLUMNS
        .iter()
        .zip(all)
        .filter(|((_, f), _)| columns.iter().any(|(_, c)| c == f))
        .map(|(_, v)| v)
        .collect()
}

pub fn draw(frame: &mut Frame, area: Rect, app: &App) {
    let Some(detail) = &app.detail else { return };
    let Some(report) = &detail.report else { return };
    let rows = rows(app);
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
