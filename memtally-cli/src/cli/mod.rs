//! The command line: clap definitions, one file per subcommand. Each one
//! parses its arguments into the library's options, calls the use case
//! (`memtally_core::usecase`), and hands the result to a printer
//! (`crate::render`). `main.rs` only parses, calls [`run`], and maps
//! errors to exit codes.

mod capture;
mod cgroup;
mod choice;
mod completions;
mod diff;
mod duration;
#[cfg(feature = "serve")]
mod export;
mod faults;
mod files;
mod gpu;
mod help;
mod machine;
mod man;
#[cfg(feature = "serve")]
mod metrics;
pub(crate) mod platform;
#[cfg(feature = "plot")]
mod plot;
mod progress;
mod report;
#[cfg(feature = "schema")]
mod schema;
mod select;
#[cfg(feature = "serve")]
pub(crate) mod serve;
mod shared;
mod show;
pub(crate) mod snapshot;
mod top;
#[cfg(feature = "ui")]
mod ui;
mod vmmap;
mod watch;
mod wss;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use memtally_core::source::ProcRoot;
use memtally_core::Result;

use crate::render::Screen;

/// Where does this process's memory really go?
///
/// memtally reads Linux /proc smaps (exact resident, proportional, dirty and
/// swapped bytes per mapping) and macOS vmmap output, and shows what each
/// process's memory is, by category, path or region.
#[derive(Debug, Parser)]
#[command(name = "memtally", version = env!("MEMTALLY_VERSION"), about, long_about = None, after_help = EXAMPLES)]
pub struct Cli {
    /// Read this recorded /proc tree instead of the live /proc (see `memtally capture`).
    #[arg(long, global = true, value_name = "DIR")]
    pub proc_root: Option<PathBuf>,

    /// Read cgroups from the host's cgroup filesystem mounted at DIR
    /// instead of /sys/fs/cgroup (in a container: where the host's
    /// /sys/fs/cgroup is mounted, beside --proc-root /host/proc). Inside a
    /// private cgroup namespace, cgroup paths are then named as on the host.
    #[arg(long, global = true, value_name = "DIR")]
    pub cgroup_root: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Option<Command>,
}

pub(crate) const EXAMPLES: &str = "\
Examples:
  memtally                          every process by PSS, and the machine's picture
  memtally top --by program         processes of one program added up (like ps_mem)
  memtally top --tree PID           a browser and all its children
  memtally ui                       live explorer: Enter goes down to a process, its categories, its mappings
  memtally show $$                  where this shell's memory goes, by category
  memtally show PID --by path       one row per shared library and named region
  memtally show PID --regions       every mapping, like pmap -X
  memtally show PID --classic       the 2004 mem_usage.pl table
  memtally show PID --pages         page states per category (LRU, referenced, THP, KSM, dirty)
  memtally top --by tree --exact    what each tree gives back when it ends (root)
  memtally shared PID               which of a family share the most pages (root)
  memtally files --pids             every library and file by PSS across processes, who maps it
  memtally capture PID -o DIR       record /proc files; read later with --proc-root DIR
  memtally snapshot PID -o a.json   then later: memtally diff a.json b.json
  memtally report -o report.html    one self-contained HTML page: treemap, waterfall, every process
  memtally watch PID -o s.csv       growth rates; memtally plot s.csv -o s.svg
  memtally wss PID --interval 5s    what it touched in 5 s: its working set, and what is cold
  memtally faults PID --for 30s     which code made its memory grow: page faults by stack (root)
  memtally vmmap saved.txt          macOS vmmap: GPU memory by purgeable state
  memtally cgroup [PATH]            containers: charge, limit, working set beside their processes' PSS
  memtally machine                  MemTotal split into lines that add up, each with its source
  memtally gpu                      GPU memory per process (DRM fdinfo, dma-buf, nvidia-smi)
  memtally serve                    Prometheus metrics on 127.0.0.1:9464/metrics
  memtally completions bash         a shell completion script (also zsh, fish)";

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Every process at once, ranked by PSS, with the machine's picture (the default). Prints
    /// once and exits, like `top -b -n1`; `memtally ui` is the live, interactive view.
    ///
    /// A total or a row of several processes adds up only figures that divide shared pages (PSS,
    /// PSS DIRTY, SWAP PSS with swapped shared memory once) or count private ones; RSS stays per
    /// process.
    ///
    /// Per file across processes (each shared library's PSS, and who maps it): memtally files.
    Top(top::TopArgs),
    /// Every mapped file (shared libraries, fonts, /dev/shm) and named kind of memory ([heap])
    /// across processes: PSS, USS, swap summed over the processes that map each, and which those
    /// are (smem -m, librank).
    Files(files::FilesArgs),
    /// Full-screen live explorer: machine -> processes -> one process's categories -> its mappings.
    #[cfg(feature = "ui")]
    Ui(ui::UiArgs),
    /// One process's memory by category, path or permissions, from smaps.
    Show(show::ShowArgs),
    /// Who shares resident pages with whom: the pairs of processes (or programs, users, cgroups,
    /// trees) that share the most, with what that is of each one's PSS. Needs root; live only.
    Shared(shared::SharedArgs),
    /// Everything show and top know about a selection, at one moment, as JSON (for diff and plot).
    Snapshot(snapshot::SnapshotArgs),
    /// What grew and what shrank between two snapshots.
    Diff(diff::DiffArgs),
    /// One self-contained HTML page to look at and attach to a bug: machine waterfall, treemap
    /// (group -> process -> category -> mapping), every process, notes; carries its snapshot.
    Report(report::ReportArgs),
    /// Sample a selection at an interval; growth rates and a verdict at the end (Ctrl-C to stop).
    ///
    /// Totals of several processes add up PSS, PSS dirty (Pss_Dirty) and swap PSS only.
    Watch(watch::WatchArgs),
    /// The working set over an interval: touched, working set (dirty + clean file pages touched), cold.
    ///
    /// Per process and category: resident, touched during the interval, the 2004 mail's working
    /// set (every dirty page plus the clean file-backed pages touched) and cold (resident, not
    /// touched). Resets the selected processes' referenced bits (clear_refs), which may sway the
    /// kernel's reclaim; never any other process's.
    Wss(wss::WssArgs),
    /// Which code made the memory grow: page faults sampled with their call stacks
    /// (perf_event_open), bytes by category, read or written, and the top stacks of each.
    Faults(faults::FaultsArgs),
    /// Draw a watch series or a snapshot as an SVG chart.
    #[cfg(feature = "plot")]
    Plot(plot::PlotArgs),
    /// Record a process's /proc files into DIR, to analyse later with --proc-root DIR.
    Capture(capture::CaptureArgs),
    /// macOS vmmap output (saved, or run with --pid) by region type and purgeable state.
    Vmmap(vmmap::VmmapArgs),
    /// Serve per-process memory as Prometheus metrics over HTTP (/metrics).
    #[cfg(feature = "serve")]
    Serve(serve::ServeArgs),
    /// The metrics of `serve`, once: on stdout, or atomically into a node_exporter textfile directory.
    #[cfg(feature = "serve")]
    Export(export::ExportArgs),
    /// GPU memory per process and device (DRM and dma-buf fdinfo, nvidia-smi), each client and buffer once.
    Gpu(gpu::GpuArgs),
    /// The whole machine's memory: MemTotal split into lines (processes, cache, swap: zram and zswap, kernel, hugetlb) that add up exactly, with swap beside.
    Machine(machine::MachineArgs),
    /// Each cgroup's charge (usage, limit, high, peak, memory.stat, working set) beside its processes' PSS, the difference named.
    Cgroup(cgroup::CgroupArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) on stdout.
    Completions(completions::CompletionsArgs),
    /// Print a manual page (roff) on stdout: memtally(1), or memtally-COMMAND(1).
    #[command(hide = true)]
    Man(man::ManArgs),
    /// Print the JSON Schema of a JSON output (docs/schema/NAME.json).
    /// A developer's command: only in a build with the `schema` feature.
    #[cfg(feature = "schema")]
    #[command(hide = true)]
    Schema(schema::SchemaArgs),
}

pub use help::parse;

impl Cli {
    pub fn proc_root(&self) -> ProcRoot {
        let root = self.proc_root.clone().map(ProcRoot::new).unwrap_or_default();
        match &self.cgroup_root {
            Some(dir) => root.with_cgroup_root(dir),
            None => root,
        }
    }
}

/// Runs the parsed command line, writing to `out`, its tables fitted to
/// `screen`.
pub fn run(cli: Cli, screen: Screen, out: &mut dyn std::io::Write) -> Result<()> {
    // A cgroup tree that is not there is said now, not left as blank charges.
    if let Some(dir) = &cli.cgroup_root {
        std::fs::read_dir(dir)
            .map_err(|e| memtally_core::Error::io(format!("--cgroup-root {}", dir.display()), e))?;
    }
    let root = cli.proc_root();
    match cli.command {
        Some(Command::Show(args)) => show::run(&root, &args, screen, out),
        Some(Command::Shared(args)) => shared::run(&root, &args, screen, out),
        Some(Command::Files(args)) => files::run(&root, &args, screen, out),
        Some(Command::Capture(args)) => capture::run(&root, &args, out),
        Some(Command::Snapshot(args)) => snapshot::run(&root, &args, out),
        Some(Command::Diff(args)) => diff::run(&args, screen, out),
        Some(Command::Report(args)) => report::run(&root, &args, out),
        Some(Command::Watch(args)) => watch::run(&root, &args, screen, out),
        Some(Command::Wss(args)) => wss::run(&root, &args, screen, out),
        Some(Command::Faults(args)) => faults::run(&root, &args, screen, out),
        #[cfg(feature = "plot")]
        Some(Command::Plot(args)) => plot::run(&args, out),
        Some(Command::Vmmap(args)) => vmmap::run(&args, screen, out),
        #[cfg(feature = "serve")]
        Some(Command::Serve(args)) => serve::run(&root, &args, out),
        #[cfg(feature = "serve")]
        Some(Command::Export(args)) => export::run(&root, &args, out),
        Some(Command::Gpu(args)) => gpu::run(&root, &args, screen, out),
        Some(Command::Machine(args)) => machine::run(&root, &args, screen, out),
        Some(Command::Cgroup(args)) => cgroup::run(&root, &args, screen, out),
        Some(Command::Top(args)) => top::run(&root, &args, screen, out),
        Some(Command::Completions(args)) => completions::run(&args, out),
        Some(Command::Man(args)) => man::run(&args, out),
        #[cfg(feature = "schema")]
        Some(Command::Schema(args)) => schema::run(&args, out),
        #[cfg(feature = "ui")]
        Some(Command::Ui(args)) => ui::run(&root, &args, out),
        None => top::run(&root, &top::TopArgs::default(), screen, out),
    }
}
