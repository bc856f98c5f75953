//! `memtally cgroup [PATH]`: each cgroup's charge beside its processes' PSS.

use std::io::Write;

use clap::Args;

use memtally_core::source::ProcRoot;
use memtally_core::usecase::cgroup::{cgroups, CgroupOptions};
use memtally_core::Result;

use crate::cli::progress::with_progress;
use crate::render::{print, Format, Screen};

#[derive(Debug, Args)]
pub struct CgroupArgs {
    /// This cgroup and those below it (a path as /proc/PID/cgroup names it); all that hold processes by default.
    pub path: Option<String>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub fn run(root: &ProcRoot, args: &CgroupArgs, screen: Screen, out: &mut dyn Write) -> Result<()> {
    let opts = CgroupOptions::default().with_path(args.path.clone());
    let view = with_progress(|progress| cgroups(root, &opts, progress))?;
    print(&view, args.format, screen, out)
}
