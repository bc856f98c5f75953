//! `memtally show PID`: one process's memory by category, path or perms.

use std::io::Write;

use clap::Args;

use crate::analyze::classic::classic;
use crate::analyze::report::{build, ShowBy, SORT_FIELDS};
use crate::error::{Error, Result};
use crate::render::{self, Format};
use crate::source::ProcRoot;

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The process to show.
    pub pid: u32,

    /// Group rows by this key.
    #[arg(long, value_enum, default_value_t = ShowBy::Category)]
    pub by: ShowBy,

    /// Show only the first N rows (totals still cover every region).
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,

    /// Sort rows by these figures, largest first (comma-separated):
    /// dirty, private_dirty, shared_dirty, rss, pss, uss, clean, swap,
    /// swap_pss, size, regions, anonymous, locked.
    #[arg(long, value_delimiter = ',', default_value = "dirty,rss", value_name = "FIELD")]
    pub sort: Vec<String>,

    /// List every mapping (like `pmap -X`) instead of grouped rows.
    #[arg(long, conflicts_with = "classic")]
    pub regions: bool,

    /// Print the seed mem_usage.pl table: virtual kB by backing and permissions, from maps.
    #[arg(long)]
    pub classic: bool,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub fn run(root: &ProcRoot, args: &ShowArgs, out: &mut dyn Write) -> Result<()> {
    for f in &args.sort {
        if !SORT_FIELDS.contains(&f.as_str()) {
            return Err(Error::Usage(format!(
                "--sort {f}: unknown field; use one of {}",
                SORT_FIELDS.join(", ")
            )));
        }
    }
    if args.classic {
        return show_classic(root, args, out);
    }
    let process = root.process(args.pid)?;
    let processes = [process];
    let report = build(&processes, args.by, &args.sort, args.top);
    let written = match (args.format, args.regions) {
        (Format::Table, false) => render::show::table(&report, out),
        (Format::Table, true) => render::show::regions_table(&report, out),
        (Format::Json, _) => render::show::json(&report, out),
        (Format::Csv, regions) => render::show::csv(&report, regions, out),
    };
    written.map_err(|e| Error::io("standard output", e))
}

/// The seed's table reads `maps` as the seed does, so it works where only
/// maps is readable.
fn show_classic(root: &ProcRoot, args: &ShowArgs, out: &mut dyn Write) -> Result<()> {
    if args.format != Format::Table {
        return Err(Error::Usage(
            "--classic prints the seed's text table only; drop --format, or use --format json without --classic for exact bytes".into(),
        ));
    }
    let regions = root.read_regions(args.pid, "maps")?;
    render::classic::classic(&classic(&regions), out).map_err(|e| Error::io("standard output", e))
}

/// With no arguments: the calling shell's memory by category, with a hint
/// of what else there is.
pub fn run_default(root: &ProcRoot, out: &mut dyn Write) -> Result<()> {
    let pid = std::os::unix::process::parent_id();
    let args = ShowArgs {
        pid,
        by: ShowBy::Category,
        top: None,
        sort: vec!["dirty".into(), "rss".into()],
        regions: false,
        classic: false,
        format: Format::Table,
    };
    run(root, &args, out)?;
    writeln!(out, "\n(this is memtally's parent process; `memtally show PID` for another, `memtally --help` for more)")
        .map_err(|e| Error::io("standard output", e))
}
