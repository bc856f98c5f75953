//! The terminal while the explorer runs: raw mode and the alternate
//! screen, put back however it ends (return, error, panic, SIGTERM,
//! SIGHUP; see [`crate::signal`]), and whether a signal asks the main
//! loop to stop.

use std::io::{IsTerminal, Stdout};

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
}

impl Session {
    pub fn start() -> Result<Session> {
        let fail = |e: std::io::Error| Error::io("the terminal", e);
        // The main loop stops on a signal between events; when it does
        // not within the signal's grace, the process is ended for it, and
        // the terminal is put back first.
        crate::signal::before_exit(Some(restore));
        // crossterm's reader loops on end-of-file once the terminal is
        // gone (a closed window, a killed tmux): then the loop never
        // comes back to look. A watcher thread ends the process itself
        // when the terminal hangs up.
        watch_for_hangup();
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
            Ok(term) => Ok(Session { term }),
            Err(e) => {
                restore();
                Err(fail(e))
            }
        }
    }
}

impl Session {
    /// Whether SIGINT, SIGTERM or SIGHUP asks the explorer to stop.
    pub fn stopped(&self) -> bool {
        crate::signal::received().is_some()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        restore();
        crate::signal::before_exit(None);
    }
}

/// Whether the terminal on standard input has gone away (hung up, closed).
fn terminal_gone() -> bool {
    use rustix::event::{poll, PollFd, PollFlags};
    let stdin = std::io::stdin();
    let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
    let zero = rustix::event::Timespec { tv_sec: 0, tv_nsec: 0 };
    let n = poll(&mut fds, Some(&zero)).unwrap_or(0);
    n > 0 && fds[0].revents().intersects(PollFlags::HUP | PollFlags::ERR | PollFlags::NVAL)
}

/// See [`Session::start`]: exits the process when the terminal is gone,
/// as a hang-up (129: the terminal's SIGHUP may never reach the loop).
fn watch_for_hangup() {
    std::thread::spawn(move || loop {
        std::thread::sleep(std::time::Duration::from_millis(200));
        if terminal_gone() {
            // Nothing is left to draw on or to restore.
            std::process::exit(crate::signal::exit_code(libc::SIGHUP));
        }
    });
}
