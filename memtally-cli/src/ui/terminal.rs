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
        // The main loop checks the flag between events, but crossterm's
        // reader loops on end-of-file once the terminal is gone (a closed
        // window, a killed tmux): then the loop never comes back to look.
        // A watcher thread ends the process itself when the terminal hangs
        // up, or when a signal's flag is not acted on within a second.
        watch_for_hangup(Arc::clone(&stop));
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

/// Whether the terminal on standard input has gone away (hung up, closed).
fn terminal_gone() -> bool {
    let mut fd = libc::pollfd { fd: libc::STDIN_FILENO, events: libc::POLLIN, revents: 0 };
    // SAFETY: poll(2) on one pollfd we own, with no timeout.
    let n = unsafe { libc::poll(&mut fd, 1, 0) };
    n > 0 && fd.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0
}

/// See [`Session::start`]: exits the process when the terminal is gone, or
/// when `stop` has been set for a second without the main loop ending it.
fn watch_for_hangup(stop: Arc<AtomicBool>) {
    std::thread::spawn(move || {
        let mut stopped_for = 0u32;
        loop {
            std::thread::sleep(std::time::Duration::from_millis(200));
            if terminal_gone() {
                // Nothing is left to draw on or to restore.
                std::process::exit(0);
            }
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                stopped_for += 1;
                if stopped_for >= 5 {
                    restore();
                    std::process::exit(0);
                }
            }
        }
    });
}
