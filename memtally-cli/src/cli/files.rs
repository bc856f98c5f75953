//! `memtally files`: every mapped file (and named kind of memory) across
//! processes, by PSS, with the processes that map each (smem -m, librank).

use std::io::Write;

use clap::Args;

use memtally_core::analyze::files::FileSort;
use memtally_core::model::Figure;
use memtally_core::source::ProcRoot;
use memtally_core::usecase::files::{files, FilesOptions};
use memtally_core::Result;

use crate::cli::choice::choice;
use crate::cli::progress::with_progress;
use crate::cli::select::SelectArgs;
use crate::render::files::FilesTable;
use crate::render::{print, Format, Screen};

/// What a row is, and what its figures mean (after `--help`).
const ROWS: &str = "\
Rows: every file mapped (shared libraries, executables, fonts, /dev/shm, memfd:, device nodes)
and, as librank and smem -m list them, every named kind of memory: [heap], [stack],
[anon:NAME], [vdso], and anonymous memory without a name as [anonymous]. --files-only keeps
the files.

PSS, USS (Private_Clean + Private_Dirty) and SWAP PSS are summed over the processes that map
the file: the PSS of a file over every process is its resident mapped pages, each counted
once. RSS is not summed: a page 40 processes map is in each one's RSS (smem -m's RSS adds
them up, so it reads 40 times the pages); --pids shows each process's RSS of the file.

Examples:
  memtally files                      the 20 files with the most PSS on the machine
  memtally files --files-only --pids  files only, each with the processes that map it
  memtally files --tree PID           what a browser's processes map, file by file
  memtally files --sort uss --min 1M  private file memory of at least 1M per file";

#[derive(Debug, Args)]
#[command(after_help = ROWS)]
pub struct FilesArgs {
    /// Only these processes (as --pid); every process by default.
    #[arg(value_name = "PID")]
    pub pid: Vec<u32>,

    #[command(flatten)]
    pub select: SelectArgs,

    /// Sort by these figures, largest first (comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "FIELD")]
    #[arg(default_value = "pss", value_parser = choice::<FileSort>())]
    pub sort: Vec<FileSort>,

    /// Show the first N files (totals always cover every file)
    /// [default: 20; on a terminal, as many as fit its height, at least 5].
    #[arg(long, value_name = "N", conflicts_with = "all")]
    pub top: Option<usize>,

    /// Show every file.
    #[arg(long)]
    pub all: bool,

    /// Leave out files whose first sort figure (default PSS) is below SIZE
    /// (bytes, or with K, M, G: 10M); the totals still cover them.
    #[arg(long, value_name = "SIZE", value_parser = crate::cli::diff::parse_size)]
    pub min: Option<u64>,

    /// Smallest first.
    #[arg(long)]
    pub reverse: bool,

    /// Only files: no [heap], [stack], [anon:NAME], [anonymous] nor kernel pages ([vdso]).
    #[arg(long)]
    pub files_only: bool,

    /// Under each file, the processes that map it (PID, command) with
    /// their own PSS, USS, SWAP PSS and RSS of it, as librank lists them
    /// (JSON and CSV always carry them).
    #[arg(long = "pids")]
    pub list_pids: bool,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub fn run(root: &ProcRoot, args: &FilesArgs, screen: Screen, out: &mut dyn Write) -> Result<()> {
    let sort =
        if args.sort.is_empty() { vec![FileSort::Figure(Figure::Pss)] } else { args.sort.clone() };
    // A table on a terminal, with no row count asked for, fits its screen
    // (with --pids each file takes a line per process: 20 files then).
    let fits = args.format == Format::Table && args.top.is_none() && !args.all && !args.list_pids;
    let lines = screen.height.filter(|_| fits);
    let top = match lines {
        Some(_) => None,
        None => (!args.all).then_some(args.top.unwrap_or(20)),
    };
    let opts = FilesOptions::default()
        .with_select(args.select.selection(args.pid.iter().copied())?)
        .with_sort(sort)
        .with_top(top)
        .with_min(args.min)
        .with_reverse(args.reverse)
        .with_files_only(args.files_only);
    let view = with_progress(|progress| files(root, &opts, progress))?;
    print(&FilesTable { view: &view, pids: args.list_pids, lines }, args.format, screen, out)
}
