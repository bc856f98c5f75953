//! `memtally wss`: the working set of a selection over an interval:
//! resident, touched, the 2004 mail's working set and cold, per process
//! and per category; with `--count`, a series of them (table lines, CSV,
//! JSON Lines, and a series file `memtally plot` draws).

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;

use memtally_core::error::UseCase;
use memtally_core::model::series::{Scope, SeriesFigure};
use memtally_core::model::wss::WssChoice;
use memtally_core::source::series::SeriesWriter;
use memtally_core::source::ProcRoot;
use memtally_core::usecase::select::require_selection;
use memtally_core::usecase::wss::Wss;
use memtally_core::write::NewFile;
use memtally_core::{Error, Result};

use crate::cli::choice::choice;
use crate::cli::duration::duration;
use crate::cli::select::SelectArgs;
use crate::render::table::escape_controls;
use crate::render::units::plural;
use crate::render::wss::{
    csv_header, method_line, notice, sample_csv, sample_json, series_line, WssView,
};
use crate::render::{print, stdout_error, Format, Screen};
use crate::signal::{self, Finishing};

#[derive(Debug, Args)]
pub struct WssArgs {
    /// The process to measure; or select several with --pid, --tree,
    /// --name, --user, --cgroup. Only the selected processes are reset.
    pub pid: Option<u32>,

    #[command(flatten)]
    pub select: SelectArgs,

    /// How long to watch for touched pages (`100ms`, `1s`, `1m`).
    #[arg(long, default_value = "1s", value_parser = duration)]
    pub interval: Duration,

    /// Measure this many intervals one after another (a series: a line,
    /// CSV rows or a JSON line per interval).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub count: usize,

    /// Also write every interval's figures to this series file (CSV, for
    /// `memtally plot FILE --figure working_set`); it takes its name when
    /// the series ends.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// How touched pages are found: `auto` uses idle page tracking where
    /// the kernel has it (/sys/kernel/mm/page_idle/bitmap) and memtally
    /// runs as root, else the referenced bits; `idle` insists on idle
    /// tracking; `referenced` resets the referenced bits (clear_refs).
    #[arg(long, value_name = "METHOD", default_value = "auto", value_parser = choice::<WssChoice>())]
    pub method: WssChoice,

    /// Output format (docs/json.md, "wss").
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub fn run(root: &ProcRoot, args: &WssArgs, screen: Screen, out: &mut dyn Write) -> Result<()> {
    let sel = args.select.selection(args.pid)?;
    require_selection(&sel, UseCase::Wss)?;
    if args.interval.is_zero() {
        return Err(Error::Usage("--interval must be longer than 0".into()));
    }
    if args.count == 0 {
        return Err(Error::Usage("--count must be at least 1".into()));
    }
    // The series file is refused (a directory, a place another user may
    // write) before the notice that says a reset is coming.
    let mut file = match &args.output {
        Some(p) => {
            let w = SeriesWriter::with_figures(NewFile::create(p)?, SeriesFigure::WSS)
                .map_err(|e| Error::io(p, e))?;
            Some((w, p.clone()))
        }
        None => None,
    };
    let mut wss = Wss::hold(root, &sel, args.method)?;
    // Said once, before anything is reset: the reset is not free.
    let processes = plural(wss.len(), "selected process", "selected processes");
    eprintln!("{}", notice(wss.method(), &processes));
    let series = args.count > 1;
    let start = Instant::now();
    let interval_s = args.interval.as_secs_f64();
    for index in 0..args.count {
        if signal::received().is_some() || wss.is_empty() {
            break;
        }
        wss.reset()?;
        if !signal::sleep_until(Instant::now() + args.interval) {
            break;
        }
        let report = wss.read(interval_s);
        let view = WssView { report: &report, index, elapsed_s: start.elapsed().as_secs_f64() };
        match (series, args.format) {
            (false, format) => print(&view, format, screen, out)?,
            (true, Format::Table) => {
                if index == 0 {
                    writeln!(out, "{}", method_line(wss.method(), wss.idle_tracking()))
                        .map_err(stdout_error)?;
                }
                series_line(&view, out).map_err(stdout_error)?
            }
            (true, Format::Json) => sample_json(&view, out).map_err(stdout_error)?,
            (true, Format::Csv) => {
                let head = if index == 0 { csv_header(out) } else { Ok(()) };
                head.and_then(|()| sample_csv(&view, out)).map_err(stdout_error)?
            }
        }
        out.flush().map_err(stdout_error)?;
        if let Some((w, path)) = file.as_mut() {
            let pids: Vec<(String, String)> = report
                .processes
                .iter()
                .map(|p| (p.pid.to_string(), escape_controls(p.command.clone())))
                .collect();
            let mut rows = vec![(Scope::Total, "total", "total", &report.totals)];
            for (p, (key, command)) in report.processes.iter().zip(&pids) {
                rows.push((Scope::Process, key.as_str(), command.as_str(), &p.totals));
            }
            for c in &report.categories {
                rows.push((Scope::Category, c.category.key(), c.category.label(), &c.sizes));
            }
            w.sample(view.elapsed_s, rows).map_err(|e| Error::io(&*path, e))?;
        }
    }
    // The intervals measured are committed even when a signal ended the series.
    let _promise = Finishing::hold();
    if let Some((w, path)) = file {
        w.into_inner().map_err(|e| Error::io(&path, e))?.commit()?;
    }
    Ok(())
}
