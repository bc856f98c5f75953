//! Charts as SVG, drawn with plotters, of what `plot`'s use case chose.
//! Each chart carries the numbers it draws in its `<desc>` (JSON), so it
//! is checkable and accessible, not just pixels.

mod axis;
mod legend;
mod stack;
mod svg;

use axis::value_ticks;

use crate::render::table::escape_controls;
use axis::{Axis, Labels};
use legend::{Entry, Swatch};
use memtally_core::model::{Figure, Named};
use memtally_core::usecase::plot::{
    CategoryPlot, HistogramPlot, Plot, SeriesLine, SeriesPlot, Subject,
};
use plotters::prelude::*;
use serde_json::json;
use svg::{portable_opacity, with_description};

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
pub fn chart(plot: &Plot) -> Result<String, String> {
    match plot {
        Plot::Series(s) => series_chart(s),
        Plot::Histogram(h) => histogram_chart(h),
        Plot::Categories(c) => category_chart(c),
        Plot::Stacked(s) => stack::stack_chart(s),
    }
}

/// The total and the processes that grew most, over time.
fn series_chart(s: &SeriesPlot) -> Result<String, String> {
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
fn histogram_chart(h: &HistogramPlot) -> Result<String, String> {
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
fn category_chart(c: &CategoryPlot) -> Result<String, String> {
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

type DrawResult = Result<(), String>;

pub(super) fn font() -> DrawResult {
    // Text metrics come from the embedded DejaVu Sans, so charts look the
    // same on machines without fonts installed. Registering twice is harmless.
    plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular())
        .map_err(|_| "the embedded font could not be loaded".to_string())
}

pub(super) fn mib(b: u64) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// The total's colour: black, apart from every process colour.
pub(super) const TOTAL: RGBColor = RGBColor(0, 0, 0);

/// Grid lines in solid greys (no opacity for a renderer to get wrong).
pub(super) const GRID_BOLD: RGBColor = RGBColor(204, 204, 204);
pub(super) const GRID_LIGHT: RGBColor = RGBColor(238, 238, 238);

/// Width and height of a chart's plotting part, pixels.
pub(super) const WIDTH: u32 = 960;
pub(super) const PLOT_HEIGHT: u32 = 540;

/// Left edge of the legend: under the plotting area, past the y labels.
pub(super) const LEGEND_LEFT: i32 = 86;

/// The chart of a time series (lines or stacked areas): seconds across,
/// MiB up to the ticks' end, with its caption and grid drawn.
fn time_chart<'a, 'b>(
    area: &'a DrawingArea<SVGBackend<'b>, plotters::coord::Shift>,
    title: &str,
    t_max: f64,
    y_ticks: Vec<f64>,
) -> Result<
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<plotters::coord::types::RangedCoordf64, Axis>>,
    String,
> {
    let mut chart = ChartBuilder::on(area)
        .caption(escape_controls(title.to_string()), ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..t_max, Axis::new(y_ticks))
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .bold_line_style(GRID_BOLD)
        .light_line_style(GRID_LIGHT)
        .x_desc("seconds")
        .y_desc("MiB")
        .draw()
        .map_err(|e| e.to_string())?;
    Ok(chart)
}

/// Lines over time, y in MiB; the total dashed on top of the processes,
/// the legend in its own strip under the chart.
pub fn lines_svg(title: &str, lines: &[Line]) -> Result<String, String> {
    font()?;
    let mut svg = String::new();
    {
        let height = PLOT_HEIGHT + legend::height(lines.len());
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let (upper, lower) = root.split_vertically(PLOT_HEIGHT);
        let t_max = lines
            .iter()
            .flat_map(|l| l.points.iter().map(|p| p.0))
            .fold(0.0f64, f64::max)
            .max(1e-3);
        let y_ticks = value_ticks(
            lines.iter().flat_map(|l| l.points.iter().map(|p| mib(p.1))).fold(0.0f64, f64::max),
            false,
        );
        let mut chart = time_chart(&upper, title, t_max, y_ticks)?;
        let mut entries: Vec<Entry> = Vec::new();
        let mut colors = COLORS.iter().cycle();
        // Processes first, so the dashed total runs over them.
        for line in lines.iter().filter(|l| !l.total) {
            let color = *colors.next().unwrap_or(&COLORS[0]);
            let points = line.points.iter().map(|&(t, y)| (t, mib(y)));
            chart
                .draw_series(LineSeries::new(points, color.stroke_width(2)))
                .map_err(|e| e.to_string())?;
            entries.push((Swatch::Line(color), escape_controls(line.label.clone())));
        }
        for line in lines.iter().filter(|l| l.total) {
            let points = line.points.iter().map(|&(t, y)| (t, mib(y)));
            chart
                .draw_series(DashedLineSeries::new(points, 7, 4, TOTAL.stroke_width(2)))
                .map_err(|e| e.to_string())?;
            entries.insert(0, (Swatch::Dashed(TOTAL), escape_controls(line.label.clone())));
        }
        legend::draw(&lower, &entries, LEGEND_LEFT)?;
        root.present().map_err(|e| e.to_string())?;
    }
    let data = json!({
        "kind": "lines",
        "unit": "bytes",
        "lines": lines.iter().map(|l| json!({"label": l.label, "points": l.points})).collect::<Vec<_>>(),
    });
    Ok(with_description(portable_opacity(&svg), title, &data))
}

/// The legend of a bar chart: what the whole bar is, and its darker part.
#[derive(Debug, Clone, Copy)]
pub struct BarLegend<'a> {
    pub whole: &'a str,
    pub part: &'a str,
}

/// The bar's colours: the whole, and the part inside it.
const LIGHT: RGBColor = RGBColor(158, 202, 225);
const DARK: RGBColor = RGBColor(33, 113, 181);

/// Space between bars, as a share of each bar's slot (on each side).
const BAR_GAP: f64 = 0.15;

/// Horizontal bars, the first at the top; `unit` is `bytes` (drawn in
/// MiB) or `count` (whole ticks). Bars have gaps between them, the value
/// axis ends at a round ceiling at least [`HEADROOM`] past the largest
/// bar, and a legend under the chart says what the light and dark parts are.
pub fn bars_svg(
    title: &str,
    bars: &[Bar],
    unit: &str,
    legend: BarLegend,
) -> Result<String, String> {
    font()?;
    let scale = |v: u64| if unit == "bytes" { mib(v) } else { v as f64 };
    let mut svg = String::new();
    {
        let plot_height = (150 + 28 * bars.len().max(1)) as u32;
        let height = plot_height + legend::height(2);
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let (upper, lower) = root.split_vertically(plot_height);
        let x_ticks = value_ticks(
            bars.iter().map(|b| scale(b.value)).fold(0.0f64, f64::max),
            unit != "bytes",
        );
        let n = bars.len().max(1);
        let labels: Vec<String> = bars.iter().map(|b| escape_controls(b.label.clone())).collect();
        // Bar i sits in the slot [n-1-i, n-i): the first at the top; its
        // label at the slot's middle.
        let slot = |i: usize| (n - 1 - i) as f64;
        let centers: Vec<f64> = (0..n).map(|i| slot(i) + 0.5).collect();
        let mut chart = ChartBuilder::on(&upper)
            .caption(escape_controls(title.to_string()), ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(40)
            .y_label_area_size(200)
            .build_cartesian_2d(Axis::new(x_ticks), Labels { n, centers })
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .bold_line_style(GRID_BOLD)
            .light_line_style(GRID_LIGHT)
            .x_desc(if unit == "bytes" { "MiB" } else { "count" })
            .y_label_formatter(&|y| {
                let from_top = n as f64 - y.floor() - 1.0;
                labels.get(from_top.max(0.0) as usize).cloned().unwrap_or_default()
            })
            .draw()
            .map_err(|e| e.to_string())?;
        let rect = |i: usize, v: f64, color: RGBColor| {
            Rectangle::new([(0.0, slot(i) + BAR_GAP), (v, slot(i) + 1.0 - BAR_GAP)], color.filled())
        };
        chart
            .draw_series(bars.iter().enumerate().map(|(i, b)| rect(i, scale(b.value), LIGHT)))
            .map_err(|e| e.to_string())?;
        chart
            .draw_series(
                bars.iter()
                    .enumerate()
                    .filter_map(|(i, b)| b.part.map(|p| rect(i, scale(p), DARK))),
            )
            .map_err(|e| e.to_string())?;
        let entries = [
            (Swatch::Fill(LIGHT), escape_controls(legend.whole.to_string())),
            (Swatch::Fill(DARK), escape_controls(legend.part.to_string())),
        ];
        legend::draw(&lower, &entries, 216)?;
        root.present().map_err(|e| e.to_string())?;
    }
    let data = json!({
        "kind": "bars",
        "unit": unit,
        "legend": {"whole": legend.whole, "part": legend.part},
        "bars": bars.iter().map(|b| json!({"label": b.label, "value": b.value, "part": b.part})).collect::<Vec<_>>(),
    });
    Ok(with_description(portable_opacity(&svg), title, &data))
}
