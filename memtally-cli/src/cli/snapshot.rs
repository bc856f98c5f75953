//! `memtally snapshot`: everything show and top know about a selection,
//! at one moment, into one JSON file for `diff` and `plot`.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use clap::Args;

use memtally_core::analyze::select::Selection;
use memtally_core::analyze::wss::WssReport;
use memtally_core::error::UseCase;
use memtally_core::model::wss::WssChoice;
use memtally_core::model::{Figure, Note, ProcInfo};
use memtally_core::source::ProcRoot;
use memtally_core::usecase::by_mapping::{self, MappingSums};
use memtally_core::usecase::output_access;
use memtally_core::usecase::select::require_selection;
use memtally_core::usecase::snapshot_stream::{take_into, Extras, Output};
use memtally_core::usecase::wss::Wss;
use memtally_core::write::{Access, NewFile};
use memtally_core::{Error, Result};

use crate::cli::choice::byte_figure;
use crate::cli::progress::with_progress;
use crate::cli::select::SelectArgs;
use crate::render::notes::word;
use crate::render::stdout_error;

#[derive(Debug, Args)]
pub struct SnapshotArgs {
    /// One process; or a selection (--tree, --pid, --name, --user, --cgroup); every process when none.
    pub pid: Option<u32>,

    #[command(flatten)]
    pub select: SelectArgs,

    /// Also store each process's exclusive figure (what it alone gives back when it ends) and the selection's: its pages' frames read once more, after the regions (live /proc, needs root or CAP_SYS_ADMIN; see docs/pages.md).
    #[arg(long)]
    pub exact: bool,

    /// Also measure the working set over DURATION first (as `memtally wss`: resets the selected processes' referenced bits, which the kernel's reclaim notices; a selection is required), then take the snapshot: `touched`, `working_set` and `cold` in each process's totals and categories.
    #[arg(long, value_name = "DURATION", value_parser = crate::cli::duration::duration)]
    pub wss: Option<std::time::Duration>,

    /// Write the snapshot here (`-` or absent: standard output).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// What to write: `snapshot` the snapshot file (JSON Lines, for
    /// diff, plot and report); `folded` one line per process and mapping,
    /// `program;pid;category;mapping BYTES`, the folded stacks flame graph
    /// tools read (inferno, flamegraph.pl, speedscope, Pyroscope).
    #[arg(long, value_enum, default_value_t = SnapshotFormat::Snapshot)]
    pub format: SnapshotFormat,

    /// With --format folded: the figure each line counts [default: pss].
    #[arg(long, value_name = "FIGURE", value_parser = byte_figure())]
    pub figure: Option<Figure>,
}

/// What `snapshot` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum SnapshotFormat {
    /// The snapshot file: JSON Lines (docs/json.md).
    #[default]
    Snapshot,
    /// Folded stacks, `program;pid;category;mapping BYTES` a line (docs/interop.md).
    Folded,
}

pub fn run(root: &ProcRoot, args: &SnapshotArgs, out: &mut dyn Write) -> Result<()> {
    let sel = args.select.selection(args.pid)?;
    if args.format == SnapshotFormat::Folded {
        return folded(root, &sel, args, out);
    }
    if args.figure.is_some() {
        let why = "--figure chooses what --format folded counts: use it with --format folded";
        return Err(Error::Usage(why.into()));
    }
    let measured = match args.wss {
        // A signal during the interval: nothing written (the exit
        // status says which signal, main.rs).
        Some(interval) => match working_set(root, &sel, interval)? {
            Some(report) => Some(report),
            None => return Ok(()),
        },
        None => None,
    };
    let extras = Extras::default().with_working_set(measured.as_ref()).with_exact(args.exact);
    let take = |out: &mut dyn Write, error: &dyn Fn(std::io::Error) -> Error| {
        let output = Output { out, word: &word, error };
        with_progress(|progress| take_into(root, &sel, progress, extras, output))
    };
    match args.output.as_deref() {
        Some(p) if p != Path::new("-") => to_file(p, output_access(root), take),
        _ => {
            take(out, &stdout_error)?;
            out.flush().map_err(stdout_error)
        }
    }
}

/// `snapshot --format folded`: each process's figure by category and
/// mapping, a line each, written as each process is read (memory follows
/// one process's mappings); what could not be read said on stderr.
fn folded(
    root: &ProcRoot,
    sel: &Selection,
    args: &SnapshotArgs,
    out: &mut dyn Write,
) -> Result<()> {
    if args.exact || args.wss.is_some() {
        let why = "--exact and --wss add per-process figures to the snapshot file: --format folded counts the mappings' own";
        return Err(Error::Usage(why.into()));
    }
    let figure = args.figure.unwrap_or(Figure::Pss);
    let take = |out: &mut dyn Write, error: &dyn Fn(std::io::Error) -> Error| {
        let mut each = |info: &ProcInfo, sums: &MappingSums| {
            let pid = info.pid.to_string();
            for ((category, mapping), bytes) in sums {
                let frames = [info.program.as_str(), &pid, category.key(), mapping];
                crate::render::folded::write(out, frames, *bytes).map_err(error)?;
            }
            Ok(())
        };
        with_progress(|progress| by_mapping::each_process(root, sel, figure, progress, &mut each))
    };
    let notes = match args.output.as_deref() {
        Some(p) if p != Path::new("-") => {
            let mut notes = Vec::new();
            to_file(p, output_access(root), |out, error| {
                notes = take(out, error)?;
                Ok(Vec::new())
            })?;
            notes
        }
        _ => {
            let notes = take(out, &stdout_error)?;
            out.flush().map_err(stdout_error)?;
            notes
        }
    };
    for note in notes {
        eprintln!("memtally: note: {}", word(&note));
    }
    Ok(())
}

/// A snapshot written by `take` to the file `p`, through its new name,
/// readable as `access` says (root's or another user's addresses: its
/// user alone), renamed over the target once whole (memory flat in processes: it is
/// written as it is read, usecase::snapshot_stream).
pub fn to_file(
    p: &Path,
    access: Access,
    take: impl FnOnce(&mut dyn Write, &dyn Fn(std::io::Error) -> Error) -> Result<Vec<Note>>,
) -> Result<()> {
    let mut file = NewFile::create_as(p, access)?;
    let error = |e: std::io::Error| Error::io(p, e);
    let mut buffered = BufWriter::with_capacity(64 << 10, &mut file);
    take(&mut buffered, &error)?;
    buffered.flush().map_err(error)?;
    drop(buffered);
    file.commit()
}

/// One working-set interval of the selection, as `memtally wss` measures
/// it (said once on stderr: the reset is not free); `None` when a signal
/// ended the wait.
fn working_set(
    root: &ProcRoot,
    sel: &Selection,
    interval: std::time::Duration,
) -> Result<Option<WssReport>> {
    require_selection(sel, UseCase::Wss)?;
    if interval.is_zero() {
        return Err(Error::Usage("--wss must be longer than 0".into()));
    }
    let mut wss = Wss::hold(root, sel, WssChoice::Auto)?;
    eprintln!(
        "memtally: snapshot --wss resets the referenced bits of {} (/proc/PID/clear_refs): the kernel's page reclaim may choose differently for a while; no other process is touched",
        crate::render::units::plural(wss.len(), "selected process", "selected processes")
    );
    wss.reset()?;
    if !crate::signal::sleep_until(std::time::Instant::now() + interval) {
        return Ok(None);
    }
    Ok(Some(wss.read(interval.as_secs_f64())))
}
