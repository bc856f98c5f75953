//! `memtally shared`: who shares resident pages with whom.

use std::io::Write;

use clap::Args;

use memtally_core::analyze::top::TopBy;
use memtally_core::source::ProcRoot;
use memtally_core::usecase::shared::shared;
use memtally_core::Result;

use crate::cli::choice::choice;
use crate::cli::progress::with_progress;
use crate::cli::select::SelectArgs;
use crate::render::{print, Format, Screen};

#[derive(Debug, Args)]
pub struct SharedArgs {
    /// A process to start from: it and its descendants (as --tree PID).
    pub pid: Option<u32>,

    #[command(flatten)]
    pub select: SelectArgs,

    /// Pair up processes, programs, users, cgroups, or top-level trees.
    #[arg(long, value_parser = choice::<TopBy>(), default_value = "process")]
    pub by: TopBy,

    /// Show the first N pairs.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub top: usize,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub fn run(root: &ProcRoot, args: &SharedArgs, screen: Screen, out: &mut dyn Write) -> Result<()> {
    let mut select = args.select.selection(None)?;
    if let Some(pid) = args.pid {
        select.trees.push(pid);
    }
    let view = with_progress(|progress| shared(root, select, args.by, args.top, progress))?;
    print(&view, args.format, screen, out)
}
