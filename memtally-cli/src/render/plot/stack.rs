//! A watch series' categories as areas stacked over time, the series'
//! total as a black line over them (the bands' top meets it when the
//! categories add up to the total).

use memtally_core::model::Named;
use memtally_core::usecase::plot::StackPlot;
use plotters::prelude::*;
use serde_json::json;

use super::legend::{self, Entry, Swatch};
use super::svg::{portable_opacity, with_description};
use super::{font, mib, time_chart, value_ticks, LEGEND_LEFT, PLOT_HEIGHT, TOTAL, WIDTH};
use crate::render::table::escape_controls;

/// Band colours, bottom up (light enough for the black total over them).
const BANDS: [RGBColor; 10] = [
    RGBColor(158, 202, 225),
    RGBColor(253, 174, 107),
    RGBColor(161, 217, 155),
    RGBColor(252, 146, 114),
    RGBColor(188, 189, 220),
    RGBColor(201, 148, 132),
    RGBColor(247, 182, 210),
    RGBColor(199, 199, 199),
    RGBColor(219, 219, 141),
    RGBColor(158, 218, 229),
];

/// The stacked chart of `s`.
pub(super) fn stack_chart(s: &StackPlot) -> Result<String, String> {
    font()?;
    let figure = s.figure.name();
    let title = format!("memtally watch: {figure} by category over time");
    let total_label = format!("total {figure}");
    // Each band's lower and upper edge at every sample.
    let mut lower = vec![0u64; s.times.len()];
    let mut edges: Vec<(Vec<u64>, Vec<u64>)> = Vec::new();
    for b in &s.bands {
        let upper: Vec<u64> =
            lower.iter().zip(&b.values).map(|(l, v)| l.saturating_add(*v)).collect();
        edges.push((lower.clone(), upper.clone()));
        lower = upper;
    }
    let mut svg = String::new();
    {
        let n = s.bands.len() + usize::from(!s.total.is_empty());
        let root = SVGBackend::with_string(&mut svg, (WIDTH, PLOT_HEIGHT + legend::height(n)))
            .into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let (upper_area, lower_area) = root.split_vertically(PLOT_HEIGHT);
        let t_max = s.times.iter().copied().fold(0.0f64, f64::max).max(1e-3);
        let top = lower.iter().copied().chain(s.total.iter().map(|p| p.1)).max().unwrap_or(0);
        let mut chart = time_chart(&upper_area, &title, t_max, value_ticks(mib(top), false))?;
        let mut entries: Vec<Entry> = Vec::new();
        for (i, (b, (lo, up))) in s.bands.iter().zip(&edges).enumerate() {
            let color = BANDS[i % BANDS.len()];
            // The upper edge left to right, then the lower edge back.
            let outline: Vec<(f64, f64)> = s
                .times
                .iter()
                .zip(up)
                .map(|(&t, &v)| (t, mib(v)))
                .chain(s.times.iter().zip(lo).rev().map(|(&t, &v)| (t, mib(v))))
                .collect();
            chart
                .draw_series(std::iter::once(Polygon::new(outline, color.filled())))
                .map_err(|e| e.to_string())?;
            entries.push((Swatch::Fill(color), escape_controls(b.label.clone())));
        }
        // Drawn from the bottom band up, the legend lists them top down.
        entries.reverse();
        if !s.total.is_empty() {
            let points = s.total.iter().map(|&(t, v)| (t, mib(v)));
            chart
                .draw_series(LineSeries::new(points, TOTAL.stroke_width(2)))
                .map_err(|e| e.to_string())?;
            entries.insert(0, (Swatch::Line(TOTAL), total_label.clone()));
        }
        legend::draw(&lower_area, &entries, LEGEND_LEFT)?;
        root.present().map_err(|e| e.to_string())?;
    }
    let data = json!({
        "kind": "stack",
        "unit": "bytes",
        "times": s.times,
        "bands": s.bands.iter().map(|b| json!({"key": b.key, "label": b.label, "values": b.values})).collect::<Vec<_>>(),
        "total": s.total,
    });
    Ok(with_description(portable_opacity(&svg), &title, &data))
}
