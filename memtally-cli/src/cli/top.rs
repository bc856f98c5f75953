//! `memtally top`: every process at once, ranked, without double counting.

use std::io::Write;

use clap::Args;

use crate::analyze::top::{build, TopBy, TOP_SORT_FIELDS};
use crate::cli::choice::choice;
use crate::cli::progress::with_progress;
use crate::cli::select::{select, SelectArgs};
use crate::error::{Error, Result};
use crate::render::top::TopContext;
use crate::render::{self, Format};
use crate::source::meminfo::MemInfo;
use crate::source::scan::{self, Needs};
use crate::source::{users, ProcRoot};

#[derive(Debug, Args, Default)]
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

    /// Sort by these figures, largest first (comma-separated): pss, uss,
    /// rss, swap, swap_pss, dirty, private_dirty, shared_dirty, gpu, processes, pid.
    #[arg(long, value_delimiter = ',', default_value = "pss", value_name = "FIELD")]
    pub sort: Vec<String>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub fn run(root: &ProcRoot, args: &TopArgs, out: &mut dyn Write) -> Result<()> {
    for f in &args.sort {
        if !TOP_SORT_FIELDS.contains(&f.as_str()) {
            return Err(Error::Usage(format!(
                "--sort {f}: unknown field; use one of {}",
                TOP_SORT_FIELDS.join(", ")
            )));
        }
    }
    let sel = args.select.selection()?;
    let needs = Needs {
        cmdline: args.by == TopBy::Program || args.format != Format::Table,
        cgroup: args.by == TopBy::Cgroup || args.format != Format::Table,
    };
    let selected = select(root, &sel, needs)?;
    let total = selected.infos.len();
    let mut scan = with_progress(total, "reading processes", |done| {
        scan::read_all(root, selected.infos, scan::default_threads(), done)
    });
    scan.vanished += selected.vanished;
    // GPU memory (docs/gpu-json.md), where the machine can have any.
    crate::cli::gpu::add_to_top(root, &mut scan.processes);
    // The machine picture explains the whole machine, so it only makes
    // sense when every process is in the scan.
    let meminfo = sel
        .is_everything()
        .then(|| std::fs::read_to_string(root.path().join("meminfo")).ok())
        .flatten()
        .map(|t| MemInfo::parse(&t));
    let names = UserNames::default();
    let user_name = |uid: Option<u32>| names.name(uid);
    let top = (!args.all).then_some(args.top);
    let report = build(&scan.processes, args.by, &args.sort, top, &user_name, meminfo.as_ref());
    // Command lines are read only for the rows shown (each is a read).
    if !needs.cmdline {
        let shown: Vec<usize> = report.rows.iter().filter_map(|r| r.process).collect();
        scan::fill_cmdlines(root, &mut scan.processes, &shown, scan::default_threads());
    }
    let ctx =
        TopContext { scan: &scan, kernel_threads: selected.kernel_threads, user_name: &user_name };
    let written = match args.format {
        Format::Table => render::top::table(&report, &ctx, out),
        Format::Json => render::top::json(&report, &ctx, out),
        Format::Csv => render::top::csv(&report, &ctx, out),
    };
    written.map_err(|e| Error::io("standard output", e))
}

/// uid -> name, reading /etc/passwd once.
#[derive(Default)]
struct UserNames {
    cache: std::sync::OnceLock<Vec<(u32, String)>>,
}

impl UserNames {
    fn name(&self, uid: Option<u32>) -> String {
        let Some(uid) = uid else { return "?".into() };
        let all = self.cache.get_or_init(users::all_users);
        all.iter().find(|(u, _)| *u == uid).map_or_else(|| uid.to_string(), |(_, n)| n.clone())
    }
}
