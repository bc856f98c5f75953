//! Charts as SVG, drawn with plotters, of what `plot`'s use case chose.
//! Each chart carries the numbers it draws in its `<desc>` (JSON), so it
//! is checkable and accessible, not just pixels.

use crate::render::table::escape_controls;
use memtally_core::model::{Figure, Named};
use memtally_core::usecase::plot::{
    CategoryPlot, HistogramPlot, Plot, SeriesLine, SeriesPlot, Subject,
};
use plotters::prelude::*;
use serde_json::json;

/// One line of a time-series chart.
#[derive(Debug, Clone)]
pub struct Line {
    pub label: String,
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
    }
}

/// The total and the processes that grew most, over time.
fn series_chart(s: &SeriesPlot) -> Result<String, String> {
    let figure = s.figure.name();
    let mut lines: Vec<Line> = s
        .totals
        .iter()
        .map(|l| Line { label: format!("total {figure}"), points: l.points.clone() })
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
            Line { label: cut(&name, 48).into_owned(), points: l.points.clone() }
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

fn font() -> DrawResult {
    // Text metrics come from the embedded DejaVu Sans, so charts look the
    // same on machines without fonts installed. Registering twice is harmless.
    plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular())
        .map_err(|_| "the embedded font could not be loaded".to_string())
}

fn mib(b: u64) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

/// An axis from 0 to a round ceiling just above `max`, in steps of 1, 2 or
/// 5 times a power of ten (whole steps for counts): the ticks, ending at
/// the ceiling, so the axis ends where its last tick is and no tick is
/// past the data's ceiling.
pub fn nice_ticks(max: f64, whole: bool) -> Vec<f64> {
    let max = if max.is_finite() && max > 0.0 { max } else { 1.0 };
    let raw = max / 6.0;
    let mag = 10f64.powf(raw.log10().floor());
    let mut step =
        [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(10.0 * mag);
    if whole {
        step = step.max(1.0).round();
    }
    let count = (max / step - 1e-9).ceil().max(1.0) as usize;
    (0..=count).map(|k| k as f64 * step).collect()
}

/// A value axis whose ticks are exactly the given ones (the last one its
/// end), printed by [`tick_text`].
struct Axis {
    inner: plotters::coord::types::RangedCoordf64,
    ticks: Vec<f64>,
}

impl Axis {
    fn new(ticks: Vec<f64>) -> Axis {
        let end = ticks.last().copied().unwrap_or(1.0);
        Axis { inner: (0.0..end).into(), ticks }
    }
}

impl plotters::coord::ranged1d::Ranged for Axis {
    type FormatOption = plotters::coord::ranged1d::NoDefaultFormatting;
    type ValueType = f64;
    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }
    fn key_points<H: plotters::coord::ranged1d::KeyPointHint>(&self, _hint: H) -> Vec<f64> {
        self.ticks.clone()
    }
    fn range(&self) -> std::ops::Range<f64> {
        self.inner.range()
    }
}

impl plotters::coord::ranged1d::ValueFormatter<f64> for Axis {
    fn format(value: &f64) -> String {
        tick_text(*value)
    }
}

/// The bars' axis: one slot per bar, `0..n`, a key point (its label) at
/// each slot's middle; nothing above the last bar.
struct Labels {
    n: usize,
    centers: Vec<f64>,
}

impl plotters::coord::ranged1d::Ranged for Labels {
    type FormatOption = plotters::coord::ranged1d::NoDefaultFormatting;
    type ValueType = f64;
    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let inner: plotters::coord::types::RangedCoordf64 = (0.0..self.n as f64).into();
        inner.map(value, limit)
    }
    fn key_points<H: plotters::coord::ranged1d::KeyPointHint>(&self, _hint: H) -> Vec<f64> {
        self.centers.clone()
    }
    fn range(&self) -> std::ops::Range<f64> {
        0.0..self.n as f64
    }
}

impl plotters::coord::ranged1d::ValueFormatter<f64> for Labels {
    /// The labels are the bars' own (the chart's label formatter).
    fn format(_value: &f64) -> String {
        String::new()
    }
}

/// A tick's text: no decimals for a whole number, else as few as it needs.
fn tick_text(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{}", v.round() as i64)
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// Lines over time, y in MiB.
pub fn lines_svg(title: &str, lines: &[Line]) -> Result<String, String> {
    font()?;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (960, 540)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let t_max = lines
            .iter()
            .flat_map(|l| l.points.iter().map(|p| p.0))
            .fold(0.0f64, f64::max)
            .max(1e-3);
        let y_ticks = nice_ticks(
            lines.iter().flat_map(|l| l.points.iter().map(|p| mib(p.1))).fold(0.0f64, f64::max),
            false,
        );
        let mut chart = ChartBuilder::on(&root)
            .caption(escape_controls(title.to_string()), ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..t_max, Axis::new(y_ticks))
            .map_err(|e| e.to_string())?;
        chart.configure_mesh().x_desc("seconds").y_desc("MiB").draw().map_err(|e| e.to_string())?;
        for (i, line) in lines.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            chart
                .draw_series(LineSeries::new(
                    line.points.iter().map(|&(t, y)| (t, mib(y))),
                    color.stroke_width(2),
                ))
                .map_err(|e| e.to_string())?
                .label(escape_controls(line.label.clone()))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
                });
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperLeft)
            .draw()
            .map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    let data = json!({
        "kind": "lines",
        "unit": "bytes",
        "lines": lines.iter().map(|l| json!({"label": l.label, "points": l.points})).collect::<Vec<_>>(),
    });
    Ok(with_description(svg, title, &data))
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
/// axis ends at the round ceiling of the largest bar, and a legend says
/// what the light and dark parts are.
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
        let height = (150 + 28 * bars.len().max(1)) as u32;
        let root = SVGBackend::with_string(&mut svg, (960, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let x_ticks =
            nice_ticks(bars.iter().map(|b| scale(b.value)).fold(0.0f64, f64::max), unit != "bytes");
        let n = bars.len().max(1);
        let labels: Vec<String> = bars.iter().map(|b| escape_controls(b.label.clone())).collect();
        // Bar i sits in the slot [n-1-i, n-i): the first at the top; its
        // label at the slot's middle.
        let slot = |i: usize| (n - 1 - i) as f64;
        let centers: Vec<f64> = (0..n).map(|i| slot(i) + 0.5).collect();
        let mut chart = ChartBuilder::on(&root)
            .caption(escape_controls(title.to_string()), ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(40)
            .y_label_area_size(200)
            .build_cartesian_2d(Axis::new(x_ticks), Labels { n, centers })
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .disable_y_mesh()
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
            .map_err(|e| e.to_string())?
            .label(escape_controls(legend.whole.to_string()))
            .legend(|(x, y)| Rectangle::new([(x, y - 6), (x + 16, y + 6)], LIGHT.filled()));
        chart
            .draw_series(
                bars.iter()
                    .enumerate()
                    .filter_map(|(i, b)| b.part.map(|p| rect(i, scale(p), DARK))),
            )
            .map_err(|e| e.to_string())?
            .label(escape_controls(legend.part.to_string()))
            .legend(|(x, y)| Rectangle::new([(x, y - 6), (x + 16, y + 6)], DARK.filled()));
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .position(SeriesLabelPosition::LowerRight)
            .draw()
            .map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    let data = json!({
        "kind": "bars",
        "unit": unit,
        "legend": {"whole": legend.whole, "part": legend.part},
        "bars": bars.iter().map(|b| json!({"label": b.label, "value": b.value, "part": b.part})).collect::<Vec<_>>(),
    });
    Ok(with_description(svg, title, &data))
}

/// Puts `<title>` and a `<desc>` holding the data right after `<svg …>`.
fn with_description(svg: String, title: &str, data: &serde_json::Value) -> String {
    let Some(end) = svg.find('>') else { return svg };
    let mut out = String::with_capacity(svg.len() + 512);
    out.push_str(&svg[..=end]);
    out.push_str(&format!(
        "\n<title>{}</title>\n<desc>{}</desc>",
        xml_escape(&escape_controls(title.to_string())),
        xml_escape(&data.to_string())
    ));
    out.push_str(&svg[end + 1..]);
    out
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_end_at_a_round_ceiling_just_above_the_data() {
        assert_eq!(nice_ticks(5.0, true), [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(nice_ticks(35.2, false), [0.0, 10.0, 20.0, 30.0, 40.0]);
        assert_eq!(nice_ticks(1.0, true), [0.0, 1.0]);
        assert_eq!(nice_ticks(0.0, true), [0.0, 1.0]);
        assert_eq!(
            nice_ticks(0.3, false),
            [0.0, 0.05, 0.1, 0.15000000000000002, 0.2, 0.25, 0.30000000000000004]
        );
        for max in [0.7, 3.0, 9.9, 12.0, 101.0, 4097.0] {
            let t = nice_ticks(max, true);
            let step = t[1] - t[0];
            assert!(t.iter().all(|v| v.fract() == 0.0), "{t:?}");
            assert!(*t.last().unwrap() >= max && *t.last().unwrap() - step < max, "{max}: {t:?}");
        }
        assert_eq!(tick_text(5.0), "5");
        assert_eq!(tick_text(0.25), "0.25");
    }
}
