//! Prints `watch`: a line per sample with its change, and at the end the
//! growth rate of every series (least squares) with a verdict.

use std::io::Write;
use std::sync::LazyLock;

use serde::Serialize;

use memtally_core::analyze::trend::{trends, Sample, Scope, SeriesKey, Trend};
use memtally_core::model::series::SeriesFigure;
use memtally_core::model::{Figure, Named, Sizes};

use crate::render::blocks::{write_text, Block};
use crate::render::json;
use crate::render::table::{csv_text, Align, Table};
use crate::render::units::{human, human_opt, human_signed, plural};
use crate::render::{Printer, Screen};

fn total_of(s: &Sample) -> Option<&Sizes> {
    s.get(&(Scope::Total, "total".to_string())).map(|(_, s)| s)
}

/// One sample's line: the totals and their change since `before`.
pub fn live_line(
    t: f64,
    now: &Sample,
    before: Option<&Sample>,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let Some(cur) = total_of(now) else { return Ok(()) };
    let prev = before.and_then(total_of);
    let change = |f: Figure| match (prev.and_then(|p| p.figure(f)), cur.figure(f)) {
        (Some(a), Some(b)) => format!(" ({})", human_signed(b as i128 - a as i128)),
        _ => String::new(),
    };
    let procs = now.keys().filter(|(s, _)| *s == Scope::Process).count();
    // Summable figures only (model::summable): PSS, its dirty part and
    // SwapPss; RSS only where the total is one process's.
    let dirty = dirty_figure(cur);
    let rss = match cur.rss {
        Some(rss) => format!("  RSS {}{}", human(rss), change(Figure::Rss)),
        None => String::new(),
    };
    write!(
        out,
        "[{t:7.1}s] PSS {}{}  {} {}{}{rss}  swap PSS {}  {procs} processes",
        human_opt(cur.pss),
        change(Figure::Pss),
        dirty_label(dirty),
        human_opt(cur.figure(dirty)),
        change(dirty),
        human_opt(cur.swap_pss),
    )?;
    // `watch --wss`, from its second sample: what the interval touched.
    if let (Some(t), Some(w)) = (cur.touched, cur.working_set) {
        write!(out, "  touched {}  working set {}", human(t), human(w))?;
    }
    writeln!(out)
}

/// The dirty figure that adds up: Pss_Dirty, or Private_Dirty on
/// kernels before 6.0 (no Pss_Dirty).
fn dirty_figure(sizes: &Sizes) -> Figure {
    if sizes.pss_dirty.is_some() || sizes.private_dirty.is_none() {
        Figure::PssDirty
    } else {
        Figure::PrivateDirty
    }
}

fn dirty_label(f: Figure) -> &'static str {
    if f == Figure::PssDirty {
        "PSS dirty"
    } else {
        "private dirty"
    }
}

/// The dirty figure of a whole series, as [`dirty_figure`] of its first total.
fn series_dirty(series: &[(f64, Sample)]) -> Figure {
    series.iter().find_map(|(_, s)| total_of(s)).map_or(Figure::PssDirty, dirty_figure)
}

/// The figures of a watch's series, in [`SeriesFigure::WATCH`] order;
/// with `--wss`, [`SeriesFigure::WATCH_WSS`].
static SERIES_FIGURES: LazyLock<Vec<Figure>> =
    LazyLock::new(|| SeriesFigure::WATCH.iter().map(|f| f.0).collect());
static WSS_FIGURES: LazyLock<Vec<Figure>> =
    LazyLock::new(|| SeriesFigure::WATCH_WSS.iter().map(|f| f.0).collect());

/// The columns of a watch: with the working-set figures or without.
pub fn columns(wss: bool) -> &'static [SeriesFigure] {
    if wss {
        SeriesFigure::WATCH_WSS
    } else {
        SeriesFigure::WATCH
    }
}

/// The figures of one series in a sample: exact bytes, `null` where unknown.
fn figures_json(sizes: &Sizes, wss: bool) -> json::Figures<'_> {
    let figures: &[Figure] = if wss { &WSS_FIGURES } else { &SERIES_FIGURES };
    json::Figures { sizes, figures }
}

/// One line of `watch --format json` per sample (docs/json.md).
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct SampleJson<'a> {
    #[cfg_attr(feature = "schema", schemars(extend("const" = "sample")))]
    r#type: &'static str,
    index: usize,
    elapsed_s: f64,
    total: Option<json::Figures<'a>>,
    processes: Vec<SampledProcess<'a>>,
    categories: Vec<SampledCategory<'a>>,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct SampledProcess<'a> {
    pid: Option<u32>,
    command: &'a str,
    #[serde(flatten)]
    figures: json::Figures<'a>,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct SampledCategory<'a> {
    category: &'a str,
    label: &'a str,
    #[serde(flatten)]
    figures: json::Figures<'a>,
}

/// One sample as one line of JSON (JSON Lines, docs/json.md): the totals,
/// every process and every category sampled.
pub fn sample_json(
    index: usize,
    t: f64,
    now: &Sample,
    wss: bool,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let mut doc = SampleJson {
        r#type: "sample",
        index,
        elapsed_s: t,
        total: None,
        processes: Vec::new(),
        categories: Vec::new(),
    };
    for ((scope, key), (label, sizes)) in now {
        let figures = figures_json(sizes, wss);
        match scope {
            Scope::Process => doc.processes.push(SampledProcess {
                pid: key.parse().ok(),
                command: label,
                figures,
            }),
            Scope::Category => {
                doc.categories.push(SampledCategory { category: key, label, figures })
            }
            Scope::Total => doc.total = Some(figures),
        }
    }
    json::line(out, &doc)
}

/// The header of `watch --format csv`: one row per sample follows.
pub fn sample_csv_header(wss: bool, out: &mut dyn Write) -> std::io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    let mut header = vec!["elapsed_s", "processes"];
    header.extend(columns(wss).iter().map(|f| f.name()));
    w.write_record(&header)?;
    w.flush()
}

/// One sample as one CSV row: seconds since the first, how many
/// processes, and the totals (bytes; empty where unknown).
pub fn sample_csv(t: f64, now: &Sample, wss: bool, out: &mut dyn Write) -> std::io::Result<()> {
    let procs = now.keys().filter(|(s, _)| *s == Scope::Process).count();
    let mut rec = vec![format!("{t:.3}"), procs.to_string()];
    let cur = total_of(now);
    rec.extend(
        columns(wss)
            .iter()
            .map(|f| cur.and_then(|s| s.figure(f.0)).map_or(String::new(), |v| v.to_string())),
    );
    let mut w = csv::Writer::from_writer(out);
    w.write_record(&rec)?;
    w.flush()
}

/// r² for a table: `-` where it is undefined (the series did not move).
fn r2_cell(r2: Option<f64>) -> String {
    r2.map_or("-".into(), |r| format!("{r:.2}"))
}

fn rate(v: f64) -> String {
    format!("{}/s", human_signed(v.round() as i128))
}

/// The samples of one watch, (seconds since the first, sample).
/// The last line of `watch --format json` (docs/json.md).
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct SummaryJson<'a> {
    #[cfg_attr(feature = "schema", schemars(extend("const" = "summary")))]
    r#type: &'static str,
    samples: usize,
    seconds: f64,
    trends: Vec<TrendJson<'a>>,
}

/// One series' growth rates, bytes per second.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct TrendJson<'a> {
    scope: Scope,
    key: &'a str,
    label: &'a str,
    pss_rate: f64,
    pss_r2: Option<f64>,
    dirty_rate: Option<f64>,
    dirty_r2: Option<f64>,
    samples: usize,
    steady_growth: bool,
}

pub struct Summary<'a> {
    pub series: &'a [(f64, Sample)],
    /// The table lists the categories that did not change too (`--all`).
    pub all: bool,
}

impl Summary<'_> {
    fn span(&self) -> f64 {
        self.series.last().map_or(0.0, |s| s.0) - self.series.first().map_or(0.0, |s| s.0)
    }
}

impl Printer for Summary<'_> {
    fn table(&self, out: &mut dyn Write, screen: Screen) -> std::io::Result<()> {
        let width = screen.width;
        write_text(summary(self.series, self.all), width, out)
    }

    /// Every series' rates in bytes per second: the last line of the JSON
    /// Lines stream (`"type": "summary"`), after one line per sample.
    fn json(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let pss = trends(self.series, Figure::Pss);
        let dirty = trends(self.series, series_dirty(self.series));
        let trends = pss
            .iter()
            .map(|(k, (label, t))| {
                let d = dirty.get(k).map(|(_, t)| t);
                TrendJson {
                    scope: k.0,
                    key: &k.1,
                    label,
                    pss_rate: t.slope,
                    pss_r2: t.r2,
                    dirty_rate: d.map(|t| t.slope),
                    dirty_r2: d.and_then(|t| t.r2),
                    samples: t.samples,
                    steady_growth: t.grows_steadily(),
                }
            })
            .collect();
        let doc = SummaryJson {
            r#type: "summary",
            samples: self.series.len(),
            seconds: self.span(),
            trends,
        };
        json::line(out, &doc)
    }

    /// One row per series: its rates in bytes per second.
    fn csv(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let pss = trends(self.series, Figure::Pss);
        let dirty = trends(self.series, series_dirty(self.series));
        let mut w = csv::Writer::from_writer(out);
        w.write_record([
            "scope",
            "key",
            "label",
            "pss_rate",
            "pss_r2",
            "dirty_rate",
            "dirty_r2",
            "samples",
            "steady_growth",
        ])?;
        for (k, (label, t)) in &pss {
            let d = dirty.get(k).map(|(_, t)| t);
            w.write_record([
                k.0.name().to_string(),
                csv_text(k.1.clone()),
                csv_text(label.clone()),
                t.slope.to_string(),
                t.r2.map_or(String::new(), |r| r.to_string()),
                d.map_or(String::new(), |t| t.slope.to_string()),
                d.and_then(|t| t.r2).map_or(String::new(), |r| r.to_string()),
                t.samples.to_string(),
                t.grows_steadily().to_string(),
            ])?;
        }
        w.flush()
    }
}

/// Whether a category's PSS and dirty bytes were the same in every
/// sample: a fit over equal values has a slope of exactly 0.
fn unchanged(pss: &Trend, dirty: Option<&Trend>) -> bool {
    pss.slope == 0.0 && dirty.is_none_or(|d| d.slope == 0.0)
}

/// The table view of the end of a watch: every series' growth rate, and
/// the verdict. The categories that did not change are counted, not
/// listed, unless `all`.
pub(crate) fn summary(series: &[(f64, Sample)], all: bool) -> Vec<Block> {
    if series.len() < 2 {
        return vec![Block::Line("(one sample: no growth rate; use --count 2 or more)".into())];
    }
    let pss = trends(series, Figure::Pss);
    let dirty = trends(series, series_dirty(series));
    let mut rows: Vec<(&SeriesKey, &(String, Trend))> = pss.iter().collect();
    rows.sort_by(|a, b| {
        let order = |s: &Scope| match s {
            Scope::Total => 0,
            Scope::Category => 1,
            Scope::Process => 2,
        };
        order(&a.0 .0).cmp(&order(&b.0 .0)).then(b.1 .1.slope.abs().total_cmp(&a.1 .1.slope.abs()))
    });
    let span = series.last().map_or(0.0, |s| s.0) - series[0].0;
    let heading = format!("growth over {span:.1}s, {} samples (least-squares fit):", series.len());
    let mut t = Table::new(&[
        ("SCOPE", Align::Left),
        ("KEY", Align::Left),
        ("PSS RATE", Align::Right),
        ("DIRTY RATE", Align::Right),
        ("R²", Align::Right),
        ("", Align::Left),
    ]);
    let mut shown_processes = 0;
    let mut still = 0;
    for (key, (label, trend)) in &rows {
        let d = dirty.get(*key).map(|(_, t)| t);
        if key.0 == Scope::Category && !all && unchanged(trend, d) {
            still += 1;
            continue;
        }
        if key.0 == Scope::Process {
            shown_processes += 1;
            if shown_processes > 10 {
                continue;
            }
        }
        let d = dirty.get(*key).map_or("-".into(), |(_, t)| rate(t.slope));
        let key_cell = if key.0 == Scope::Category { label.clone() } else { key.1.clone() };
        let label_cell = if key.0 == Scope::Process { label.clone() } else { String::new() };
        t.row(vec![
            key.0.name().to_string(),
            key_cell,
            rate(trend.slope),
            d,
            r2_cell(trend.r2),
            label_cell,
        ]);
    }
    let growing: Vec<_> =
        rows.iter().filter(|(k, (_, tr))| k.0 == Scope::Process && tr.grows_steadily()).collect();
    let verdict = match growing.first() {
        Some((k, (label, tr))) => format!(
            "verdict: memory grows steadily in {}: pid {} grows {} (r² {}), {}",
            plural(growing.len(), "process", "processes"),
            k.1,
            rate(tr.slope),
            r2_cell(tr.r2),
            label
        ),
        None => match pss.get(&(Scope::Total, "total".to_string())) {
            Some((_, tr)) if tr.grows_steadily() => format!(
                "verdict: the total grows steadily ({}), spread over processes",
                rate(tr.slope)
            ),
            Some(_) => "verdict: no steady growth".into(),
            // No PSS in the samples (another user's process, status figures
            // only): nothing to judge, which is not "no growth".
            None => "verdict: none: PSS could not be read in these samples (run as the process's user or root)".into(),
        },
    };
    let mut blocks = vec![Block::Blank, Block::Heading(heading), Block::Table(t)];
    if still > 0 {
        blocks.push(Block::Line(format!(
            "({} did not change: 0/s; --all lists them)",
            plural(still, "category", "categories")
        )));
    }
    blocks.push(Block::Line(verdict));
    blocks
}

/// The schemas of `watch --format json`'s two kinds of line, a sample and
/// the closing summary (docs/schema/, [`crate::render::schema`]).
#[cfg(feature = "schema")]
pub(crate) fn schemas(g: &mut schemars::SchemaGenerator) -> [schemars::Schema; 2] {
    [
        <SampleJson as schemars::JsonSchema>::json_schema(g),
        <SummaryJson as schemars::JsonSchema>::json_schema(g),
    ]
}

#[cfg(test)]
mod verdict_tests {
    use super::*;

    fn sample(rss: u64, pss: Option<u64>) -> Sample {
        let mut s = Sample::new();
        let sizes = Sizes { rss: Some(rss), pss, ..Default::default() };
        s.insert((Scope::Total, "total".to_string()), ("total".to_string(), sizes));
        s
    }

    fn verdict(series: &[(f64, Sample)]) -> String {
        let mut out = Vec::new();
        write_text(summary(series, true), None, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        text.lines().find(|l| l.starts_with("verdict")).unwrap().to_string()
    }

    #[test]
    fn unreadable_pss_gives_no_verdict_of_no_growth() {
        let blind: Vec<(f64, Sample)> =
            (0..5).map(|i| (i as f64, sample(1 << 20 << i, None))).collect();
        let v = verdict(&blind);
        assert!(v.starts_with("verdict: none") && !v.contains("no steady growth"), "{v}");
        let flat: Vec<(f64, Sample)> =
            (0..5).map(|i| (i as f64, sample(1 << 20, Some(1 << 20)))).collect();
        assert_eq!(verdict(&flat), "verdict: no steady growth");
    }

    /// Any user's arguments can hold ESC and BEL: the verdict names the
    /// process that grows by its command line, escaped as the table is.
    #[test]
    fn the_verdict_escapes_a_command_line() {
        let grows: Vec<(f64, Sample)> = (0..6u64)
            .map(|i| {
                let mut s = sample(1 << 30, Some(1 << 30));
                let bytes = (i + 1) * (64 << 20);
                let sizes = Sizes { rss: Some(bytes), pss: Some(bytes), ..Default::default() };
                let label = "leak \x1b]0;pwned\x07\x1b[2J".to_string();
                s.insert((Scope::Process, "42".to_string()), (label, sizes));
                (i as f64, s)
            })
            .collect();
        let v = verdict(&grows);
        assert!(v.starts_with("verdict: memory grows steadily in 1 process: pid 42"), "{v}");
        assert!(v.ends_with("leak ?]0;pwned??[2J"), "{v:?}");
    }
}
