//! `memtally watch`: sample a selection cheaply at an interval, print a
//! line per sample with its change, and at the end the growth rate of
//! every process and category with a verdict. Ctrl-C ends it cleanly.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use clap::Args;

use crate::analyze::category::Category;
use crate::analyze::select::Selection;
use crate::analyze::trend::{fit, Trend};
use crate::cli::select::{select, SelectArgs};
use crate::error::{Error, Result};
use crate::model::Sizes;
use crate::render::table::{Align, Table};
use crate::render::units::{human_opt, human_signed};
use crate::render::Format;
use crate::source::scan::{self, Needs};
use crate::source::ProcRoot;

#[derive(Debug, Args)]
pub struct WatchArgs {
    /// One process; or a selection (--tree, --pid, --name, --user, --cgroup); every process when none.
    pub pid: Option<u32>,

    #[command(flatten)]
    pub select: SelectArgs,

    /// Time between samples (`500ms`, `1s`, `1m`).
    #[arg(long, default_value = "1s", value_parser = humantime::parse_duration)]
    pub interval: Duration,

    /// Stop after this many samples (default: until Ctrl-C).
    #[arg(long, value_name = "N")]
    pub count: Option<usize>,

    /// Also write every sample to this CSV file (for `memtally plot`).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Sample categories too (reads full smaps). Default: on for at most 16 processes.
    #[arg(long)]
    pub categories: bool,

    /// Never sample categories (only the cheap per-process rollups).
    #[arg(long, conflicts_with = "categories")]
    pub no_categories: bool,

    /// Output: `table` prints a line per sample and a summary; `json`
    /// prints only the summary, as one JSON document (exact bytes/s).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// Figures recorded per sample; the CSV's columns after scope/key/label.
pub const SERIES_FIGURES: &[&str] =
    &["rss", "pss", "uss", "dirty", "private_dirty", "shared_dirty", "swap_pss"];

/// Set by Ctrl-C.
static STOP: AtomicBool = AtomicBool::new(false);

/// A series: (scope, key), as `("process", "1234")` or `("total", "total")`.
type SeriesKey = (String, String);

/// One sample: series -> (label, sizes).
type Sample = BTreeMap<SeriesKey, (String, Sizes)>;

/// Fitted trends: series -> (label, trend).
type Trends = BTreeMap<SeriesKey, (String, Trend)>;

pub fn run(root: &ProcRoot, args: &WatchArgs, out: &mut dyn Write) -> Result<()> {
    let mut sel = args.select.selection()?;
    sel.pids.extend(args.pid);
    if args.interval.is_zero() {
        return Err(Error::Usage("--interval must be longer than 0".into()));
    }
    // A second handler cannot be installed (tests call run twice): then
    // Ctrl-C keeps its default meaning, which is fine there.
    let _ = ctrlc::set_handler(|| STOP.store(true, Ordering::SeqCst));
    let mut csv = match &args.output {
        Some(p) => {
            let f = std::fs::File::create(p).map_err(|e| Error::io(p, e))?;
            let mut w = csv::Writer::from_writer(f);
            let mut header = vec!["elapsed_s", "scope", "key", "label"];
            header.extend(SERIES_FIGURES);
            w.write_record(&header).map_err(|e| Error::io(p, e.into()))?;
            Some((w, p.clone()))
        }
        None => None,
    };
    let io = |e: std::io::Error| Error::io("standard output", e);
    let start = Instant::now();
    let mut series: Vec<(f64, Sample)> = Vec::new();
    let mut n = 0usize;
    while !STOP.load(Ordering::SeqCst) && args.count.is_none_or(|c| n < c) {
        if n > 0 {
            sleep_until(start + args.interval * n as u32);
            if STOP.load(Ordering::SeqCst) {
                break;
            }
        }
        let t = start.elapsed().as_secs_f64();
        let sample = take_sample(root, &sel, args)?;
        if args.format == Format::Table {
            live_line(t, &sample, series.last().map(|(_, s)| s), out).map_err(io)?;
            out.flush().map_err(io)?;
        }
        if let Some((w, path)) = csv.as_mut() {
            for ((scope, key), (label, sizes)) in &sample {
                let mut rec = vec![format!("{t:.3}"), scope.clone(), key.clone(), label.clone()];
                rec.extend(
                    SERIES_FIGURES
                        .iter()
                        .map(|f| sizes.figure(f).map_or(String::new(), |v| v.to_string())),
                );
                w.write_record(&rec).map_err(|e| Error::io(&*path, e.into()))?;
            }
            w.flush().map_err(|e| Error::io(&*path, e))?;
        }
        series.push((t, sample));
        n += 1;
    }
    match args.format {
        Format::Json => {
            serde_json::to_writer(&mut *out, &summary_json(&series)).map_err(|e| io(e.into()))?;
            out.write_all(b"\n").map_err(io)
        }
        _ => summary(&series, out).map_err(io),
    }
}

/// The summary as JSON: every series' rates in bytes per second.
fn summary_json(series: &[(f64, Sample)]) -> serde_json::Value {
    let pss = trends(series, "pss");
    let dirty = trends(series, "dirty");
    let rows: Vec<serde_json::Value> = pss
        .iter()
        .map(|(k, (label, t))| {
            let d = dirty.get(k).map(|(_, t)| t);
            serde_json::json!({
                "scope": k.0,
                "key": k.1,
                "label": label,
                "pss_rate": t.slope,
                "pss_r2": t.r2,
                "dirty_rate": d.map(|t| t.slope),
                "dirty_r2": d.map(|t| t.r2),
                "samples": t.samples,
                "steady_growth": t.grows_steadily(),
            })
        })
        .collect();
    let span = series.last().map_or(0.0, |s| s.0) - series.first().map_or(0.0, |s| s.0);
    serde_json::json!({ "samples": series.len(), "seconds": span, "trends": rows })
}

fn sleep_until(deadline: Instant) {
    while !STOP.load(Ordering::SeqCst) {
        let now = Instant::now();
        if now >= deadline {
            return;
        }
        std::thread::sleep((deadline - now).min(Duration::from_millis(50)));
    }
}

/// Reads the selection once: totals and per process from the rollups,
/// per category from smaps when asked for (or when few processes).
fn take_sample(root: &ProcRoot, sel: &Selection, args: &WatchArgs) -> Result<Sample> {
    let selected = select(root, sel, Needs { cmdline: true, cgroup: false })?;
    let with_categories = args.categories || (!args.no_categories && selected.infos.len() <= 16);
    let pids: Vec<u32> = selected.infos.iter().map(|i| i.pid).collect();
    let done = AtomicUsize::new(0);
    let scan = scan::read_all(root, selected.infos, scan::default_threads(), &done);
    let mut sample = Sample::new();
    let mut total = Sizes::default();
    for p in &scan.processes {
        total.add(&p.sizes);
        sample.insert(
            ("process".into(), p.info.pid.to_string()),
            (p.info.command(), p.sizes.clone()),
        );
    }
    sample.insert(
        ("total".into(), "total".into()),
        (format!("{} processes", scan.processes.len()), total),
    );
    if with_categories {
        let mut cats: BTreeMap<&'static str, Sizes> = BTreeMap::new();
        for pid in pids {
            let Ok(p) = root.process(pid) else { continue };
            for g in crate::analyze::snapshot::categories(&p.regions) {
                let key =
                    Category::ALL.iter().find(|c| c.key() == g.category).map_or("?", |c| c.key());
                cats.entry(key).or_default().add(&g.sizes);
            }
        }
        for (k, s) in cats {
            let label = Category::ALL.iter().find(|c| c.key() == k).map_or(k, |c| c.label());
            sample.insert(("category".into(), k.to_string()), (label.to_string(), s));
        }
    }
    Ok(sample)
}

fn total_of(s: &Sample) -> Option<&Sizes> {
    s.get(&("total".to_string(), "total".to_string())).map(|(_, s)| s)
}

fn live_line(
    t: f64,
    now: &Sample,
    before: Option<&Sample>,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let Some(cur) = total_of(now) else { return Ok(()) };
    let prev = before.and_then(total_of);
    let change = |f: &str| match (prev.and_then(|p| p.figure(f)), cur.figure(f)) {
        (Some(a), Some(b)) => format!(" ({})", human_signed(b as i128 - a as i128)),
        _ => String::new(),
    };
    let procs = now.keys().filter(|(s, _)| s == "process").count();
    writeln!(
        out,
        "[{t:7.1}s] PSS {}{}  dirty {}{}  RSS {}{}  swap {}  {procs} processes",
        human_opt(cur.pss),
        change("pss"),
        human_opt(cur.dirty()),
        change("dirty"),
        human_opt(cur.rss),
        change("rss"),
        human_opt(cur.swap_pss),
    )
}

/// Fits every series (total, each process, each category) for a figure.
pub fn trends(series: &[(f64, Sample)], figure: &str) -> Trends {
    let mut points: BTreeMap<SeriesKey, (String, Vec<(f64, f64)>)> = BTreeMap::new();
    for (t, sample) in series {
        for (key, (label, sizes)) in sample {
            if let Some(v) = sizes.figure(figure) {
                let e = points.entry(key.clone()).or_insert_with(|| (label.clone(), Vec::new()));
                e.1.push((*t, v as f64));
            }
        }
    }
    points.into_iter().filter_map(|(k, (label, pts))| fit(&pts).map(|t| (k, (label, t)))).collect()
}

fn rate(v: f64) -> String {
    format!("{}/s", human_signed(v.round() as i128))
}

fn summary(series: &[(f64, Sample)], out: &mut dyn Write) -> std::io::Result<()> {
    if series.len() < 2 {
        return writeln!(out, "(one sample: no growth rate; use --count 2 or more)");
    }
    let pss = trends(series, "pss");
    let dirty = trends(series, "dirty");
    let mut rows: Vec<(&SeriesKey, &(String, Trend))> = pss.iter().collect();
    rows.sort_by(|a, b| {
        let order = |s: &str| match s {
            "total" => 0,
            "category" => 1,
            _ => 2,
        };
        order(&a.0 .0).cmp(&order(&b.0 .0)).then(b.1 .1.slope.abs().total_cmp(&a.1 .1.slope.abs()))
    });
    writeln!(out)?;
    let span = series.last().map_or(0.0, |s| s.0) - series[0].0;
    writeln!(out, "growth over {span:.1}s, {} samples (least-squares fit):", series.len())?;
    let mut t = Table::new(&[
        ("SCOPE", Align::Left),
        ("KEY", Align::Left),
        ("PSS RATE", Align::Right),
        ("DIRTY RATE", Align::Right),
        ("R²", Align::Right),
        ("", Align::Left),
    ]);
    let mut shown_processes = 0;
    for (key, (label, trend)) in &rows {
        if key.0 == "process" {
            shown_processes += 1;
            if shown_processes > 10 {
                continue;
            }
        }
        let d = dirty.get(*key).map_or("-".into(), |(_, t)| rate(t.slope));
        let key_cell = if key.0 == "category" { label.clone() } else { key.1.clone() };
        let label_cell = if key.0 == "process" { label.clone() } else { String::new() };
        t.row(vec![
            key.0.clone(),
            key_cell,
            rate(trend.slope),
            d,
            format!("{:.2}", trend.r2),
            label_cell,
        ]);
    }
    t.fit(crate::render::table::terminal_width());
    out.write_all(t.render().as_bytes())?;
    let growing: Vec<_> =
        rows.iter().filter(|(k, (_, tr))| k.0 == "process" && tr.grows_steadily()).collect();
    match growing.first() {
        Some((k, (label, tr))) => writeln!(
            out,
            "verdict: memory grows steadily in {} process{}: pid {} grows {} (r² {:.2}), {}",
            growing.len(),
            if growing.len() == 1 { "" } else { "es" },
            k.1,
            rate(tr.slope),
            tr.r2,
            label
        ),
        None => match pss.get(&("total".to_string(), "total".to_string())) {
            Some((_, tr)) if tr.grows_steadily() => {
                writeln!(
                    out,
                    "verdict: the total grows steadily ({}), spread over processes",
                    rate(tr.slope)
                )
            }
            _ => writeln!(out, "verdict: no steady growth"),
        },
    }
}
