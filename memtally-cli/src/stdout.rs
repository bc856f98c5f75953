//! Standard output as the commands write it, and the screen it is for.

use std::io::{self, IsTerminal, Write};

use crate::render::Screen;

/// Where the commands' output goes: when standard output is not a
/// terminal, a duplicate of its descriptor, written as it is given;
/// otherwise the process's `Stdout` (line buffered, and shared with the
/// full-screen explorer, which draws through it).
///
/// `Stdout` searches each write for its last newline (it is a
/// `LineWriter`): a document streamed in large chunks without newlines,
/// such as `vmmap --format json`, was read through a second time by that
/// search, 4.7% of its instructions (callgrind, 100,000 regions).
pub fn writer() -> Box<dyn Write> {
    let stdout = io::stdout();
    if !stdout.is_terminal() {
        #[cfg(unix)]
        if let Ok(fd) = std::os::fd::AsFd::as_fd(&stdout).try_clone_to_owned() {
            return Box::new(std::fs::File::from(fd));
        }
    }
    Box::new(stdout.lock())
}

/// The screen of standard output, decided once for every printer. Its
/// width as `ps` (procps) decides it: `COLUMNS` when it is set to a
/// positive number (on a terminal or not), else the terminal's width when
/// standard output is one. Its height: `LINES` when it is set to a
/// positive number, else the terminal's, and none when standard output is
/// not a terminal (only a terminal's output is fitted to a screen).
pub fn screen() -> Screen {
    use terminal_size::{Height, Width};
    let stdout = io::stdout();
    let tty = stdout.is_terminal();
    let size = tty.then(|| terminal_size::terminal_size_of(&stdout)).flatten();
    let var = |name| std::env::var(name).ok();
    let positive = |n: u16| (n > 0).then_some(usize::from(n));
    let width = || size.and_then(|(Width(w), _)| positive(w));
    let height = || size.and_then(|(_, Height(h))| positive(h));
    Screen {
        width: size_from(var("COLUMNS").as_deref(), width),
        height: tty.then(|| size_from(var("LINES").as_deref(), height)).flatten(),
    }
}

/// A size from an environment variable's value when it is a positive
/// number, else as the terminal says.
fn size_from(value: Option<&str>, terminal: impl FnOnce() -> Option<usize>) -> Option<usize> {
    match value.and_then(|c| c.trim().parse::<usize>().ok()) {
        Some(n) if n > 0 => Some(n),
        _ => terminal(),
    }
}

#[cfg(test)]
mod tests {
    use super::size_from;

    #[test]
    fn columns_wins_else_the_terminal_else_nothing() {
        assert_eq!(size_from(Some("100"), || Some(80)), Some(100));
        assert_eq!(size_from(Some("100"), || None), Some(100));
        assert_eq!(size_from(None, || Some(80)), Some(80));
        assert_eq!(size_from(Some(""), || Some(80)), Some(80));
        assert_eq!(size_from(Some("0"), || None), None);
        assert_eq!(size_from(Some("wide"), || None), None);
        assert_eq!(size_from(None, || None), None);
    }
}
