//! `memtally report`: one self-contained HTML page (treemap, waterfall,
//! process table, details, notes) from a live read, a recorded tree, or a
//! document read back (snapshot, vmmap output, another report page).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;

use memtally_core::analyze::diff::DiffOptions;
use memtally_core::analyze::report::ReportBy;
use memtally_core::source::ProcRoot;
use memtally_core::usecase::diff::diff_files;
use memtally_core::usecase::report::{from_file, live, series, Detail, DEFAULT_DETAIL};
use memtally_core::usecase::snapshot::Spill;
use memtally_core::write::{write_file_as, Access};
use memtally_core::Result;

use crate::cli::choice::choice;
use crate::cli::diff::parse_size;
use crate::cli::duration::duration;
use crate::cli::progress::with_progress;
use crate::cli::select::SelectArgs;
use crate::render::html::redact::{redact, redact_series};
use crate::render::html::{page_room, render, PageInfo};
use crate::render::stdout_error;

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  memtally report -o report.html                 every process, the machine, one page
  memtally report --tree PID -o browser.html     a browser and its children
  memtally report --proc-root DIR -o r.html      a recorded tree (memtally capture)
  memtally report --input a.json -o a.html       a snapshot, vmmap output, or a report page
  memtally report --redact -o share.html         arguments, users, host, private paths replaced
  memtally report --diff a.json b.json -o g.html  what grew: treemap coloured by growth
  memtally report PID --faults 10s -o f.html     which code filled each box (page faults)
  memtally diff report.html later.json           the page carries its snapshot")]
pub struct ReportArgs {
    /// One process; or a selection (--tree, --pid, --name, --user, --cgroup); every process when none.
    pub pid: Option<u32>,

    #[command(flatten)]
    pub select: SelectArgs,

    /// Write the page here (`-` or absent: standard output).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Draw this document instead of reading processes: a `memtally snapshot` file, `show` or
    /// `vmmap` JSON, saved vmmap text, a page `memtally report` wrote, or a `memtally watch`
    /// series (small multiples with the growth verdict).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["pid", "pids", "name", "user", "tree", "cgroup"])]
    pub input: Option<PathBuf>,

    /// How the treemap groups processes under the machine.
    #[arg(long, value_name = "KEY", default_value = "program", value_parser = choice::<ReportBy>())]
    pub by: ReportBy,

    /// The page's size budget (bytes, or with K, M, G): small items are folded into "N smaller"
    /// boxes per level, and past half of it the embedded snapshot leaves out the smallest
    /// processes' mappings (a note says how many).
    #[arg(long, value_name = "SIZE", default_value = "4M", value_parser = parse_size)]
    pub max_size: u64,

    /// What grew from snapshot A to snapshot B (files as --input reads them): the treemap of
    /// B coloured by growth, and the growth tables of `memtally diff`; the page carries B.
    #[arg(long, num_args = 2, value_names = ["A", "B"], conflicts_with = "input")]
    pub diff: Vec<PathBuf>,

    /// Which processes to read in full (smaps: categories and mappings), the largest by PSS;
    /// the others by their smaps_rollup totals (a note says how many). `auto`: the largest
    /// always, then the next largest (up to 25) while they add up to at most 2,000 mappings and
    /// a quarter of all RSS: the budget cuts the tail, never the head (processes named by PID are
    /// all read in full; a recorded tree: the 25 largest); N: the N largest, whatever they cost;
    /// `all`: every one.
    #[arg(long, value_name = "auto|N|all", default_value = "auto", value_parser = parse_detail)]
    pub detail: Detail,

    /// Replace command-line arguments, user names, the host name, paths under home
    /// directories, names of temporary files and shared memory (`/tmp`, `/dev/shm`, `memfd:`)
    /// and names of programs not run from a system path with stable placeholders (`<arg1>`,
    /// `<user1>`, `<host>`, `~/<path1>`, `/tmp/<path2>`, `<prog1>`), and the names in user
    /// cgroups (`user-<uid1>.slice/<unit1>.scope`); the page says it is redacted.
    #[arg(long)]
    pub redact: bool,

    /// Also read what each process gives back when it ends (EXCLUSIVE, from its pages' frames;
    /// live /proc, needs root or CAP_SYS_ADMIN; see docs/pages.md). A snapshot read with
    /// --input shows the column when it was taken with `snapshot --exact`.
    #[arg(long, conflicts_with_all = ["input", "diff"])]
    pub exact: bool,

    /// First record the selection's page faults for this long (`10s`, `2m`; Ctrl-C ends it
    /// sooner), as `memtally faults` does, then read it: the page gets a section of the call
    /// stacks that filled each category and mapping, linked from their treemap boxes. Live
    /// processes only; needs what `faults` needs (docs/privileges.md).
    #[arg(long, value_name = "DURATION", value_parser = duration, conflicts_with_all = ["input", "diff", "faults_input"])]
    pub faults: Option<Duration>,

    /// The faults section from a recording saved with `memtally faults --format json`.
    #[arg(long, value_name = "FILE")]
    pub faults_input: Option<PathBuf>,
}

fn parse_detail(s: &str) -> std::result::Result<Detail, String> {
    match s {
        "auto" => Ok(DEFAULT_DETAIL),
        "all" => Ok(Detail::All),
        n => {
            n.parse().map(Detail::Largest).map_err(|_| format!("{s:?}: `auto`, a number or `all`"))
        }
    }
}

pub fn run(root: &ProcRoot, args: &ReportArgs, out: &mut dyn Write) -> Result<()> {
    // A document is read more than once (its head, the faults a page
    // carries, its regions twice): one in a pipe is copied to a file of its
    // own first, and errors name the pipe.
    let mut spills = Vec::new();
    for path in args.input.iter().chain(&args.diff) {
        if let Some(spill) = Spill::of(path)? {
            spills.push((path.clone(), spill));
        }
    }
    let read = |p: &Path| -> PathBuf {
        spills.iter().find(|(named, _)| named == p).map_or(p, |(_, s)| s.path()).to_path_buf()
    };
    run_read(root, args, &read, out)
        .map_err(|e| spills.iter().fold(e, |e, (named, spill)| Spill::named(Some(spill), e, named)))
}

/// [`run`], each document read from where `read` says.
fn run_read(
    root: &ProcRoot,
    args: &ReportArgs,
    read: &dyn Fn(&Path) -> PathBuf,
    out: &mut dyn Write,
) -> Result<()> {
    // A watch series is drawn as one (small multiples and the verdict).
    let input = args.input.as_deref().map(read);
    if let Some(mut series) = input.as_deref().map(series).transpose()?.flatten() {
        if args.faults_input.is_some() {
            return Err(memtally_core::Error::Usage(
                "a watch series' page has no treemap: --faults-input draws on a page of processes"
                    .into(),
            ));
        }
        if args.redact {
            redact_series(&mut series);
        }
        let input = args.input.as_deref().map(|p| p.display().to_string()).unwrap_or_default();
        let info = PageInfo {
            input: if args.redact { "(redacted)".into() } else { input },
            redacted: args.redact,
            max_size: args.max_size,
        };
        let page = crate::render::html::series::render(&series, &info);
        return write_page(args, &page, Access::Umask, out);
    }
    // The faults, recorded before the read (so the page's figures are
    // those the faults made), or read back (a recording, or a page's).
    let faults = match (args.faults, &args.faults_input) {
        (Some(d), _) => Some(record_faults(root, args, d)?),
        (None, Some(path)) => Some(memtally_core::usecase::faults::load(path)?),
        // A page read back keeps the recording it carries (`--input`,
        // `--diff`'s B: the page drawn is B's).
        (None, None) => match args.diff.get(1).or(args.input.as_ref()) {
            Some(page) => memtally_core::usecase::faults::from_page(&read(page))?,
            None => None,
        },
    };
    let mut diff = match args.diff.as_slice() {
        [a, b] => Some((diff_files(&read(a), &read(b), &DiffOptions::default())?, a, b)),
        _ => None,
    };
    // A page of live processes read as root holds their addresses.
    let mut access = Access::Umask;
    let (mut report, input) = match (&args.input, &diff) {
        (_, Some((_, a, b))) => {
            let room = page_room(args.max_size);
            (from_file(&read(b), args.by, room)?, format!("{} -> {}", a.display(), b.display()))
        }
        (Some(path), None) => {
            (from_file(&read(path), args.by, page_room(args.max_size))?, path.display().to_string())
        }
        (None, None) => {
            let sel = args.select.selection(args.pid)?;
            // Processes named by PID are read in full, as `show` reads
            // them: the budget is for pages of many processes.
            let named = args.pid.is_some() || !args.select.pids.is_empty();
            let detail = match args.detail {
                d if d == DEFAULT_DETAIL && named => Detail::All,
                d => d,
            };
            let report =
                with_progress(|progress| live(root, &sel, args.by, detail, args.exact, progress))?;
            access = memtally_core::usecase::output_access(root);
            (report, root.path().display().to_string())
        }
    };
    report.faults = faults;
    if args.redact {
        redact(&mut report, diff.as_mut().map(|(d, _, _)| d));
    }
    let input = if args.redact { "(redacted)".to_string() } else { input };
    let info = PageInfo { input, redacted: args.redact, max_size: args.max_size };
    let html = render(&report, &info, diff.as_ref().map(|(d, _, _)| d));
    write_page(args, &html, access, out)
}

/// `--faults`: the selection's page faults over `duration`, as `faults`
/// records them (Ctrl-C ends the recording, and the page is still made).
fn record_faults(
    root: &ProcRoot,
    args: &ReportArgs,
    duration: Duration,
) -> Result<memtally_core::analyze::fault_report::FaultReport> {
    use memtally_core::usecase::faults::{faults, FaultOptions};
    if duration.is_zero() {
        return Err(memtally_core::Error::Usage("--faults must be longer than 0".into()));
    }
    let sel = args.select.selection(args.pid)?;
    if sel.is_everything() {
        return Err(memtally_core::Error::Usage(
            "report --faults records the faults of a PID or a selection (--pid, --tree, --name, --user, --cgroup), not of every process".into(),
        ));
    }
    let opts = FaultOptions { duration, ..FaultOptions::default() };
    let _promise = crate::signal::Finishing::hold();
    let started = std::sync::Once::new();
    let stop = || {
        started.call_once(|| {
            eprintln!(
                "recording page faults for {}s; Ctrl-C ends it and makes the page",
                duration.as_secs_f64()
            )
        });
        crate::signal::received().is_some()
    };
    faults(root, &sel, &opts, &stop)
}

fn write_page(args: &ReportArgs, html: &str, access: Access, out: &mut dyn Write) -> Result<()> {
    match args.output.as_deref() {
        None => out.write_all(html.as_bytes()).map_err(stdout_error),
        Some(p) if p == Path::new("-") => out.write_all(html.as_bytes()).map_err(stdout_error),
        Some(p) => write_file_as(p, access, html.as_bytes()),
    }
}
