use std::io::{BufWriter, Write};
use std::process::ExitCode;

use clap::Parser;

use memtally_core::error::exit;

mod cli;
mod render;
#[cfg(feature = "ui")]
mod ui;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let result = cli::run(cli, &mut out)
        .and_then(|()| out.flush().map_err(|e| memtally_core::Error::io("standard output", e)));
    match result {
        Ok(()) => ExitCode::from(exit::OK as u8),
        // `memtally ... | head` closing the pipe early is not an error.
        Err(memtally_core::Error::Io { source, .. })
            if source.kind() == std::io::ErrorKind::BrokenPipe =>
        {
            ExitCode::from(exit::OK as u8)
        }
        Err(e) => {
            eprintln!("memtally: {e}");
            ExitCode::from(e.exit_code() as u8)
        }
    }
}
