//! The process level: `top`'s rows (every process, or programs, users,
//! cgroups, trees), filtered, with a growth rate and a sparkline each;
//! the rows are built in `widgets::process_rows`.

use std::rc::Rc;

use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::{Cell, Row, Table, TableState};
use ratatui::Frame;

use memtally_core::analyze::top::TopBy;
use memtally_core::model::Figure;

// Size columns and their figures, as `top` prints them.
use crate::render::top::{figures, key_header};
use crate::render::units::{human_opt, human_signed};
use crate::ui::app::App;
use crate::ui::widgets::cells::{figure_width, header, right};
use crate::ui::widgets::process_rows::{distinguishing, Columns, ProcRow};

/// The command's room at least, before GROW/m and TREND are shown:
/// `chromium --type=renderer…` and a little more.
const COMMAND_ROOM: usize = 30;

/// A group's key column's room at least, before GROW/m and TREND are shown.
const KEY_ROOM: usize = 20;

/// A group's key in `width` columns, cut as `top` cuts it: a cgroup from
/// the left (its leaf tells the rows apart), a program or user at its end,
/// with `…` either way.
fn key_cell(by: TopBy, key: &str, width: usize) -> String {
    match by {
        TopBy::Cgroup => crate::render::width::cut_left(key, width).into_owned(),
        TopBy::Program | TopBy::User | TopBy::Process | TopBy::Tree => {
            crate::render::width::cut(key, width).into_owned()
        }
    }
}

/// The columns of these rows: kept from the last frame when the rows are
/// the same rows, else worked out by `build`.
fn columns(app: &App, rows: &Rc<Vec<ProcRow>>, build: impl FnOnce() -> Columns) -> Rc<Columns> {
    let mut kept = app.process_columns.borrow_mut();
    if let Some(c) = kept.as_ref().filter(|c| Rc::ptr_eq(&c.rows, rows)) {
        return Rc::clone(c);
    }
    let c = Rc::new(build());
    *kept = Some(Rc::clone(&c));
    c
}

pub fn draw(frame: &mut Frame, area: Rect, app: &App) {
    let Some(top) = &app.top else { return };
    let rows = app.process_rows();
    // The grouping of the rows read (a new one is read on its own thread).
    let per_process = matches!(top.report.by, TopBy::Process | TopBy::Tree);
    let gpu = top.report.totals.gpu.is_some().then_some(("GPU", Figure::Gpu));
    let figures: Vec<(&'static str, Figure)> =
        figures(&top.report.totals).into_iter().chain(gpu).collect();
    let mut headers: Vec<(&'static str, bool)> = if per_process {
        vec![("PID", true), ("USER", false)]
    } else {
        vec![(key_header(top.report.by), false), ("PROCS", true)]
    };
    headers.extend(figures.iter().map(|(h, _)| (*h, true)));
    // A group's key column takes the room the others leave (set below).
    let mut widths: Vec<Constraint> = if per_process {
        vec![Constraint::Length(7), Constraint::Length(8)]
    } else {
        vec![Constraint::Length(0), Constraint::Length(5)]
    };
    let history = app.history();
    let rate_of = |r: &ProcRow| if r.gone { None } else { app.rate(r) };
    let figure_cell = |r: &ProcRow, f: Figure| {
        let mut c = human_opt(r.sizes.figure(f));
        if r.without_pss > 0 && r.processes > 1 && matches!(f, Figure::Pss | Figure::Uss) {
            c.push('*');
        }
        c
    };
    // `~`: members came or went; the rate counts those present throughout.
    let growth_cell = |r: &ProcRow| {
        rate_of(r).map_or_else(String::new, |t| {
            let mark = if t.members_changed { "~" } else { "" };
            format!("{}{mark}", human_signed(t.per_minute as i128))
        })
    };
    let columns = columns(app, &rows, || Columns {
        rows: Rc::clone(&rows),
        figure_widths: figures
            .iter()
            .map(|(h, f)| {
                let least = h.len().max(6) as u16;
                figure_width(least, rows.iter().map(|r| figure_cell(r, *f)))
            })
            .collect(),
        grow_width: figure_width(7, rows.iter().map(growth_cell)),
        // A command that does not fit: the program and what tells it
        // apart first, cut with `…` (as `top` prints it).
        distinguishing: distinguishing(&rows),
    });
    widths.extend(columns.figure_widths.iter().map(|&w| Constraint::Length(w)));
    // The pinned rows' columns (`x`), while a row is pinned.
    let pinned = !app.pins.is_empty();
    if pinned {
        for (h, f) in PIN_COLUMNS {
            headers.push((h, true));
            let least = h.len().max(6) as u16;
            widths.push(Constraint::Length(figure_width(
                least,
                rows.iter().map(|r| pin_cell(app, r, f)),
            )));
        }
    }
    // What the COMMAND column gets: the rest of the row after the fixed
    // columns and the one-cell gaps between columns. The command tells
    // the rows apart (a browser from its renderers), so it keeps its room
    // and TREND, then GROW/m, go first when the row is narrow.
    let room = |widths: &[Constraint]| {
        let fixed: u16 =
            widths.iter().map(|c| if let Constraint::Length(n) = c { *n } else { 0 }).sum();
        usize::from(area.width.saturating_sub(fixed + widths.len() as u16))
    };
    let grow_width = columns.grow_width;
    let mut command_width = room(&widths);
    // Each column costs its width and the gap before it. A group's key
    // (program, user, cgroup) keeps its room as the command does: cut
    // to fit, the figure headers stay whole (at 80 columns the cgroup
    // column took half the row and `PSS DIRTY` read `SS DIRTY`).
    let least = if per_process { COMMAND_ROOM } else { KEY_ROOM };
    let with_grow = least + usize::from(grow_width) + 1;
    let show_grow = command_width >= with_grow;
    let show_trend = command_width >= with_grow + 9;
    if show_grow {
        headers.push(("GROW/m", true));
        widths.push(Constraint::Length(grow_width));
    }
    if show_trend {
        headers.push(("TREND", false));
        widths.push(Constraint::Length(8));
    }
    command_width = room(&widths);
    if per_process {
        headers.push(("COMMAND", false));
        widths.push(Constraint::Min(6));
    } else {
        let widest = rows.iter().map(|r| crate::render::width::columns(&r.label)).max();
        let key = command_width.min(widest.unwrap_or(0).max(KEY_ROOM)).max(6);
        command_width = key;
        widths[0] = Constraint::Length(u16::try_from(key).unwrap_or(u16::MAX));
    }
    // Only the rows on screen become cells: at 50,000 processes, building
    // every row's cells each frame made a key wait seconds. The window is
    // the one ratatui itself would scroll to from a fresh state (the
    // selected row last when it is below the first screen), so the frame
    // is the same; the column widths above still see every row.
    let selected = app.cursor[1].min(rows.len().saturating_sub(1));
    let body = usize::from(area.height.saturating_sub(1)).max(1);
    let first = selected.saturating_sub(body - 1);
    let table_rows: Vec<Row> = rows
        .iter()
        .zip(&columns.distinguishing)
        .skip(first)
        .take(body)
        .map(|(r, d)| {
            let rate = rate_of(r);
            let mut cells: Vec<Cell> = if per_process {
                vec![right(r.label.clone()), Cell::from(r.user.clone())]
            } else {
                let key = key_cell(top.report.by, &r.label, command_width);
                vec![Cell::from(key), right(r.processes.to_string())]
            };
            for (_, f) in &figures {
                cells.push(right(figure_cell(r, *f)));
            }
            if pinned {
                cells.extend(PIN_COLUMNS.iter().map(|(_, f)| right(pin_cell(app, r, *f))));
            }
            if show_grow {
                cells.push(right(growth_cell(r)));
            }
            if show_trend {
                cells.push(Cell::from(history.map(|h| h.sparkline(&r.label)).unwrap_or_default()));
            }
            if per_process {
                // The exited marker is kept whatever is cut: grey alone
                // is invisible without colour.
                let gone = if r.gone { " (exited)" } else { "" };
                let indent = "  ".repeat(r.depth);
                let mut text = format!("{indent}{}{gone}", r.command);
                if crate::render::width::columns(&text) > command_width {
                    let label = crate::render::width::command_label(&r.command, d.as_deref());
                    let short = format!("{indent}{label}");
                    let room = command_width.saturating_sub(gone.len());
                    text = format!("{}{gone}", crate::render::width::cut(&short, room));
                }
                cells.push(Cell::from(text));
            }
            let style = if r.gone {
                Style::default().fg(Color::DarkGray)
            } else if rate.is_some_and(|t| t.steady) {
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
    let mut state = TableState::default().with_selected(Some(selected - first));
    frame.render_stateful_widget(table, area, &mut state);
}

/// The columns a pinned row adds (see `exact`): two, so that the command
/// keeps some room at 80 columns (TOUCHED and COLD are `memtally wss`'s).
const PIN_COLUMNS: [(&str, PinColumn); 2] =
    [("EXCL", PinColumn::Exclusive), ("WSET", PinColumn::WorkingSet)];

#[derive(Clone, Copy)]
enum PinColumn {
    Exclusive,
    WorkingSet,
}

/// A pinned row's figure (`…` until read, `-` where it cannot be; the
/// note line says why); nothing for a row not pinned.
fn pin_cell(app: &App, r: &ProcRow, c: PinColumn) -> String {
    if r.gone || !app.pins.iter().any(|p| p.key == r.label) {
        return String::new();
    }
    let Some(f) = app.pin_figures.get(&r.label) else { return "…".into() };
    human_opt(match c {
        PinColumn::Exclusive => f.exclusive,
        PinColumn::WorkingSet => f.working_set,
    })
}

/// How many rows the level has (for moving the cursor).
pub fn len(app: &App) -> usize {
    app.process_rows().len()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 37, item 13: the explorer cuts a cgroup as `top` does, from
    /// the left with `…`, where it cut the leaf off on the right.
    #[test]
    fn a_group_key_is_cut_with_an_ellipsis_the_cgroup_from_the_left() {
        let cg = "/user.slice/user-1000.slice/user@1000.service/app.slice/app-gnome-firefox.scope";
        let cut = key_cell(TopBy::Cgroup, cg, 25);
        assert_eq!(cut, "…/app-gnome-firefox.scope");
        assert_eq!(key_cell(TopBy::Cgroup, cg, 24), "…app-gnome-firefox.scope");
        assert_eq!(key_cell(TopBy::Program, "gnome-shell-calendar-server", 12), "gnome-shell…");
        assert_eq!(key_cell(TopBy::User, "root", 12), "root");
    }
}
