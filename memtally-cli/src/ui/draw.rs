//! The frame: a title line, the level's screen, the notes and status
//! line, the key line; the help over it all when asked.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use ratatui::Frame;

use memtally_core::model::Named;

use crate::render::table::escape_controls;
use crate::ui::app::{App, Level};
use crate::ui::keys::HELP;
use crate::ui::{categories, machine, mappings, processes};

pub fn draw(frame: &mut Frame, app: &App) {
    let [title, body, notes, keys] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    frame.render_widget(
        Paragraph::new(Line::from(Span::styled(
            title_line(app),
            Style::default().add_modifier(Modifier::REVERSED),
        ))),
        title,
    );
    match app.level {
        Level::Machine => machine::draw(frame, body, app),
        Level::Processes => processes::draw(frame, body, app),
        Level::Categories => categories::draw(frame, body, app),
        Level::Mappings => mappings::draw(frame, body, app),
    }
    frame.render_widget(Paragraph::new(note_line(app)), notes);
    frame.render_widget(Paragraph::new(key_line(app)), keys);
    if app.help {
        help(frame, body);
    }
}

/// Where the user is.
fn title_line(app: &App) -> String {
    let mut s = String::from("memtally ui");
    let n = app.top.as_ref().map_or(0, |t| t.scan.processes.len());
    match app.level {
        Level::Machine => s.push_str(" · machine"),
        Level::Processes => {
            let n = crate::render::units::plural(n, "process", "processes");
            s.push_str(&format!(" · {n} · by {}", app.by.name()));
            if let Some((by, key)) = &app.group {
                s.push_str(&format!(" · {} {}", by.name(), escape_controls(key.clone())));
            }
        }
        Level::Categories | Level::Mappings => {
            let head = app
                .detail
                .as_ref()
                .and_then(|d| d.report.as_ref())
                .map(|r| crate::render::show::heading(&r.processes, None))
                .unwrap_or_else(|| format!("pid {}", app.pid.unwrap_or(0)));
            s.push_str(&format!(" · {head}"));
            if let (Level::Mappings, Some(c)) = (app.level, app.category) {
                s.push_str(&format!(" · {}", c.label()));
            }
        }
    }
    s.push_str(&format!(" · every {}", humantime::format_duration(app.interval)));
    if !app.root.is_live() {
        s.push_str(&format!(" · recorded {}", app.root.path().display()));
    }
    s
}

/// What the reader must know now: an error, an exit, unreadable
/// processes, a message from the last key.
fn note_line(app: &App) -> Line<'static> {
    let warn = Style::default().add_modifier(Modifier::BOLD);
    if app.detail_pending() {
        // The read runs on its own thread; what is below is the last one.
        return Line::from(format!("reading pid {}'s smaps…", app.pid.unwrap_or(0)));
    }
    if let Some(d) =
        app.detail.as_ref().filter(|_| matches!(app.level, Level::Categories | Level::Mappings))
    {
        if let Some(t) = d.gone {
            let msg = format!(
                "pid {} exited {} s ago; these are its last figures",
                app.pid.unwrap_or(0),
                t.elapsed().as_secs()
            );
            return Line::from(Span::styled(msg, warn));
        }
        if let Some(e) = &d.error {
            return Line::from(Span::styled(e.clone(), warn));
        }
    }
    if let Some(e) = &app.top_error {
        return Line::from(Span::styled(e.clone(), warn));
    }
    if !app.status.is_empty() {
        return Line::from(app.status.clone());
    }
    if let Some(top) = &app.top {
        let restricted = top.scan.restricted.len();
        if restricted > 0 && app.level != Level::Categories && app.level != Level::Mappings {
            return Line::from(format!(
                "{} could not be read in detail (permission denied): RSS only, - for PSS/USS/dirty; root sees them",
                crate::render::units::plural(restricted, "process", "processes")
            ));
        }
    }
    Line::from("")
}

fn key_line(app: &App) -> Line<'static> {
    let filter = if app.editing {
        format!("filter: {}█  (Enter keeps, Esc clears)  ", app.filter)
    } else if !app.filter.is_empty() {
        format!("filter: {}  ", app.filter)
    } else {
        String::new()
    };
    let keys = match app.level {
        Level::Machine => "Enter processes  / filter  w snapshot  ? keys  q quit",
        Level::Processes => {
            "Enter open  Esc up  / filter  s sort  g group  w snapshot  ? keys  q quit"
        }
        Level::Categories => "Enter mappings  Esc up  w snapshot  ? keys  q quit",
        Level::Mappings => "Esc up  w snapshot  ? keys  q quit",
    };
    let sort = if app.level == Level::Processes {
        format!("sort {}  ", app.sort.name())
    } else {
        String::new()
    };
    Line::from(format!("{filter}{sort}{keys}"))
}

fn help(frame: &mut Frame, area: Rect) {
    let width = area.width.min(78);
    let height = (HELP.len() as u16 + 2).min(area.height);
    let popup = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    };
    let lines: Vec<Line> =
        HELP.iter().map(|(k, what)| Line::from(format!("{k:<22} {what}"))).collect();
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(Block::default().borders(Borders::ALL).title("keys")),
        popup,
    );
}
