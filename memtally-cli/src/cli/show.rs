//! `memtally show PID`: one process's memory by category, path or perms.

use std::io::Write;

use clap::Args;

use memtally_core::analyze::group::GroupSort;
use memtally_core::analyze::show::ShowBy;
use memtally_core::error::UseCase;
use memtally_core::source::ProcRoot;
use memtally_core::usecase::select::require_selection;
use memtally_core::usecase::show::{show, ShowOptions, ShowView, Shown};
use memtally_core::usecase::Silent;
use memtally_core::{Error, Result};

use crate::cli::choice::choice;
use crate::cli::progress::with_progress;
use crate::cli::select::SelectArgs;
use crate::render::pages::ExactShow;
use crate::render::show::RegionStream;
use crate::render::{print, stdout_error, Format, Screen};

/// The categories `--by category` sorts mappings into (README, docs/json.md).
const CATEGORIES: &str = "\
Categories (--by category; JSON key in brackets):
  file code [file_code]                executable file mappings: program and library code
  file read-only data [file_rodata]    read-only file mappings never written: clean, droppable
  RELRO (relocated ro) [relro]         read-only private file mappings that were written
                                       (anonymous pages): relocations the dynamic linker wrote,
                                       then made read-only; dirty copies, not file pages
  file writable data [file_data]       writable file mappings (.data, .bss of libraries)
  heap / anon rw [heap]                [heap] and private anonymous read-write memory
  stack [stack]                        [stack]
  named anon [anon_named]              [anon:NAME] memory
  anon read-only/exec [anon_other]     anonymous memory read-only, or executable without write
  writable+exec (JIT) [writable_exec]  writable and executable at once
  guard / reserved [guard]             no access (---p): guard pages, reserved address space
  shared memory [shared_memory]        /dev/shm, memfd, SysV, shared anonymous memory
  huge pages (hugetlb) [huge_pages]    hugetlbfs memory (its bytes are Shared/Private_Hugetlb)
  GPU / device [device]                device nodes (/dev/dri, /dev/nvidia*, ...)
  kernel [kernel]                      [vdso], [vvar], [vsyscall]

The total row's PSS, PSS DIRTY and SWAP PSS are the kernel's exact sums (smaps_rollup); the rows
add smaps, which rounds each mapping down to a kB: the rounding row is the difference.";

#[derive(Debug, Args)]
#[command(after_long_help = CATEGORIES)]
pub struct ShowArgs {
    /// The process to show; several PIDs (as pmap takes them), or a
    /// selection with --pid, --tree, --name, --user, --cgroup, show their
    /// regions summed (PSS counts shared pages once in total).
    #[arg(value_name = "PID")]
    pub pid: Vec<u32>,

    #[command(flatten)]
    pub select: SelectArgs,

    /// Group rows by this key.
    #[arg(long, value_parser = choice::<ShowBy>(), default_value = "category")]
    pub by: ShowBy,

    /// Show only the first N rows (totals still cover every region).
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,

    /// Sort rows by these figures, largest first (comma-separated).
    /// Default: dirty,rss by category (pss_dirty,pss over several
    /// processes); pss,rss by path or perms.
    #[arg(long, value_delimiter = ',', value_name = "FIELD", value_parser = choice::<GroupSort>())]
    pub sort: Option<Vec<GroupSort>>,

    /// List every mapping (like `pmap -X`) instead of grouped rows.
    #[arg(long, conflicts_with = "classic")]
    pub regions: bool,

    /// Print the seed mem_usage.pl table: virtual kB by backing and permissions, from maps.
    #[arg(long)]
    pub classic: bool,

    /// Page states per category instead of sizes: active/inactive LRU,
    /// referenced, huge, KSM, zero page, swap cache, unevictable, dirty,
    /// writeback (from kpageflags, as root); without root, what any reader
    /// may know (present, swapped, file, huge, zero page). One PID; live only.
    #[arg(long, conflicts_with_all = ["classic", "regions", "exact"])]
    pub pages: bool,

    /// What the selected processes give back when they end, together and
    /// each alone (EXCLUSIVE: resident pages and swap no other process
    /// maps; shared memory apart), beside PSS and USS. Needs root; live only.
    #[arg(long, conflicts_with_all = ["classic", "regions"])]
    pub exact: bool,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub fn run(root: &ProcRoot, args: &ShowArgs, screen: Screen, out: &mut dyn Write) -> Result<()> {
    // No --sort: the view's own default (which depends on how many processes).
    let sort = args.sort.clone().unwrap_or_default();
    let opts = ShowOptions::default().with_by(args.by).with_sort(sort).with_top(args.top);
    let sel = args.select.selection(args.pid.iter().copied())?;
    require_selection(&sel, UseCase::Show)?;
    // `show PID`: that process alone, streamed (`--pid PID` is a selection).
    let single = sel.single_pid().filter(|_| !args.pid.is_empty());
    let one = |flag: &str| {
        single.ok_or_else(|| Error::Usage(format!("{flag} shows one process: give just its PID")))
    };
    let view = if args.pages {
        ShowView::Pages(one("--pages")?)
    } else if args.exact {
        ShowView::Exact(sel)
    } else if args.classic {
        ShowView::Classic(one("--classic")?)
    } else if let Some(pid) = single {
        ShowView::Process(pid)
    } else {
        ShowView::Selection(sel)
    };
    let mut stream = RegionStream::new(args.format, args.regions, screen);
    let shown = match view {
        // One process: its regions are printed (or summed) as they are
        // read and never kept, so a smaps of any size runs in bounded
        // memory; a write that fails (`| head` closed the pipe) stops the
        // read.
        ShowView::Process(_) => show(root, &view, &opts, &mut stream.to(out), &Silent)?,
        _ => with_progress(|progress| show(root, &view, &opts, &mut (), progress))?,
    };
    let report = match shown {
        Shown::Pages(pages) => return print(&pages, args.format, screen, out),
        Shown::Exact(top) => return print(&ExactShow(top), args.format, screen, out),
        Shown::Classic(classic) => return print(&classic, args.format, screen, out),
        Shown::Regions(report) => report,
    };
    if let ShowView::Selection(_) = view {
        if args.format == Format::Json {
            // Several processes: each with its own regions, in memory.
            return print(&report, Format::Json, screen, out);
        }
        stream.start(&report.processes).map_err(stdout_error)?;
        for p in &report.processes {
            for r in &p.regions {
                stream.region(p, r, out).map_err(stdout_error)?;
            }
        }
    }
    stream.finish(&report, out).map_err(stdout_error)
}
