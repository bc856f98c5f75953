//! `memtally show PID`: one process's memory by category, path or perms.

use std::io::Write;

use clap::Args;

use memtally_core::analyze::group::GroupSort;
use memtally_core::analyze::show::ShowBy;
use memtally_core::error::UseCase;
use memtally_core::source::ProcRoot;
use memtally_core::usecase::select::require_selection;
use memtally_core::usecase::show::{classic, show_process_with, show_selection, ShowOptions};
use memtally_core::{Error, Result};

use memtally_core::usecase::pages::page_view;
use memtally_core::usecase::top::{top, TopOptions};

use crate::cli::choice::choice;
use crate::cli::progress::with_progress;
use crate::cli::select::SelectArgs;
use crate::render::pages::ExactShow;
use crate::render::show::RegionStream;
use crate::render::{print, stdout_error, Format};

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

pub fn run(root: &ProcRoot, args: &ShowArgs, out: &mut dyn Write) -> Result<()> {
    // No --sort: the view's own default (which depends on how many processes).
    let sort = args.sort.clone().unwrap_or_default();
    let opts = ShowOptions::default().with_by(args.by).with_sort(sort).with_top(args.top);
    let sel = args.select.selection(args.pid.iter().copied())?;
    require_selection(&sel, UseCase::Show)?;
    // Exactly one PID and nothing else: that process alone, streamed.
    let single = args.pid.first().copied().filter(|_| {
        sel.pids.len() == 1
            && sel.trees.is_empty()
            && sel.name.is_none()
            && sel.uids.is_empty()
            && sel.cgroup.is_none()
    });
    if args.pages {
        let Some(pid) = single else {
            return Err(Error::Usage("--pages shows one process: give just its PID".into()));
        };
        return print(&page_view(root, pid)?, args.format, out);
    }
    if args.exact {
        let opts = TopOptions::default().with_select(sel).with_top(None).with_exact(true);
        let view = with_progress(|progress| top(root, &opts, progress))?;
        return print(&ExactShow(view), args.format, out);
    }
    if args.classic {
        let Some(pid) = single else {
            return Err(Error::Usage("--classic shows one process: give just its PID".into()));
        };
        return print(&classic(root, pid)?, args.format, out);
    }
    let mut stream = RegionStream::new(args.format, args.regions);
    // One process: its regions are printed (or summed) as they are read
    // and never kept, so a smaps of any size runs in bounded memory.
    if let Some(pid) = single {
        // A write that fails (`| head` closed the pipe) stops the read.
        let report = show_process_with(root, pid, &opts, &mut stream.to(out))?;
        return stream.finish(&report, out).map_err(stdout_error);
    }
    let report = with_progress(|progress| show_selection(root, &sel, &opts, progress))?;
    if args.format == Format::Json {
        // Several processes: each with its own regions, in memory.
        return print(&report, Format::Json, out);
    }
    stream.start(&report.processes).map_err(stdout_error)?;
    for p in &report.processes {
        for r in &p.regions {
            stream.region(p, r, out).map_err(stdout_error)?;
        }
    }
    stream.finish(&report, out).map_err(stdout_error)
}
