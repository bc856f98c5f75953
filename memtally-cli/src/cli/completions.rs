//! `memtally completions SHELL`: the shell completion script, generated
//! by clap_complete from the same clap definition the binary parses with,
//! so it always offers the subcommands and options this build has.

use std::io::Write;

use clap::{Args, CommandFactory};
use clap_complete::Shell;

use memtally_core::{Error, Result};

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to write a completion script for.
    ///
    /// bash: save as ~/.local/share/bash-completion/completions/memtally;
    /// zsh: as _memtally in a directory of $fpath; fish: as
    /// ~/.config/fish/completions/memtally.fish. The Debian package
    /// installs all three system-wide.
    #[arg(value_name = "SHELL")]
    pub shell: Shell,
}

pub fn run(args: &CompletionsArgs, out: &mut dyn Write) -> Result<()> {
    let mut cmd = super::Cli::command();
    // clap_complete panics when its writer fails (a closed pipe): generate
    // in memory, then write, so a failure is an ordinary I/O error.
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "memtally", &mut script);
    out.write_all(&script).map_err(|e| Error::io("standard output", e))
}
