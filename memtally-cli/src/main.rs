use std::io::{BufWriter, Write};
use std::process::ExitCode;

mod cli;
mod exit;
mod heap;
mod render;
mod signal;
mod stdout;
#[cfg(test)]
mod testdata;
// The printers tested in process on the repository's recordings; not in
// the published crate (build.rs).
#[cfg(all(test, memtally_repo))]
mod tests;
#[cfg(feature = "ui")]
mod ui;

fn main() -> ExitCode {
    heap::one_arena();
    // The screen the output is for, once: every printer is given it.
    let screen = stdout::screen();
    let cli = cli::parse(screen.width);
    // Most commands read Linux's /proc: elsewhere, one line and exit 2.
    if let Some(line) = cli::platform::refusal(cli::platform::System::current(), &cli) {
        eprintln!("memtally: {line}");
        return ExitCode::from(exit::USAGE as u8);
    }
    if let Err(e) = signal::install() {
        eprintln!("memtally: cannot take SIGINT, SIGTERM and SIGHUP: {e}");
        return ExitCode::from(exit::FAILURE as u8);
    }
    // 64 KiB a write: `top --all --format json` of 3,000 processes made
    // 575 writes of 8 KiB, a seventh of a system call per process. What
    // streams (watch, serve's log) flushes as it goes.
    let mut out = BufWriter::with_capacity(64 << 10, stdout::writer());
    let result = cli::run(cli, screen, &mut out)
        .and_then(|()| out.flush().map_err(|e| memtally_core::Error::io("standard output", e)));
    let code = match result {
        Ok(()) => exit::OK,
        // `memtally ... | head` closing the pipe early is not an error.
        Err(memtally_core::Error::Io { source, .. })
            if source.kind() == std::io::ErrorKind::BrokenPipe =>
        {
            exit::OK
        }
        Err(e) => {
            eprintln!("memtally: {}", render::errors::Worded(&e));
            exit::exit_code(&e)
        }
    };
    // A command a signal stopped has kept what it promised (the samples
    // taken, a whole file or none); its status still says it was stopped.
    match signal::stopped_by() {
        Some(sig) => ExitCode::from(signal::exit_code(sig) as u8),
        None => ExitCode::from(code as u8),
    }
}
