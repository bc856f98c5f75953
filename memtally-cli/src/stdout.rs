//! Standard output as the commands write it.

use std::io::{self, IsTerminal, Write};

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
