//! Keys: what each one does at each level.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use memtally_core::analyze::top::TopBy;
use memtally_core::model::Named;

use crate::render::errors::Worded;
use crate::ui::app::{App, Level};
use crate::ui::exact::Pin;
use crate::ui::{categories, mappings, processes, snapshot};

/// The help screen's lines: key, what it does.
pub const HELP: &[(&str, &str)] = &[
    ("Enter / →", "go down: machine → processes → categories → mappings"),
    ("Esc / Backspace / ←", "go up"),
    ("↑ ↓ PgUp PgDn Home End", "move"),
    ("/", "filter the processes by name (Enter keeps it, Esc clears it)"),
    ("s", "cycle the sort: pss, uss, rss, dirty, swap, gpu, growth"),
    ("g", "cycle the grouping: process, program, user, cgroup, tree"),
    ("x", "pin the row: its EXCL (bytes no other process maps; root) and WSET (working set; resets its referenced bits) each refresh; x again unpins"),
    ("w", "write a snapshot of what is shown (as `memtally snapshot`)"),
    ("?", "this help (any key closes it)"),
    ("q / Ctrl-C", "quit"),
];

/// Handles one key press.
pub fn handle(app: &mut App, key: KeyEvent) {
    if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
        app.quit = true;
        return;
    }
    if app.help {
        app.help = false;
        return;
    }
    if app.editing {
        edit_filter(app, key.code);
        return;
    }
    match key.code {
        KeyCode::Char('q') => app.quit = true,
        KeyCode::Char('?') => app.help = true,
        KeyCode::Enter | KeyCode::Right | KeyCode::Char('l') => app.enter(),
        KeyCode::Esc | KeyCode::Backspace | KeyCode::Left | KeyCode::Char('h') => {
            if app.level == Level::Processes && !app.filter.is_empty() && key.code == KeyCode::Esc {
                app.filter.clear();
            } else {
                app.back();
            }
        }
        KeyCode::Char('/') => {
            if app.level == Level::Machine {
                app.level = Level::Processes;
            }
            if app.level == Level::Processes {
                app.editing = true;
                app.cursor[1] = 0;
            }
        }
        KeyCode::Char('s') => {
            app.sort = app.sort.next();
            app.status = format!("sorted by {}", app.sort.name());
            app.refresh_top();
        }
        KeyCode::Char('g') if app.level == Level::Processes && app.group.is_none() => {
            let i = TopBy::ALL.iter().position(|&b| b == app.by).unwrap_or(0);
            app.by = TopBy::ALL[(i + 1) % TopBy::ALL.len()];
            app.cursor[1] = 0;
            app.ghosts.clear();
            // The pinned rows are another grouping's: measured no more.
            app.pins.clear();
            app.pin_figures.clear();
            app.pins_note = None;
            app.rates.regroup();
            app.status = format!("grouped by {}", app.by.name());
            app.refresh_top();
        }
        KeyCode::Char('x') if app.level == Level::Processes => pin(app),
        KeyCode::Char('w') => {
            app.status = match snapshot::write(app) {
                Ok(path) => format!("snapshot written to {}", path.display()),
                Err(e) => format!("snapshot not written: {}", Worded(&e)),
            }
        }
        KeyCode::Up | KeyCode::Char('k') => step(app, -1),
        KeyCode::Down | KeyCode::Char('j') => step(app, 1),
        KeyCode::PageUp => step(app, -20),
        KeyCode::PageDown => step(app, 20),
        KeyCode::Home => step(app, i64::MIN / 2),
        KeyCode::End => step(app, i64::MAX / 2),
        _ => {}
    }
}

/// `x`: pins the row under the cursor (its processes: the row's, or a
/// group's members), or unpins it.
fn pin(app: &mut App) {
    let rows = app.process_rows();
    let Some(row) = rows.get(app.cursor[1]).filter(|r| !r.gone) else { return };
    if let Some(i) = app.pins.iter().position(|p| p.key == row.label) {
        app.pins.remove(i);
        app.pin_figures.remove(&row.label);
        app.status = format!("{} unpinned", row.label);
        if app.pins.is_empty() {
            app.pins_note = None;
        }
    } else {
        let pids = match row.pid {
            Some(pid) => vec![pid],
            None => snapshot::members(app, &row.label),
        };
        let Some(top) = &app.top else { return };
        let procs = top
            .scan
            .processes
            .iter()
            .filter(|p| pids.contains(&p.info.pid))
            .map(|p| (p.info.pid, p.info.comm.clone()))
            .collect();
        app.pins.push(Pin { key: row.label.clone(), procs });
        app.status = format!("{} pinned: EXCL and WSET at the next refreshes", row.label);
    }
    app.refresh_pins();
}

fn edit_filter(app: &mut App, code: KeyCode) {
    match code {
        KeyCode::Enter => app.editing = false,
        KeyCode::Esc => {
            app.editing = false;
            app.filter.clear();
        }
        KeyCode::Backspace => {
            app.filter.pop();
        }
        KeyCode::Char(c) if !c.is_control() && app.filter.len() < 200 => app.filter.push(c),
        _ => {}
    }
    app.cursor[1] = 0;
}

/// How many rows the current level has.
pub fn rows_here(app: &App) -> usize {
    match app.level {
        Level::Machine => 0,
        Level::Processes => processes::len(app),
        Level::Categories => categories::len(app),
        Level::Mappings => mappings::len(app),
    }
}

fn step(app: &mut App, by: i64) {
    let n = rows_here(app) as i64;
    let i = app.level_index();
    app.cursor[i] = (app.cursor[i] as i64 + by).clamp(0, (n - 1).max(0)) as usize;
}
