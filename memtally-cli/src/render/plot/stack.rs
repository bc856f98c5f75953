//! A watch series' categories as areas stacked over time, the series'
//! total as a black line over them (the bands' top meets it when the
//! categories add up to the total).

use memtally_core::analyze::plot::StackPlot;
use memtally_core::model::Named;
use serde_json::json;

use super::legend::{self, Entry, Swatch};
use super::{mib, page, time_chart, value_ticks, LEGEND_LEFT, PLOT_HEIGHT, TOTAL};
use crate::render::svg::Paint;

/// Band colours, bottom up (light enough for the black total over them).
const BANDS: [&str; 10] = [
    "#9ECAE1", "#FDAE6B", "#A1D99B", "#FC9272", "#BCBDDC", "#C99484", "#F7B6D2", "#C7C7C7",
    "#DBDB8D", "#9EDAE5",
];

/// The stacked chart of `s`.
pub(super) fn stack_chart(s: &StackPlot) -> String {
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
    let data = json!({
        "kind": "stack",
        "unit": "bytes",
        "times": s.times,
        "bands": s.bands.iter().map(|b| json!({"key": b.key, "label": b.label, "values": b.values})).collect::<Vec<_>>(),
        "total": s.total,
    });
    let n = s.bands.len() + usize::from(!s.total.is_empty());
    let mut svg = page(PLOT_HEIGHT + legend::height(n), &title, &data);
    let t_max = s.times.iter().copied().fold(0.0f64, f64::max).max(1e-3);
    let top = lower.iter().copied().chain(s.total.iter().map(|p| p.1)).max().unwrap_or(0);
    let a = time_chart(&mut svg, t_max, &value_ticks(mib(top), false));
    let mut entries: Vec<Entry> = Vec::new();
    for (i, (b, (lo, up))) in s.bands.iter().zip(&edges).enumerate() {
        let color = BANDS[i % BANDS.len()];
        // The upper edge left to right, then the lower edge back.
        let outline = s
            .times
            .iter()
            .zip(up)
            .map(|(&t, &v)| (a.x(t), a.y(mib(v))))
            .chain(s.times.iter().zip(lo).rev().map(|(&t, &v)| (a.x(t), a.y(mib(v)))));
        svg.polygon(outline, Paint::fill(color));
        entries.push((Swatch::Fill(color), b.label.clone()));
    }
    // Drawn from the bottom band up, the legend lists them top down.
    entries.reverse();
    if !s.total.is_empty() {
        svg.polyline(
            s.total.iter().map(|&(t, v)| (a.x(t), a.y(mib(v)))),
            Paint::stroke(TOTAL, 2.0),
        );
        entries.insert(0, (Swatch::Line(TOTAL), total_label));
    }
    legend::draw(&mut svg, PLOT_HEIGHT, &entries, LEGEND_LEFT);
    svg.finish()
}
