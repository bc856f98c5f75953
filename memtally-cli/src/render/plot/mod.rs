//! Charts as SVG, drawn by the one SVG writer ([`crate::render::svg`]),
//! of what `plot`'s use case chose. Each chart carries the numbers it
//! draws in its `<desc>` (JSON), so it is checkable and accessible, not
//! just pixels.

mod axis;
mod legend;
mod stack;

use axis::{nice_ticks, value_ticks, Area};

use crate::render::svg::{Anchor, Paint, Svg, Text};
use crate::render::table::escape_controls;
use legend::{Entry, Swatch};
use memtally_core::analyze::plot::{
    CategoryPlot, HistogramPlot, Plot, SeriesLine, SeriesPlot, Subject,
};
use memtally_core::model::{Figure, Named};
use serde_json::json;

/// One line of a time-series chart.
#[derive(Debug, Clone)]
pub struct Line {
    pub label: String,
    /// The total of the series: drawn dashed, in black, over the others.
    pub total: bool,
    /// (seconds, bytes).
    pub points: Vec<(f64, u64)>,
}

/// One bar (a category, a size bucket).
#[derive(Debug, Clone)]
pub struct Bar {
    pub label: String,
    /// The whole bar, bytes (or a count).
    pub value: u64,
    /// The part drawn darker inside it (dirty bytes), if any.
    pub part: Option<u64>,
}

/// The chart of `plot`'s data: lines over time, or bars.
pub fn chart(plot: &Plot) -> String {
    match plot {
        Plot::Series(s) => series_chart(s),
        Plot::Histogram(h) => histogram_chart(h),
        Plot::Categories(c) => category_chart(c),
        Plot::Stacked(s) => stack::stack_chart(s),
    }
}

/// The total and the processes that grew most, over time.
fn series_chart(s: &SeriesPlot) -> String {
    let figure = s.figure.name();
    // A series of one process has a total equal to it: the legend says
    // so, since the dashed total then runs exactly on the process's line.
    let one = match s.processes.as_slice() {
        [p] => s.totals.iter().all(|t| t.points == p.points).then_some(&p.key),
        _ => None,
    };
    let mut lines: Vec<Line> = s
        .totals
        .iter()
        .map(|l| Line {
            label: match one {
                Some(pid) => format!("total {figure} (= process {pid}, the only one)"),
                None => format!("total {figure}"),
            },
            total: true,
            points: l.points.clone(),
        })
        .collect();
    lines.extend(series_labels(&s.processes));
    lines_svg(&format!("memtally watch: {figure} over time"), &lines)
}

/// Labels that tell the drawn processes apart: the pid, the program and
/// the option that distinguishes it from the others of its program
/// (`1234 chromium --type=renderer …`), cut to 48 columns.
fn series_labels(procs: &[SeriesLine]) -> Vec<Line> {
    use crate::render::width::{command_label, cut, distinguishing};
    let commands: Vec<String> = procs.iter().map(|l| l.label.clone()).collect();
    let d = distinguishing(&commands);
    procs
        .iter()
        .zip(d)
        .map(|(l, d)| {
            let name = format!("{} {}", l.key, command_label(&l.label, d.as_deref()));
            let name = escape_controls(name);
            Line { label: cut(&name, 48).into_owned(), total: false, points: l.points.clone() }
        })
        .collect()
}

/// Regions by virtual size, in power-of-two buckets: how many regions of
/// each size, and (darker) how many of them are purgeable.
fn histogram_chart(h: &HistogramPlot) -> String {
    let bars: Vec<Bar> = h
        .buckets
        .iter()
        .map(|b| Bar {
            label: format!("≤ {}", crate::render::units::human(b.up_to)),
            value: b.regions,
            part: Some(b.purgeable),
        })
        .collect();
    let which =
        if h.types.is_empty() { "all region types".to_string() } else { h.types.join(", ") };
    let legend = BarLegend { whole: "regions", part: "purgeable: volatile or empty" };
    bars_svg(&format!("vmmap regions by size ({which})"), &bars, "count", legend)
}

/// Where the memory goes: the measure per category, dirty inside.
fn category_chart(c: &CategoryPlot) -> String {
    let bars: Vec<Bar> = c
        .bars
        .iter()
        .map(|b| Bar { label: b.label.clone(), value: b.value, part: b.dirty })
        .collect();
    let who = match &c.subject {
        Subject::Process { pid, comm } => {
            format!("{} {comm}", pid.map_or_else(String::new, |p| p.to_string()))
        }
        Subject::Processes(n) => format!("{n} processes"),
    };
    let measure = c.measure.name();
    let part = if c.measure == Figure::Pss { "dirty (Pss_Dirty)" } else { "dirty" };
    let legend = BarLegend { whole: measure, part };
    bars_svg(&format!("memtally: {measure} by category ({who})"), &bars, "bytes", legend)
}

pub(super) fn mib(b: u64) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

/// The processes' line colours, in turn.
const COLORS: [&str; 6] = ["#1F77B4", "#D62728", "#2CA02C", "#FF7F0E", "#9467BD", "#8C564B"];

/// The total's colour: black, apart from every process colour; also the
/// axes' and the text's.
pub(super) const TOTAL: &str = "#000000";
pub(super) const INK: &str = "#000000";

/// Grid lines in solid greys (no opacity for a renderer to get wrong):
/// at the ticks, and lighter between them.
pub(super) const GRID: &str = "#CCCCCC";
pub(super) const GRID_LIGHT: &str = "#EEEEEE";

/// Width of a chart and height of a time chart's plotting part, pixels.
pub(super) const WIDTH: f64 = 960.0;
pub(super) const PLOT_HEIGHT: f64 = 540.0;

/// Space around the chart, pixels.
const MARGIN: f64 = 16.0;
/// The plotting area's top: under the title.
const AREA_TOP: f64 = 43.0;
/// Room under the plotting area for the x axis' values and name.
const X_LABELS: f64 = 40.0;

/// Left edge of the legend: under the plotting area, past the y labels.
pub(super) const LEGEND_LEFT: f64 = 86.0;

/// A chart `height` pixels high on white, with its title, data and the
/// title drawn at the top.
fn page(height: f64, title: &str, data: &serde_json::Value) -> Svg {
    let mut svg = Svg::new(WIDTH, height, title, &data.to_string());
    svg.rect(0.0, 0.0, WIDTH, height, Paint::fill("#FFFFFF"));
    svg.text(WIDTH / 2.0, MARGIN + 18.0, title, Text { size: 20.0, anchor: Anchor::Middle });
    svg
}

/// The plotting area of a chart whose plotting part is `height` high,
/// with `labels` pixels left of it for the y axis.
fn area(height: f64, labels: f64, x_end: f64, y_end: f64) -> Area {
    Area {
        left: MARGIN + labels,
        right: WIDTH - MARGIN - 1.0,
        top: AREA_TOP,
        bottom: height - MARGIN - X_LABELS,
        x_end,
        y_end,
    }
}

/// The area of a time series (lines or stacked areas): seconds across to
/// `t_max`, MiB up to the ticks' end, with its grid and axes drawn.
fn time_chart(svg: &mut Svg, t_max: f64, y_ticks: &[f64]) -> Area {
    let y_end = y_ticks.last().copied().unwrap_or(1.0);
    let a = area(PLOT_HEIGHT, 70.0, t_max, y_end);
    let x_ticks: Vec<f64> =
        nice_ticks(t_max, false).into_iter().filter(|&t| t <= t_max * (1.0 + 1e-9)).collect();
    axis::x_axis(svg, &a, &x_ticks, "seconds");
    axis::y_axis(svg, &a, y_ticks, "MiB", MARGIN + 10.0);
    a
}

/// Lines over time, y in MiB; the total dashed on top of the processes,
/// the legend in its own strip under the chart.
pub fn lines_svg(title: &str, lines: &[Line]) -> String {
    let data = json!({
        "kind": "lines",
        "unit": "bytes",
        "lines": lines.iter().map(|l| json!({"label": l.label, "points": l.points})).collect::<Vec<_>>(),
    });
    let mut svg = page(PLOT_HEIGHT + legend::height(lines.len()), title, &data);
    let t_max =
        lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)).fold(0.0f64, f64::max).max(1e-3);
    let y_ticks = value_ticks(
        lines.iter().flat_map(|l| l.points.iter().map(|p| mib(p.1))).fold(0.0f64, f64::max),
        false,
    );
    let a = time_chart(&mut svg, t_max, &y_ticks);
    let mut entries: Vec<Entry> = Vec::new();
    let mut colors = COLORS.iter().cycle();
    let points =
        |l: &Line| l.points.iter().map(|&(t, y)| (a.x(t), a.y(mib(y)))).collect::<Vec<_>>();
    // Processes first, so the dashed total runs over them.
    for line in lines.iter().filter(|l| !l.total) {
        let color = *colors.next().unwrap_or(&COLORS[0]);
        svg.polyline(points(line), Paint::stroke(color, 2.0));
        entries.push((Swatch::Line(color), line.label.clone()));
    }
    for line in lines.iter().filter(|l| l.total) {
        svg.polyline(points(line), Paint::stroke(TOTAL, 2.0).dashed(7.0, 4.0));
        entries.insert(0, (Swatch::Dashed(TOTAL), line.label.clone()));
    }
    legend::draw(&mut svg, PLOT_HEIGHT, &entries, LEGEND_LEFT);
    svg.finish()
}

/// The legend of a bar chart: what the whole bar is, and its darker part.
#[derive(Debug, Clone, Copy)]
pub struct BarLegend<'a> {
    pub whole: &'a str,
    pub part: &'a str,
}

/// The bar's colours: the whole, and the part inside it.
const LIGHT: &str = "#9ECAE1";
const DARK: &str = "#2171B5";

/// Space between bars, as a share of each bar's slot (on each side).
const BAR_GAP: f64 = 0.15;

/// Horizontal bars, the first at the top; `unit` is `bytes` (drawn in
/// MiB) or `count` (whole ticks). Bars have gaps between them, the value
/// axis ends at a round ceiling at least [`axis::HEADROOM`] past the
/// largest bar, and a legend under the chart says what the light and dark
/// parts are.
pub fn bars_svg(title: &str, bars: &[Bar], unit: &str, legend: BarLegend) -> String {
    let data = json!({
        "kind": "bars",
        "unit": unit,
        "legend": {"whole": legend.whole, "part": legend.part},
        "bars": bars.iter().map(|b| json!({"label": b.label, "value": b.value, "part": b.part})).collect::<Vec<_>>(),
    });
    let scale = |v: u64| if unit == "bytes" { mib(v) } else { v as f64 };
    let plot_height = 150.0 + 28.0 * bars.len().max(1) as f64;
    let mut svg = page(plot_height + legend::height(2), title, &data);
    let x_ticks =
        value_ticks(bars.iter().map(|b| scale(b.value)).fold(0.0f64, f64::max), unit != "bytes");
    let n = bars.len().max(1);
    let a = area(plot_height, 200.0, x_ticks.last().copied().unwrap_or(1.0), n as f64);
    axis::x_axis(&mut svg, &a, &x_ticks, if unit == "bytes" { "MiB" } else { "count" });
    let labels: Vec<String> = bars.iter().map(|b| b.label.clone()).collect();
    axis::y_labels(&mut svg, &a, &labels);
    // Bar i sits in the i-th slot from the top, a gap above and below it.
    let slot = (a.bottom - a.top) / n as f64;
    let rect = |svg: &mut Svg, i: usize, v: f64, color: &str| {
        let y = a.top + slot * (i as f64 + BAR_GAP);
        svg.rect(a.left, y, a.x(v) - a.left, slot * (1.0 - 2.0 * BAR_GAP), Paint::fill(color));
    };
    for (i, b) in bars.iter().enumerate() {
        rect(&mut svg, i, scale(b.value), LIGHT);
    }
    for (i, b) in bars.iter().enumerate() {
        if let Some(p) = b.part {
            rect(&mut svg, i, scale(p), DARK);
        }
    }
    let entries = [
        (Swatch::Fill(LIGHT), legend.whole.to_string()),
        (Swatch::Fill(DARK), legend.part.to_string()),
    ];
    legend::draw(&mut svg, plot_height, &entries, 216.0);
    svg.finish()
}
