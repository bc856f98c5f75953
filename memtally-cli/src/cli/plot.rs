//! `memtally plot INPUT -o FILE.svg`: a picture of a `watch` series (memory
//! over time) or of a snapshot (where memory goes, by category).

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;

use memtally_core::analyze::trend::Scope;
use memtally_core::analyze::vmmap::pow2_bucket;
use memtally_core::analyze::Category;
use memtally_core::model::snapshot::{Snapshot, SnapshotKind};
use memtally_core::model::{Figure, Named, Purge};
use memtally_core::source::bounded::open_input;
use memtally_core::usecase::snapshot::load;
use memtally_core::usecase::watch::SeriesFigure;
use memtally_core::write::write_file;
use memtally_core::{Error, Result};

use crate::cli::choice::choice;
use crate::render::plot::{bars_svg, lines_svg, Bar, BarLegend, Line};

#[derive(Debug, Args)]
pub struct PlotArgs {
    /// A `memtally watch -o` CSV series, a snapshot, `show --format json`
    /// output, or a vmmap report (text or `vmmap --format json`: a histogram of region sizes).
    pub input: PathBuf,

    /// The SVG file to write.
    #[arg(short, long, value_name = "FILE.svg")]
    pub output: PathBuf,

    /// Which figure to draw.
    #[arg(long, default_value = "pss", value_parser = choice::<SeriesFigure>())]
    pub figure: SeriesFigure,

    /// Processes to draw beside the total (the ones that grew most).
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub top: usize,

    /// vmmap input: histogram only regions whose type contains one of
    /// these: one value, comma-separated (`--types IOAccelerator,IOSurface`),
    /// or the option repeated, as `vmmap --types`; INPUT may come before or
    /// after it.
    #[arg(long, value_delimiter = ',', action = clap::ArgAction::Append, value_name = "TYPE")]
    pub types: Vec<String>,
}

pub fn run(args: &PlotArgs, out: &mut dyn Write) -> Result<()> {
    let svg = if starts_as_series(&args.input)? {
        series_chart(&args.input, args.figure.name(), args.top)?
    } else {
        let snap = load(&args.input)?;
        if snap.kind == SnapshotKind::Vmmap && snap.processes.iter().any(|p| !p.regions.is_empty())
        {
            histogram_chart(&args.input, &snap, &args.types)?
        } else {
            snapshot_chart(&args.input, &snap)?
        }
    };
    write_file(&args.output, svg.as_bytes())?;
    writeln!(out, "wrote {}", args.output.display()).map_err(|e| Error::io("standard output", e))
}

/// Whether `path` is a `watch --format csv` series (its header starts
/// `elapsed_s,`). Only the head is read, through the bounded reader: a
/// device, or a file larger than the cap, is refused there.
fn starts_as_series(path: &Path) -> Result<bool> {
    use std::io::Read;
    let bad = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::InvalidData => {
            Error::Parse { path: path.to_path_buf(), message: e.to_string() }
        }
        _ => Error::io(path, e),
    };
    let mut head = Vec::new();
    open_input(path).map_err(bad)?.take(10).read_to_end(&mut head).map_err(bad)?;
    Ok(head.starts_with(b"elapsed_s,"))
}

/// Points kept per series: more than a chart's width in pixels.
const MAX_POINTS: usize = 4096;

/// Total and the fastest-growing processes over time.
fn series_chart(path: &Path, figure: &str, top: usize) -> Result<String> {
    let bad = |m: String| Error::Parse { path: path.to_path_buf(), message: m };
    let input = open_input(path).map_err(|e| bad(e.to_string()))?;
    let mut reader = csv::Reader::from_reader(input);
    let headers = reader.headers().map_err(|e| bad(e.to_string()))?.clone();
    let col = headers
        .iter()
        .position(|h| h == figure)
        .ok_or_else(|| bad(format!("no {figure} column")))?;
    let mut lines: Vec<(Scope, String, Line)> = Vec::new();
    // Each series' slot by (scope, key): one lookup per row, not a search.
    let mut slots: std::collections::HashMap<(Scope, String), usize> = Default::default();
    // Per series: keep one point in `stride`, halving the points kept when
    // they reach MAX_POINTS, so memory stays bounded whatever the rows.
    let mut strides: Vec<(usize, usize)> = Vec::new();
    for (i, rec) in reader.records().enumerate() {
        let rec = rec.map_err(|e| bad(format!("row {}: {e}", i + 2)))?;
        let t: f64 = rec
            .get(0)
            .and_then(|v| v.parse().ok())
            .filter(|t: &f64| t.is_finite())
            .ok_or_else(|| bad(format!("row {}: bad time (not a finite number)", i + 2)))?;
        let (scope, key, label) =
            (rec.get(1).unwrap_or(""), rec.get(2).unwrap_or(""), rec.get(3).unwrap_or(""));
        let scope = Scope::from_name(scope).ok_or_else(|| {
            bad(format!("row {}: scope {scope:?} is none of category, process, total", i + 2))
        })?;
        if scope == Scope::Category {
            continue;
        }
        let Some(v) = rec.get(col).and_then(|v| v.parse::<u64>().ok()) else { continue };
        let slot = match slots.get(&(scope, key.to_string())) {
            Some(&i) => i,
            None => {
                // The command line for now; the label is made at the end.
                lines.push((
                    scope,
                    key.to_string(),
                    Line { label: label.to_string(), points: Vec::new() },
                ));
                strides.push((1, 0));
                slots.insert((scope, key.to_string()), lines.len() - 1);
                lines.len() - 1
            }
        };
        let (stride, seen) = &mut strides[slot];
        *seen += 1;
        if (*seen - 1) % *stride != 0 {
            continue;
        }
        let points = &mut lines[slot].2.points;
        points.push((t, v));
        if points.len() >= MAX_POINTS {
            let mut k = 0;
            points.retain(|_| {
                k += 1;
                k % 2 == 1
            });
            *stride *= 2;
        }
    }
    if lines.is_empty() {
        return Err(bad("no samples in the series".into()));
    }
    let growth = |l: &Line| match (l.points.first(), l.points.last()) {
        (Some(a), Some(b)) => b.1 as i128 - a.1 as i128,
        _ => 0,
    };
    let (mut total, mut procs): (Vec<_>, Vec<_>) =
        lines.into_iter().partition(|(s, _, _)| *s == Scope::Total);
    procs.sort_by_key(|(_, _, l)| std::cmp::Reverse(growth(l)));
    let mut chosen: Vec<Line> =
        total.drain(..).map(|(_, _, l)| Line { label: format!("total {figure}"), ..l }).collect();
    let procs: Vec<_> = procs.into_iter().take(top).collect();
    chosen.extend(series_labels(procs));
    lines_svg(&format!("memtally watch: {figure} over time"), &chosen).map_err(bad)
}

/// Labels that tell the drawn processes apart: the pid, the program and
/// the option that distinguishes it from the others of its program
/// (`1234 chromium --type=renderer …`), cut to 48 columns.
fn series_labels(procs: Vec<(Scope, String, Line)>) -> Vec<Line> {
    use crate::render::width::{command_label, cut, distinguishing};
    let commands: Vec<String> = procs.iter().map(|(_, _, l)| l.label.clone()).collect();
    let d = distinguishing(&commands);
    procs
        .into_iter()
        .zip(d)
        .map(|((_, key, l), d)| {
            let name = format!("{key} {}", command_label(&l.label, d.as_deref()));
            let name = crate::render::table::escape_controls(name);
            Line { label: cut(&name, 48).into_owned(), ..l }
        })
        .collect()
}

/// vmmap regions by virtual size, in power-of-two buckets: how many
/// regions of each size, and (darker) how many of them are purgeable
/// (volatile or already emptied).
fn histogram_chart(path: &Path, snap: &Snapshot, types: &[String]) -> Result<String> {
    let mut buckets: std::collections::BTreeMap<u64, (u64, u64)> = Default::default();
    for r in snap.processes.iter().flat_map(|p| p.regions.iter()) {
        let t = r.region_type.as_deref().unwrap_or("");
        if !types.is_empty() && !types.iter().any(|w| t.contains(w.as_str())) {
            continue;
        }
        let Some(v) = r.sizes.size else { continue };
        let b = pow2_bucket(v);
        let e = buckets.entry(b).or_default();
        e.0 += 1;
        if matches!(r.purge, Some(Purge::Volatile | Purge::Empty)) {
            e.1 += 1;
        }
    }
    if buckets.is_empty() {
        return Err(Error::Parse {
            path: path.to_path_buf(),
            message: "no regions of the selected types".into(),
        });
    }
    let bars: Vec<Bar> = buckets
        .iter()
        .map(|(b, (n, purgeable))| Bar {
            label: format!("≤ {}", crate::render::units::human(*b)),
            value: *n,
            part: Some(*purgeable),
        })
        .collect();
    let which = if types.is_empty() { "all region types".to_string() } else { types.join(", ") };
    let legend = BarLegend { whole: "regions", part: "purgeable: volatile or empty" };
    bars_svg(&format!("vmmap regions by size ({which})"), &bars, "count", legend)
        .map_err(|m| Error::Parse { path: path.to_path_buf(), message: m })
}

/// Where the memory goes: PSS (or RSS, or virtual size) per category, dirty inside.
fn snapshot_chart(path: &Path, snap: &Snapshot) -> Result<String> {
    let figure = [Figure::Pss, Figure::Rss, Figure::Size]
        .into_iter()
        .find(|&f| snap.categories.iter().any(|c| c.sizes.figure(f).is_some()))
        .unwrap_or(Figure::Size);
    let measure = figure.name();
    let mut bars: Vec<Bar> = snap
        .categories
        .iter()
        .map(|c| Bar {
            label: Category::ALL
                .iter()
                .find(|k| k.key() == c.key)
                .map_or_else(|| c.key.clone(), |k| k.label().to_string()),
            value: c.sizes.figure(figure).unwrap_or(0),
            // The dirty part in the same measure: proportional dirty for PSS.
            part: if figure == Figure::Pss { c.sizes.pss_dirty } else { c.sizes.dirty() },
        })
        .collect();
    bars.sort_by_key(|b| std::cmp::Reverse(b.value));
    let who = match snap.processes.as_slice() {
        [p] => format!("{} {}", p.pid.map_or_else(String::new, |p| p.to_string()), p.comm),
        ps => format!("{} processes", ps.len()),
    };
    let part = if figure == Figure::Pss { "dirty (Pss_Dirty)" } else { "dirty" };
    let legend = BarLegend { whole: measure, part };
    bars_svg(&format!("memtally: {measure} by category ({who})"), &bars, "bytes", legend)
        .map_err(|m| Error::Parse { path: path.to_path_buf(), message: m })
}
