//! `memtally show PID`: one process's memory by category, path or perms.

use std::io::Write;

use clap::Args;

use crate::analyze::classic::Classic;
use crate::analyze::report::{build, finish, Fold, ShowBy, SORT_FIELDS};
use crate::analyze::select::Selection;
use crate::cli::choice::choice;
use crate::cli::select::{select, SelectArgs};
use crate::error::{Error, Result};
use crate::model::Process;
use crate::render::show::RegionStream;
use crate::render::{self, Format};
use crate::source::scan::Needs;
use crate::source::ProcRoot;

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The process to show; or select several with --pid, --tree, --name,
    /// --user, --cgroup and see their regions summed (PSS counts shared
    /// pages once in total).
    pub pid: Option<u32>,

    #[command(flatten)]
    pub select: SelectArgs,

    /// Group rows by this key.
    #[arg(long, value_parser = choice::<ShowBy>(), default_value = "category")]
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
    let mut sel = args.select.selection()?;
    if let Some(pid) = args.pid {
        sel.pids.push(pid);
    }
    if sel.is_everything() {
        return Err(Error::Usage(
            "show needs a PID, or a selection (--pid, --tree, --name, --user, --cgroup); `memtally top` shows every process".into(),
        ));
    }
    let single = args.pid.filter(|_| {
        sel.pids.len() == 1
            && sel.trees.is_empty()
            && sel.name.is_none()
            && sel.uids.is_empty()
            && sel.cgroup.is_none()
    });
    if args.classic {
        let Some(pid) = single else {
            return Err(Error::Usage("--classic shows one process: give just its PID".into()));
        };
        return show_classic(root, pid, args.format, out);
    }
    let io = |e| Error::io("standard output", e);
    let mut stream = RegionStream::new(args.format, args.regions);
    // One process: its regions are printed (or summed) as they are read
    // and never kept, so a smaps of any size runs in bounded memory.
    if let Some(pid) = single {
        let mut fold = Fold::new(args.by);
        let mut failed = None;
        let process = root.process_with(pid, |p, r| {
            fold.add(&r);
            if failed.is_none() {
                failed = stream.region(p, &r, out).err();
            }
        })?;
        if let Some(e) = failed {
            return Err(io(e));
        }
        let processes = [process];
        let mut report = finish(&processes, fold, &args.sort, args.top);
        report.gpu = crate::cli::gpu::for_show(root, &[pid]);
        return stream.finish(&report, out).map_err(io);
    }
    let (processes, skipped) = read_selection(root, &sel)?;
    if processes.is_empty() {
        // Nothing to show: the first failure is the answer (permission
        // denied says who owns it and what would fix it).
        return Err(skipped.into_iter().next().unwrap_or_else(|| {
            Error::NotFound("every selected process exited before it could be read".into())
        }));
    }
    let mut report = build(&processes, args.by, &args.sort, args.top);
    let pids: Vec<u32> = processes.iter().map(|p| p.pid).collect();
    report.gpu = crate::cli::gpu::for_show(root, &pids);
    let denied = skipped.iter().filter(|e| matches!(e, Error::PermissionDenied { .. })).count();
    if denied > 0 {
        report.notes.push(format!(
            "{denied} selected processes could not be read (permission denied) and are not in these figures; run as root or with CAP_SYS_PTRACE."
        ));
    }
    if args.format == Format::Json {
        // Several processes: each with its own regions, in memory.
        return render::show::json(&report, out).map_err(io);
    }
    stream.start(&processes).map_err(io)?;
    for p in &processes {
        for r in &p.regions {
            stream.region(p, r, out).map_err(io)?;
        }
    }
    stream.finish(&report, out).map_err(io)
}

/// Reads every selected process in full; processes that exit meanwhile
/// are dropped, and the errors of ones that cannot be read are returned.
fn read_selection(root: &ProcRoot, sel: &Selection) -> Result<(Vec<Process>, Vec<Error>)> {
    let selected = select(root, sel, Needs::default())?;
    let mut processes = Vec::new();
    let mut skipped = Vec::new();
    for info in selected.infos {
        match root.process(info.pid) {
            Ok(p) => processes.push(p),
            Err(Error::NoSuchProcess { .. } | Error::Exited { .. }) => {}
            Err(e) => skipped.push(e),
        }
    }
    Ok((processes, skipped))
}

/// The seed's table reads `maps` as the seed does, so it works where only
/// maps is readable.
fn show_classic(root: &ProcRoot, pid: u32, format: Format, out: &mut dyn Write) -> Result<()> {
    if format != Format::Table {
        return Err(Error::Usage(
            "--classic prints the seed's text table only; drop --format, or use --format json without --classic for exact bytes".into(),
        ));
    }
    let mut counts = Classic::default();
    root.stream_regions(pid, "maps", |r| counts.add(&r))?;
    render::classic::classic(&counts, out).map_err(|e| Error::io("standard output", e))
}
