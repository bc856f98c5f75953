//! `memtally top`: every process at once, ranked, without double counting.

use std::io::Write;

use clap::Args;

use memtally_core::analyze::top::{TopBy, TopSort};
use memtally_core::model::Figure;
use memtally_core::source::ProcRoot;
use memtally_core::usecase::top::{top, TopOptions};
use memtally_core::Result;

use crate::cli::choice::choice;
use crate::cli::progress::with_progress;
use crate::cli::select::SelectArgs;
use crate::render::{print, Format};

#[derive(Debug, Args)]
pub struct TopArgs {
    #[command(flatten)]
    pub select: SelectArgs,

    /// Group processes: one row per process, program, user, cgroup, or as a tree.
    #[arg(long, value_parser = choice::<TopBy>(), default_value = "process")]
    pub by: TopBy,

    /// Show the first N rows (totals always cover every selected process).
    #[arg(long, value_name = "N", default_value_t = 20, conflicts_with = "all")]
    pub top: usize,

    /// Show every row.
    #[arg(long)]
    pub all: bool,

    /// Sort by these figures, largest first (comma-separated; pid smallest
    /// first).
    #[arg(long, value_delimiter = ',', value_name = "FIELD")]
    #[arg(default_value = "pss", value_parser = choice::<TopSort>())]
    pub sort: Vec<TopSort>,

    /// Add EXCLUSIVE: what each row gives back when its processes end
    /// (resident pages and swap no process outside the row maps; shared
    /// memory apart), from the page tables. Needs root (CAP_SYS_ADMIN);
    /// live only. Costs a read of every selected process's resident pages.
    #[arg(long)]
    pub exact: bool,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

impl Default for TopArgs {
    /// What `memtally` with no command shows.
    fn default() -> TopArgs {
        TopArgs {
            select: SelectArgs::default(),
            by: TopBy::Process,
            top: 20,
            all: false,
            sort: vec![TopSort::Figure(Figure::Pss)],
            exact: false,
            format: Format::Table,
        }
    }
}

pub fn run(root: &ProcRoot, args: &TopArgs, out: &mut dyn Write) -> Result<()> {
    let opts = TopOptions::default()
        .with_select(args.select.selection(None)?)
        .with_by(args.by)
        .with_sort(args.sort.clone())
        .with_top((!args.all).then_some(args.top))
        .with_every_identity(args.format != Format::Table)
        .with_exact(args.exact);
    let view = with_progress(|progress| top(root, &opts, progress))?;
    print(&view, args.format, out)
}
