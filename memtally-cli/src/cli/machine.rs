//! `memtally machine`: MemTotal split into lines that add up exactly.

use std::io::Write;

use clap::Args;

use memtally_core::source::ProcRoot;
use memtally_core::usecase::machine::machine;
use memtally_core::Result;

use crate::cli::progress::with_progress;
use crate::render::{print, Format, Screen};

#[derive(Debug, Args)]
pub struct MachineArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub fn run(root: &ProcRoot, args: &MachineArgs, screen: Screen, out: &mut dyn Write) -> Result<()> {
    let view = with_progress(|progress| machine(root, progress))?;
    print(&view, args.format, screen, out)
}
