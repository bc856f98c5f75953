//! The process level: `top`'s rows (every process, or programs, users,
//! cgroups, trees), filtered, with a growth rate and a sparkline each.

use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::{Cell, Row, Table, TableState};
use ratatui::Frame;

use memtally_core::analyze::top::TopBy;
use memtally_core::model::{Figure, Sizes};

use crate::render::table::escape_controls;
// Size columns and their figures, as `top` prints them.
use crate::render::top::figures;
use crate::render::units::{human_opt, human_signed};
use crate::ui::app::{App, SortKey};
use crate::ui::draw::{figure_width, header, right};
use crate::ui::history::per_minute;

/// One row as shown.
#[derive(Debug, Clone)]
pub struct ProcRow {
    /// `top`'s key: the PID, program, user or cgroup.
    pub label: String,
    pub pid: Option<u32>,
    pub user: String,
    pub processes: usize,
    pub without_pss: usize,
    pub depth: usize,
    pub command: String,
    pub sizes: Sizes,
    /// The process exited; these are its last figures.
    pub gone: bool,
}

/// `top`'s rows, in its order, before filtering.
pub fn base_rows(app: &App) -> Vec<ProcRow> {
    let Some(top) = &app.top else { return Vec::new() };
    let per_process = matches!(top.report.by, TopBy::Process | TopBy::Tree);
    top.report
        .rows
        .iter()
        .map(|r| {
            let p = r.process.map(|i| &top.scan.processes[i]);
            ProcRow {
                label: r.key.clone(),
                pid: p.filter(|_| per_process).map(|p| p.info.pid),
                user: p.map(|p| top.users.name(p.info.uid)).unwrap_or_default(),
                processes: r.processes,
                without_pss: r.without_pss,
                depth: r.depth,
                command: p.map(|p| escape_controls(p.info.command())).unwrap_or_default(),
                sizes: r.sizes.clone(),
                gone: false,
            }
        })
        .collect()
}

/// The rows shown: the group entered, the `/` filter, the growth order,
/// and exited processes greyed where they stood.
pub fn rows(app: &App) -> Vec<ProcRow> {
    let mut rows = base_rows(app);
    if let (Some((by, key)), Some(top)) = (&app.group, &app.top) {
        let users = &top.users;
        let of = |pid: u32| top.scan.processes.iter().find(|p| p.info.pid == pid);
        rows.retain(|r| {
            r.pid.and_then(of).is_some_and(|p| match by {
                TopBy::Program => &p.info.program == key,
                TopBy::User => &users.name(p.info.uid) == key,
                TopBy::Cgroup => p.info.cgroup.as_deref().unwrap_or("(unknown)") == key,
                _ => true,
            })
        });
    }
    if app.group.is_none() {
        for g in &app.ghosts {
            let v = sort_value(app, &g.row);
            let at = rows.iter().position(|r| sort_value(app, r) < v).unwrap_or(rows.len());
            rows.insert(at, g.row.clone());
        }
    }
    if !app.filter.is_empty() {
        let needle = app.filter.to_lowercase();
        // A PID matches exactly; a name anywhere in the command or key.
        let pid: Option<u32> = app.filter.trim().parse().ok();
        rows.retain(|r| match (pid, r.pid) {
            (Some(want), Some(pid)) => pid == want,
            _ => {
                r.label.to_lowercase().contains(&needle)
                    || r.command.to_lowercase().contains(&needle)
            }
        });
    }
    if app.sort == SortKey::Growth && app.by != TopBy::Tree {
        rows.sort_by(|a, b| {
            sort_value(app, b).partial_cmp(&sort_value(app, a)).unwrap_or(std::cmp::Ordering::Equal)
        });
    }
    rows
}

/// The figure a row sorts by (growth per minute for growth).
fn sort_value(app: &App, r: &ProcRow) -> Option<f64> {
    match app.sort {
        SortKey::Growth => app.history().and_then(|h| h.trend(&r.label)).map(|t| per_minute(&t)),
        k => r.sizes.figure(k.top_field()).map(|v| v as f64),
    }
}

pub fn draw(frame: &mut Frame, area: Rect, app: &App) {
    let Some(top) = &app.top else { return };
    let rows = rows(app);
    let per_process = matches!(app.by, TopBy::Process | TopBy::Tree);
    let gpu = top.report.totals.gpu.is_some().then_some(("GPU", Figure::Gpu));
    let figures: Vec<(&'static str, Figure)> =
        figures(&top.report.totals).into_iter().chain(gpu).collect();
    let mut headers: Vec<(&'static str, bool)> = if per_process {
        vec![("PID", true), ("USER", false)]
    } else {
        vec![(key_header(app.by), false), ("PROCS", true)]
    };
    headers.extend(figures.iter().map(|(h, _)| (*h, true)));
    headers.extend([("GROW/m", true), ("TREND", false)]);
    let mut widths: Vec<Constraint> = if per_process {
        vec![Constraint::Length(7), Constraint::Length(8)]
    } else {
        let key = if app.by == TopBy::Cgroup { (area.width / 2).clamp(20, 70) } else { 20 };
        vec![Constraint::Length(key), Constraint::Length(5)]
    };
    let history = app.history();
    let figure_cell = |r: &ProcRow, f: Figure| {
        let mut c = human_opt(r.sizes.figure(f));
        if r.without_pss > 0 && r.processes > 1 && matches!(f, Figure::Pss | Figure::Uss) {
            c.push('*');
        }
        c
    };
    let growth_cell = |r: &ProcRow| {
        history
            .and_then(|h| h.trend(&r.label))
            .map_or_else(String::new, |t| human_signed(per_minute(&t) as i128))
    };
    widths.extend(figures.iter().map(|(h, f)| {
        let least = h.len().max(6) as u16;
        Constraint::Length(figure_width(least, rows.iter().map(|r| figure_cell(r, *f))))
    }));
    widths.extend([
        Constraint::Length(figure_width(7, rows.iter().map(growth_cell))),
        Constraint::Length(8),
    ]);
    // What the COMMAND column gets: the rest of the row after the fixed
    // columns and the one-cell gaps between columns.
    let fixed: u16 =
        widths.iter().map(|c| if let Constraint::Length(n) = c { *n } else { 0 }).sum();
    let command_width = usize::from(area.width.saturating_sub(fixed + widths.len() as u16));
    if per_process {
        headers.push(("COMMAND", false));
        widths.push(Constraint::Min(6));
    }
    // A command that does not fit: the program and what tells it apart
    // first, cut with `…` (as `top` prints it).
    let commands: Vec<String> = rows.iter().map(|r| r.command.clone()).collect();
    let distinguishing = crate::render::width::distinguishing(&commands);
    let table_rows: Vec<Row> = rows
        .iter()
        .zip(&distinguishing)
        .map(|(r, d)| {
            let trend = history.and_then(|h| h.trend(&r.label));
            let mut cells: Vec<Cell> = if per_process {
                vec![right(r.label.clone()), Cell::from(r.user.clone())]
            } else {
                vec![Cell::from(r.label.clone()), right(r.processes.to_string())]
            };
            for (_, f) in &figures {
                cells.push(right(figure_cell(r, *f)));
            }
            cells.push(right(growth_cell(r)));
            cells.push(Cell::from(history.map(|h| h.sparkline(&r.label)).unwrap_or_default()));
            if per_process {
                let gone = if r.gone { " (exited)" } else { "" };
                let indent = "  ".repeat(r.depth);
                let mut text = format!("{indent}{}{gone}", r.command);
                if crate::render::width::columns(&text) > command_width {
                    let label = crate::render::width::command_label(&r.command, d.as_deref());
                    let short = format!("{indent}{label}{gone}");
                    text = crate::render::width::cut(&short, command_width).into_owned();
                }
                cells.push(Cell::from(text));
            }
            let style = if r.gone {
                Style::default().fg(Color::DarkGray)
            } else if trend.is_some_and(|t| t.grows_steadily()) {
                Style::default().fg(Color::Yellow).add_modifier(Modifier::BOLD)
            } else {
                Style::default()
            };
            Row::new(cells).style(style)
        })
        .collect();
    let table = Table::new(table_rows, widths)
        .header(header(headers))
        .row_highlight_style(Style::default().add_modifier(Modifier::REVERSED));
    let mut state =
        TableState::default().with_selected(Some(app.cursor[1].min(rows.len().saturating_sub(1))));
    frame.render_stateful_widget(table, area, &mut state);
}

fn key_header(by: TopBy) -> &'static str {
    match by {
        TopBy::Program => "PROGRAM",
        TopBy::User => "USER",
        TopBy::Cgroup => "CGROUP",
        TopBy::Process | TopBy::Tree => "PID",
    }
}

/// How many rows the level has (for moving the cursor).
pub fn len(app: &App) -> usize {
    rows(app).len()
}
