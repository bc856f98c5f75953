//! The terminal while the explorer runs: raw mode and the alternate
//! screen, put back however it ends (return, error, panic, SIGTERM,
//! SIGHUP), and the signal flag the main loop checks.

use std::io::{IsTerminal, Stdout};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::{cursor, execute, terminal};
use ratatui::Terminal;

use memtally_core::{Error, Result};

pub type Term = Terminal<CrosstermBackend<Stdout>>;

/// Refuses to start without a terminal on both ends.
pub fn require_tty() -> Result<()> {
    if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() {
        return Ok(());
    }
    Err(Error::Usage(
        "ui needs a terminal (standard input and output); for a pipe or a file use `memtally top`"
            .into(),
    ))
}

/// Puts the terminal back: main screen, cooked mode, cursor shown. Safe
/// to call more than once.
pub fn restore() {
    let _ = terminal::disable_raw_mode();
    let _ = execute!(std::io::stdout(), terminal::LeaveAlternateScreen, cursor::Show);
}

/// The explorer's hold on the terminal; dropping it restores the terminal.
pub struct Session {
    pub term: Term,
    /// Set by SIGTERM, SIGHUP or SIGINT.
    pub stop: Arc<AtomicBool>,
}

impl Session {
    pub fn start() -> Result<Session> {
        let fail = |e: std::io::Error| Error::io("the terminal", e);
        let stop = Arc::new(AtomicBool::new(false));
        for sig in
            [signal_hook::consts::SIGTERM, signal_hook::consts::SIGHUP, signal_hook::consts::SIGINT]
        {
            signal_hook::flag::register(sig, Arc::clone(&stop)).map_err(fail)?;
        }
        // A panic prints its message on the main screen, after the
        // terminal is back to normal.
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
        terminal::enable_raw_mode().map_err(fail)?;
        let mut stdout = std::io::stdout();
        if let Err(e) = execute!(stdout, terminal::EnterAlternateScreen, cursor::Hide) {
            restore();
            return Err(fail(e));
        }
        match Terminal::new(CrosstermBackend::new(stdout)) {
            Ok(term) => Ok(Session { term, stop }),
            Err(e) => {
                restore();
                Err(fail(e))
            }
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        restore();
    }
}
