//! `memtally top`: every process at once, ranked, without double counting.

use std::io::Write;

use clap::Args;

use memtally_core::analyze::top::{TopBy, TopSort};
use memtally_core::model::{Figure, Named};
use memtally_core::source::ProcRoot;
use memtally_core::usecase::top::{top, TopOptions};
use memtally_core::Result;

use crate::cli::choice::{byte_figure, choice};
use crate::cli::progress::with_progress;
use crate::cli::select::SelectArgs;
use crate::render::top::Listed;
use crate::render::top_screen::TopScreen;
use crate::render::{print, stdout_error, Format, Screen};

#[derive(Debug, Args)]
pub struct TopArgs {
    #[command(flatten)]
    pub select: SelectArgs,

    /// Group processes: one row per process, program, user, cgroup, or as a tree.
    #[arg(long, value_parser = choice::<TopBy>(), default_value = "process")]
    pub by: TopBy,

    /// Show the first N rows (totals always cover every selected process)
    /// [default: every row; a table on a terminal, as many as fit its
    /// height, at least 10].
    #[arg(long, value_name = "N", conflicts_with = "all")]
    pub top: Option<usize>,

    /// Show every row.
    #[arg(long)]
    pub all: bool,

    /// On a terminal too, print what a pipe gets: every row, the machine's
    /// groups and every note in full (a terminal's screen shows each note
    /// in one line and the machine in two).
    #[arg(long)]
    pub full: bool,

    /// Sort by these figures, largest first (comma-separated; pid smallest
    /// first; oom: highest OOM score first, with an OOM column, --by process only).
    #[arg(long, value_delimiter = ',', value_name = "FIELD")]
    #[arg(default_value = DEFAULT_SORT.name(), value_parser = choice::<TopSort>())]
    pub sort: Vec<TopSort>,

    /// Add EXCLUSIVE: what each row gives back when its processes end
    /// (resident pages and swap no process outside the row maps; shared
    /// memory apart), from the page tables. Needs root (CAP_SYS_ADMIN);
    /// live only. Costs a read of every selected process's resident pages.
    #[arg(long)]
    pub exact: bool,

    /// Leave out rows whose first sort figure (default PSS) is below SIZE
    /// (bytes, or with K, M, G: 10M); the totals still cover them.
    #[arg(long, value_name = "SIZE", value_parser = crate::cli::diff::parse_size)]
    pub min: Option<u64>,

    /// Smallest first (not with --by tree, whose rows stay a tree).
    #[arg(long)]
    pub reverse: bool,

    /// With --by program, user or cgroup: a PIDS column listing each
    /// row's processes (ps_mem -d splits them into rows instead).
    #[arg(long)]
    pub list_pids: bool,

    /// A %MEM column: each row's PSS as a share of MemTotal (as smem -p;
    /// htop's MEM% is the same from RSS).
    #[arg(long)]
    pub percent: bool,

    /// An OOM column: each process's OOM score (/proc/PID/oom_score, as
    /// procrank -o and ps -o oom: the process the OOM killer picks first
    /// has the highest).
    #[arg(long)]
    pub oom: bool,

    /// Show these figure columns, in this order (comma-separated sort
    /// names or any size key: pss,uss,swap_pss,footprint,anon_huge_pages,
    /// hugetlb); PID, USER, PROCS and COMMAND stay, and so do the columns
    /// other options add (--oom, -p). Table and CSV; JSON keeps every key.
    #[arg(long, value_delimiter = ',', value_name = "COLUMN", value_parser = column_choice())]
    pub columns: Option<Vec<TopSort>>,

    /// Output format: `folded` is one line per selected process,
    /// `program;pid BYTES` (`user;…` or `cgroup;…` first with --by user
    /// or cgroup), the folded stacks flame graph tools read (inferno,
    /// flamegraph.pl, speedscope, Pyroscope); BYTES is --figure's.
    #[arg(long, value_enum, default_value_t = TopFormat::Table)]
    pub format: TopFormat,

    /// With --format folded: the figure each line counts [default: pss;
    /// on macOS footprint, as --sort].
    #[arg(long, value_name = "FIGURE", value_parser = byte_figure())]
    pub figure: Option<Figure>,
}

/// `top`'s output formats: every view's three, and folded stacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum TopFormat {
    /// Aligned columns with readable units.
    #[default]
    Table,
    /// One JSON document, exact bytes (see docs/json.md).
    Json,
    /// Comma-separated values with a header row, exact bytes.
    Csv,
    /// Folded stacks, `program;pid BYTES` a line (docs/interop.md).
    Folded,
}

impl Default for TopArgs {
    /// What `memtally` with no command shows.
    fn default() -> TopArgs {
        TopArgs {
            select: SelectArgs::default(),
            by: TopBy::Process,
            top: None,
            all: false,
            full: false,
            min: None,
            reverse: false,
            list_pids: false,
            percent: false,
            oom: false,
            columns: None,
            sort: vec![DEFAULT_SORT],
            exact: false,
            format: TopFormat::Table,
            figure: None,
        }
    }
}

/// What rows are sorted by unless `--sort` says: PSS; on macOS, where
/// libproc gives no PSS, Apple's footprint (Activity Monitor's Memory).
const DEFAULT_SORT: TopSort =
    TopSort::Figure(if cfg!(target_os = "macos") { Figure::Footprint } else { Figure::Pss });

/// The figure columns of macOS's live processes unless `--columns` says:
/// the ones libproc gives (the Linux ones would all be unknown).
const LIBPROC_COLUMNS: &[TopSort] = &[
    TopSort::Figure(Figure::Footprint),
    TopSort::Figure(Figure::FootprintPeak),
    TopSort::Figure(Figure::Rss),
];

pub fn run(root: &ProcRoot, args: &TopArgs, screen: Screen, out: &mut dyn Write) -> Result<()> {
    // A table on a terminal, with no row count asked for, fits its screen.
    let format = match args.format {
        TopFormat::Table => Format::Table,
        TopFormat::Json => Format::Json,
        TopFormat::Csv => Format::Csv,
        TopFormat::Folded => return folded(root, args, out),
    };
    if args.figure.is_some() {
        let why = "--figure chooses what --format folded counts: use it with --format folded";
        return Err(memtally_core::Error::Usage(why.into()));
    }
    let fits = format == Format::Table && args.top.is_none() && !args.all && !args.full;
    let lines = screen.height.filter(|_| fits);
    if args.reverse && args.by == TopBy::Tree {
        let why = "--reverse sorts rows, and --by tree keeps them a tree: use one of them";
        return Err(memtally_core::Error::Usage(why.into()));
    }
    let sorts_oom = args.sort.contains(&TopSort::Oom);
    if sorts_oom && args.by != TopBy::Process {
        let why = "--sort oom ranks processes by their OOM score: use it with --by process";
        return Err(memtally_core::Error::Usage(why.into()));
    }
    let libproc = cfg!(target_os = "macos") && root.is_live();
    let columns = args.columns.as_deref().or(libproc.then_some(LIBPROC_COLUMNS));
    let oom = args.oom || sorts_oom || columns.is_some_and(|c| c.contains(&TopSort::Oom));
    // A pipe gets every row, as ps, smem and ps_mem print them (`top |
    // grep NAME` must find every process); a terminal's table, a screen.
    let rows = if args.all { None } else { args.top.or(lines) };
    let opts = TopOptions::default()
        .with_select(args.select.selection(None)?)
        .with_by(args.by)
        .with_sort(args.sort.clone())
        .with_top(rows)
        .with_min(args.min)
        .with_reverse(args.reverse)
        .with_oom(oom)
        .with_every_identity(format != Format::Table)
        .with_exact(args.exact);
    let view = with_progress(|progress| top(root, &opts, progress))?;
    let pids = args.list_pids && !matches!(args.by, TopBy::Process | TopBy::Tree);
    let view = Listed { top: &view, pids, percent: args.percent, columns };
    match lines {
        Some(lines) => print(&TopScreen { top: view, lines }, format, screen, out),
        None => print(&view, format, screen, out),
    }
}

/// `top --format folded`: every selected process, one line each, so the
/// flame graph adds up to the total; the options that cut, order or
/// decorate rows have no meaning there and are refused.
fn folded(root: &ProcRoot, args: &TopArgs, out: &mut dyn Write) -> Result<()> {
    let refused = [
        (args.by == TopBy::Tree, "--by tree"),
        (args.top.is_some(), "--top"),
        (args.min.is_some(), "--min"),
        (args.reverse, "--reverse"),
        (args.columns.is_some(), "--columns"),
        (args.list_pids, "--list-pids"),
        (args.percent, "--percent"),
        (args.oom || args.sort.contains(&TopSort::Oom), "--oom"),
        (args.exact, "--exact"),
    ];
    if let Some((_, option)) = refused.iter().find(|(given, _)| *given) {
        let why = format!(
            "--format folded is every selected process as a stack, one line each: {option} does not apply to it"
        );
        return Err(memtally_core::Error::Usage(why));
    }
    let opts = TopOptions::default()
        .with_select(args.select.selection(None)?)
        .with_by(args.by)
        .with_top(None)
        .with_every_identity(true);
    let view = with_progress(|progress| top(root, &opts, progress))?;
    let figure = args.figure.unwrap_or(match DEFAULT_SORT {
        TopSort::Figure(f) => f,
        TopSort::Processes | TopSort::Pid | TopSort::Oom => Figure::Pss,
    });
    crate::render::top_folded::folded(&view, figure, out).map_err(stdout_error)?;
    for note in view.notes() {
        eprintln!("memtally: note: {}", crate::render::notes::word(&note));
    }
    Ok(())
}

/// The value parser of `--columns`: `--sort`'s names and every other
/// figure (`anon_huge_pages`, `hugetlb`, `ksm`, …), each with its help.
fn column_choice() -> impl clap::builder::TypedValueParser<Value = TopSort> {
    let sorts = TopSort::ALL.iter().map(|s| (s.name(), s.help()));
    let others = Figure::ALL
        .iter()
        .filter(|f| !TopSort::ALL.contains(&TopSort::Figure(**f)))
        .map(|f| (f.name(), f.help()));
    crate::cli::choice::values(sorts.chain(others), |name| {
        TopSort::from_name(name).or_else(|| Figure::from_name(name).map(TopSort::Figure))
    })
}
