//! The frame: a title line, the level's screen, the notes and status
//! line, the key line; the help over it all when asked.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;
use std::time::Duration;

use memtally_core::model::{Named, Note};

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
        // The mappings of a category just chosen are not read yet: no
        // list rather than the last read's (which kept none of them).
        Level::Mappings if app.detail_pending() => {}
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
            let all = crate::render::units::plural(n, "process", "processes");
            // The grouping of the rows shown (the next is read on its own thread).
            let by = app.top.as_ref().map_or(app.by, |t| t.report.by);
            if app.filter.is_empty() && app.group.is_none() {
                s.push_str(&format!(" · {all} · by {}", by.name()));
            } else {
                // What the filter or the group entered shows, of all.
                let shown: usize =
                    app.process_rows().iter().filter(|r| !r.gone).map(|r| r.processes).sum();
                s.push_str(&format!(" · {shown} of {all} · by {}", by.name()));
            }
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
    if let Some(every) = app.pace.every {
        // The list's reads would cost more than --max-cpu at every refresh.
        let every = Duration::from_millis(every.as_millis() as u64 / 100 * 100);
        s.push_str(&format!(
            " · list every {} (--max-cpu {})",
            humantime::format_duration(every),
            app.pace.percent()
        ));
    }
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
    // What the pinned rows' figures lack (`x`): frames hidden, live-only.
    if let Some(n) = app.pins_note.as_ref().filter(|_| app.level == Level::Processes) {
        return Line::from(Span::styled(n.clone(), warn));
    }
    if let Some(top) = &app.top {
        // `top`'s own note, worded once (render::notes): what it says of
        // who may read them holds for root too (a security module).
        let restricted = top.notes().into_iter().find(|n| matches!(n, Note::Restricted { .. }));
        if let Some(note) =
            restricted.filter(|_| matches!(app.level, Level::Machine | Level::Processes))
        {
            return Line::from(crate::render::notes::word(&note));
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
    let width = area.width.min(80);
    let lines = help_lines(usize::from(width.saturating_sub(2)));
    let height = (lines.len() as u16 + 2).min(area.height);
    let popup = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    };
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(lines.into_iter().map(Line::from).collect::<Vec<_>>())
            .block(Block::default().borders(Borders::ALL).title("keys")),
        popup,
    );
}

/// The keys box's lines at `width` columns inside the box: each key, and
/// what it does wrapped under the description's first column (never to
/// the box's edge), so every key shows at 80x24.
fn help_lines(width: usize) -> Vec<String> {
    let key_width = HELP.iter().map(|(k, _)| k.chars().count()).max().unwrap_or(0);
    let room = width.saturating_sub(key_width + 1).max(10);
    let mut out = Vec::new();
    for (k, what) in HELP {
        let mut line = format!("{k:<key_width$} ");
        let mut used = 0;
        for word in what.split(' ') {
            let n = word.chars().count();
            if used > 0 && used + 1 + n > room {
                out.push(std::mem::take(&mut line).trim_end().to_string());
                line = " ".repeat(key_width + 1);
                used = 0;
            }
            if used > 0 {
                line.push(' ');
                used += 1;
            }
            line.push_str(word);
            used += n;
        }
        out.push(line.trim_end().to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key has its line, and no line passes the box's inside.
    #[test]
    fn the_keys_box_holds_every_key_within_its_width() {
        for width in [40, 58, 78] {
            let lines = help_lines(width);
            for (k, _) in HELP {
                assert!(lines.iter().any(|l| l.starts_with(k)), "{k} at {width}: {lines:#?}");
            }
            assert!(lines.iter().all(|l| l.chars().count() <= width), "{width}: {lines:#?}");
        }
    }
}
