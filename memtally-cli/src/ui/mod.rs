//! `memtally ui`: a full-screen explorer from the machine down to one
//! mapping, refreshed live. Every figure comes from the same use cases as
//! `top` (the process list, smaps_rollup only) and `show` (one process's
//! full smaps, read only for the process looked at).
//!
//! `app` holds the state and asks for reads, which `reader` runs on a
//! thread of its own (the list through `top`'s own `TopReader`), so keys
//! are answered while a read takes seconds; `keys` maps keys to moves; one module per level draws it
//! (`machine`, `processes`, `categories`, `mappings`), from the rows and
//! cells in `widgets`, and no level imports another; `draw` lays the frame
//! out; `history` keeps each row's samples (sparklines) and `rates` the
//! growth rates (no rate before ten samples; a group's counts its members
//! present throughout); `terminal`
//! takes the terminal and always gives it back.

mod app;
mod categories;
mod detail;
mod draw;
mod exact;
mod history;
mod keys;
mod machine;
mod mappings;
mod pace;
mod processes;
mod rates;
mod reader;
mod snapshot;
mod sort_key;
mod terminal;
mod timing;
mod widgets;

use std::time::{Duration, Instant};

use ratatui::crossterm::event::{self, Event, KeyEventKind};

use memtally_core::source::ProcRoot;
use memtally_core::{Error, Result};

pub use app::Options;

/// How often the loop looks at the signal flag while waiting for keys.
const TICK: Duration = Duration::from_millis(200);

/// How often it looks for a read's answer while one is in flight.
const ANSWER_TICK: Duration = Duration::from_millis(15);

/// Runs the explorer until `q`, Ctrl-C, SIGTERM or SIGHUP.
pub fn run(root: ProcRoot, opts: Options) -> Result<()> {
    terminal::require_tty()?;
    let mut app = app::App::new(root, &opts);
    let mut session = terminal::Session::start()?;
    let fail = |e: std::io::Error| Error::io("the terminal", e);
    let mut next = Instant::now();
    let mut dirty = true;
    let mut timing = timing::Timing::from_env();
    while !app.quit && !session.stopped() {
        let now = Instant::now();
        if now >= next {
            app.refresh();
            next = now + opts.interval;
            dirty = true;
        }
        // The reads run on their own thread; this one only draws and
        // answers keys.
        if app.collect() {
            dirty = true;
        }
        if dirty {
            session.term.draw(|f| draw::draw(f, &app)).map_err(fail)?;
            timing.drawn();
            dirty = false;
        }
        let tick = if app.reading() { ANSWER_TICK } else { TICK };
        let wait = next.saturating_duration_since(Instant::now()).min(tick);
        timing.waiting();
        let ready = event::poll(wait).map_err(fail)?;
        timing.waited();
        if ready {
            match event::read().map_err(fail)? {
                Event::Key(k) if k.kind != KeyEventKind::Release => {
                    timing.key();
                    let before = app.status.clone();
                    keys::handle(&mut app, k);
                    if app.status == before && !app.editing {
                        app.status.clear();
                    }
                    dirty = true;
                }
                Event::Resize(..) => dirty = true,
                _ => {}
            }
        }
    }
    drop(session);
    Ok(())
}
