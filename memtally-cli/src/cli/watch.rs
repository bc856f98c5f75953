//! `memtally watch`: sample a selection cheaply at an interval, print a
//! line per sample with its change, and at the end the growth rate of
//! every process and category with a verdict. Ctrl-C, SIGTERM or SIGHUP
//! ends it cleanly: after the sample being taken, with the file of
//! samples committed and the summary printed (see [`crate::signal`]).

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;

use memtally_core::analyze::trend::Sample;
use memtally_core::analyze::wss::add_to_sample;
use memtally_core::error::UseCase;
use memtally_core::model::wss::WssChoice;
use memtally_core::source::series::SeriesWriter;
use memtally_core::source::ProcRoot;
use memtally_core::usecase::select::require_selection;
use memtally_core::usecase::watch::{sample, Categories};
use memtally_core::usecase::wss::Wss;
use memtally_core::write::NewFile;
use memtally_core::{Error, Result};

use crate::cli::duration::duration;
use crate::cli::select::SelectArgs;
use crate::render::errors::Worded;
use crate::render::table::escape_controls;
use crate::render::units::plural;
use crate::render::watch::{
    columns, live_line, sample_csv, sample_csv_header, sample_json, Summary,
};
use crate::render::watch_perfetto::Trace;
use crate::render::{print, stdout_error, Format, Screen};
use crate::signal::{self, Finishing};

#[derive(Debug, Args)]
pub struct WatchArgs {
    /// One process; or a selection (--tree, --pid, --name, --user, --cgroup); every process when none.
    pub pid: Option<u32>,

    #[command(flatten)]
    pub select: SelectArgs,

    /// Time between samples (`500ms`, `1s`, `1m`).
    #[arg(long, default_value = "1s", value_parser = duration)]
    pub interval: Duration,

    /// Stop after this many samples (default: until Ctrl-C, SIGTERM or SIGHUP).
    #[arg(long, value_name = "N")]
    pub count: Option<usize>,

    /// Also write every sample to this CSV file (for `memtally plot`); it
    /// takes its name when the watch ends.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Sample categories too (reads full smaps). Default: on for at most 16 processes.
    #[arg(long)]
    pub categories: bool,

    /// Never sample categories (only the cheap per-process rollups).
    #[arg(long, conflicts_with = "categories")]
    pub no_categories: bool,

    /// Also measure the working set of the watched processes over each
    /// interval (as `memtally wss`: resets their referenced bits, which
    /// may sway the kernel's reclaim); needs a selection.
    #[arg(long)]
    pub wss: bool,

    /// In the table's summary, list the categories that did not change
    /// too (by default they are counted in one line); JSON and CSV carry
    /// every one always.
    #[arg(long)]
    pub all: bool,

    /// Output: `table` prints a line per sample and a summary; `csv` one
    /// row per sample (header once, exact bytes); `json` JSON Lines: one
    /// object per sample, then the summary (docs/json.md); `perfetto`
    /// counter tracks in the Chrome trace event JSON that ui.perfetto.dev
    /// opens, closed when the watch ends (docs/interop.md).
    #[arg(long, value_enum, default_value_t = WatchFormat::Table)]
    pub format: WatchFormat,
}

/// `watch`'s output formats: every view's three, and a Perfetto trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum WatchFormat {
    /// A line per sample, then the summary, for people.
    #[default]
    Table,
    /// JSON Lines: one object per sample, then the summary (docs/json.md).
    Json,
    /// One row per sample, header once, exact bytes.
    Csv,
    /// Counter tracks in the Chrome trace event JSON (docs/interop.md).
    Perfetto,
}

pub fn run(root: &ProcRoot, args: &WatchArgs, screen: Screen, out: &mut dyn Write) -> Result<()> {
    let sel = args.select.selection(args.pid)?;
    if args.interval.is_zero() {
        return Err(Error::Usage("--interval must be longer than 0".into()));
    }
    let cats = match (args.categories, args.no_categories) {
        (true, _) => Categories::Always,
        (_, true) => Categories::Never,
        _ => Categories::Auto,
    };
    let mut wss = if args.wss {
        require_selection(&sel, UseCase::Wss)?;
        let wss = Wss::hold(root, &sel, WssChoice::Auto)?;
        eprintln!(
            "memtally: --wss resets the referenced bits of {} at every sample (/proc/PID/clear_refs): the kernel's page reclaim may choose differently for a while; no other process is touched",
            plural(wss.len(), "selected process", "selected processes")
        );
        Some(wss)
    } else {
        None
    };
    let mut file = match &args.output {
        Some(p) => {
            let w = SeriesWriter::with_figures(NewFile::create(p)?, columns(args.wss))
                .map_err(|e| Error::io(p, e))?;
            Some((w, p.clone()))
        }
        None => None,
    };
    let perfetto = args.format == WatchFormat::Perfetto;
    let mut trace = Trace::default();
    let start = Instant::now();
    let mut series: Vec<(f64, Sample)> = Vec::new();
    let mut n = 0usize;
    while signal::received().is_none() && args.count.is_none_or(|c| n < c) {
        if n > 0 && !signal::sleep_until(start + args.interval * n as u32) {
            break;
        }
        let t = start.elapsed().as_secs_f64();
        let mut now = match sample(root, &sel, cats) {
            Ok(now) => now,
            // Every watched process has exited since the first sample: the
            // watch ends there, with what it has.
            Err(
                e @ (Error::NoSuchProcess { .. }
                | Error::NotFound(_)
                | Error::NoMatch { .. }
                | Error::NoneRead { .. }),
            ) if n > 0 => {
                let samples = plural(n, "sample", "samples");
                eprintln!("memtally: watch stopped after {samples}: {}", Worded(&e));
                break;
            }
            Err(e) => {
                // What was written stays one JSON document.
                if perfetto {
                    trace.finish(out).map_err(stdout_error)?;
                }
                return Err(e);
            }
        };
        // The working set since the last sample (none at the first), then
        // the reset that starts the next interval.
        if let Some(w) = wss.as_mut() {
            if n > 0 {
                add_to_sample(&w.read(args.interval.as_secs_f64()), &mut now);
            }
            w.reset()?;
        }
        let with_wss = args.wss;
        match args.format {
            WatchFormat::Table => live_line(t, &now, series.last().map(|(_, s)| s), out),
            WatchFormat::Csv if n == 0 => {
                sample_csv_header(with_wss, out).and_then(|()| sample_csv(t, &now, with_wss, out))
            }
            WatchFormat::Csv => sample_csv(t, &now, with_wss, out),
            WatchFormat::Json => sample_json(n, t, &now, with_wss, out),
            WatchFormat::Perfetto => trace.sample(t, &now, with_wss, out),
        }
        .and_then(|()| out.flush())
        .map_err(stdout_error)?;
        if let Some((w, path)) = file.as_mut() {
            // Keys and labels are names from the processes (a mapping's
            // path, a command line): escaped as every view escapes them.
            let text: Vec<(String, String)> = now
                .iter()
                .map(|((_, key), (label, _))| {
                    (escape_controls(key.clone()), escape_controls(label.clone()))
                })
                .collect();
            let rows = now.iter().zip(&text).map(|(((scope, _), (_, sizes)), (key, label))| {
                (*scope, key.as_str(), label.as_str(), sizes)
            });
            w.sample(t, rows).map_err(|e| Error::io(&*path, e))?;
        }
        series.push((t, now));
        n += 1;
    }
    // A signal ended the loop: the samples taken are committed and summed
    // up before the process ends (only a second signal ends it at once).
    // Not held while sampling: a sample stuck in a read that never returns
    // (a hung mount) must not keep the process from ending within the
    // signal's grace, which then removes the unfinished file.
    let _promise = Finishing::hold();
    if let Some((w, path)) = file {
        w.into_inner().map_err(|e| Error::io(&path, e))?.commit()?;
    }
    let summary = Summary { series: &series, all: args.all };
    match args.format {
        // CSV is the samples alone: one row each, nothing after them; a
        // trace is closed, and is the samples alone too.
        WatchFormat::Csv => Ok(()),
        WatchFormat::Perfetto => trace.finish(out).map_err(stdout_error),
        WatchFormat::Table => print(&summary, Format::Table, screen, out),
        WatchFormat::Json => print(&summary, Format::Json, screen, out),
    }
}
