//! Charts as SVG, drawn with plotters. Each chart carries the numbers it
//! draws in its `<desc>` (JSON), so it is checkable and accessible, not
//! just pixels.

use crate::render::table::escape_controls;
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
        let y_max = lines
            .iter()
            .flat_map(|l| l.points.iter().map(|p| mib(p.1)))
            .fold(0.0f64, f64::max)
            .max(1e-3)
            * 1.1;
        let mut chart = ChartBuilder::on(&root)
            .caption(escape_controls(title.to_string()), ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..t_max, 0.0..y_max)
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

/// Horizontal bars, largest first as given; `unit` is `bytes` or `count`.
pub fn bars_svg(title: &str, bars: &[Bar], unit: &str) -> Result<String, String> {
    font()?;
    let scale = |v: u64| if unit == "bytes" { mib(v) } else { v as f64 };
    let mut svg = String::new();
    {
        let height = (120 + 28 * bars.len().max(1)) as u32;
        let root = SVGBackend::with_string(&mut svg, (960, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let x_max = bars.iter().map(|b| scale(b.value)).fold(0.0f64, f64::max).max(1e-3) * 1.1;
        let n = bars.len().max(1) as i32;
        let labels: Vec<String> = bars.iter().map(|b| escape_controls(b.label.clone())).collect();
        let mut chart = ChartBuilder::on(&root)
            .caption(escape_controls(title.to_string()), ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(40)
            .y_label_area_size(200)
            .build_cartesian_2d(0.0..x_max, (0..n).into_segmented())
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .x_desc(if unit == "bytes" { "MiB" } else { "count" })
            .y_labels(bars.len().max(1))
            .y_label_formatter(&|seg| match seg {
                SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => {
                    labels.get(*i as usize).cloned().unwrap_or_default()
                }
                SegmentValue::Last => String::new(),
            })
            .draw()
            .map_err(|e| e.to_string())?;
        let light = RGBColor(158, 202, 225);
        let dark = RGBColor(33, 113, 181);
        chart
            .draw_series(bars.iter().enumerate().map(|(i, b)| {
                let i = i as i32;
                Rectangle::new(
                    [(0.0, SegmentValue::Exact(i)), (scale(b.value), SegmentValue::Exact(i + 1))],
                    light.filled(),
                )
            }))
            .map_err(|e| e.to_string())?;
        chart
            .draw_series(bars.iter().enumerate().filter_map(|(i, b)| {
                let i = i as i32;
                b.part.map(|p| {
                    Rectangle::new(
                        [(0.0, SegmentValue::Exact(i)), (scale(p), SegmentValue::Exact(i + 1))],
                        dark.filled(),
                    )
                })
            }))
            .map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    let data = json!({
        "kind": "bars",
        "unit": unit,
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
