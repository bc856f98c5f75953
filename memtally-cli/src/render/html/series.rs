//! The page of a watch series: small multiples (the total, then the
//! processes that grew most), each a line over time with the trend
//! `watch` fits and its verdict. A series is no snapshot: this page
//! embeds none (`diff` says so when handed it).

use std::fmt::Write as _;

use memtally_core::analyze::plot::SeriesLine;
use memtally_core::analyze::report::SeriesReport;
use memtally_core::analyze::trend::Trend;
use memtally_core::model::Named;

use super::{esc, page, PageInfo};
use crate::render::svg::{Paint, Svg};
use crate::render::units::{human, human_signed};

const W: f64 = 380.0;
const H: f64 = 110.0;

/// One line's verdict, in `watch`'s terms.
fn verdict(t: Option<&Trend>) -> String {
    match t {
        Some(t) if t.grows_steadily() => format!(
            "grows steadily: {}/s (r² {:.2}), {} over {:.0} s",
            human(t.slope.max(0.0) as u64),
            t.r2.unwrap_or(0.0),
            human_signed(t.change as i128),
            t.span
        ),
        Some(t) => {
            format!("no steady growth: {} over {:.0} s", human_signed(t.change as i128), t.span)
        }
        None => "too few samples for a trend".into(),
    }
}

/// One small multiple: the line as an SVG polyline scaled to its own
/// range, the first and last values, the verdict.
fn multiple(line: &SeriesLine, trend: Option<&Trend>, scope: &str) -> String {
    let (t0, t1) =
        (line.points.first().map_or(0.0, |p| p.0), line.points.last().map_or(0.0, |p| p.0));
    let lo = line.points.iter().map(|p| p.1).min().unwrap_or(0);
    let hi = line.points.iter().map(|p| p.1).max().unwrap_or(0);
    let x = |t: f64| if t1 > t0 { (t - t0) / (t1 - t0) * (W - 8.0) + 4.0 } else { 4.0 };
    let y = |v: u64| {
        if hi > lo {
            H - 4.0 - (v - lo) as f64 / (hi - lo) as f64 * (H - 8.0)
        } else {
            H / 2.0
        }
    };
    let steady = trend.is_some_and(Trend::grows_steadily);
    let mut svg = Svg::bare(W, H);
    svg.rect(0.0, 0.0, W, H, Paint::fill("#f7f7f7"));
    let colour = if steady { "#d62728" } else { "#4e79a7" };
    svg.polyline(line.points.iter().map(|&(t, v)| (x(t), y(v))), Paint::stroke(colour, 2.0));
    let first = line.points.first().map_or(0, |p| p.1);
    let last = line.points.last().map_or(0, |p| p.1);
    format!(
        r##"<figure class="multiple" data-key="{}" data-steady="{steady}"><figcaption><b>{}</b> <code>{}</code><br>{} → {}: {}</figcaption>{}</figure>"##,
        esc(&line.key),
        esc(scope),
        esc(&line.label),
        human(first),
        human(last),
        esc(&verdict(trend)),
        svg.finish(),
    )
}

/// The whole page of a series.
pub fn render(s: &SeriesReport, info: &PageInfo) -> String {
    let p = &s.plot;
    let n = p.totals.len();
    let mut b = format!(
        r#"<header><h1>memtally report: a watch series</h1><p class="meta">input: {} · figure {} · {} processes that grew most</p></header>"#,
        esc(&info.input),
        p.figure.name(),
        p.processes.len()
    );
    b.push_str(if info.redacted {
        r#"<p class="meta redacted" id="privacy" data-redacted="yes">Redacted: command-line arguments and paths under home directories are placeholders.</p>"#
    } else {
        r#"<p class="meta" id="privacy" data-redacted="no">Not redacted: this page holds command lines.</p>"#
    });
    let grower = p
        .processes
        .iter()
        .zip(&s.trends[n..])
        .find(|(_, t)| t.as_ref().is_some_and(Trend::grows_steadily));
    let overall = match (grower, s.trends.first().and_then(Option::as_ref)) {
        (Some((l, _)), _) => format!("memory grows steadily in pid {} ({})", l.key, l.label),
        (None, Some(t)) if t.grows_steadily() => {
            "the total grows steadily, spread over processes".into()
        }
        _ => "no steady growth".into(),
    };
    let _ = write!(
        b,
        r#"<section id="verdict"><h2>Verdict</h2><p id="verdict-text">{}</p></section><section id="multiples"><h2>Over time</h2><div class="multiples">"#,
        esc(&overall)
    );
    for (line, t) in p.totals.iter().zip(&s.trends) {
        b.push_str(&multiple(line, t.as_ref(), "total"));
    }
    for (line, t) in p.processes.iter().zip(&s.trends[n..]) {
        b.push_str(&multiple(line, t.as_ref(), &format!("pid {}", line.key)));
    }
    b.push_str("</div><p>Each line is scaled to its own range; the trend is fitted to the points drawn (at most 4096 per line, as memtally plot draws them). memtally watch prints the verdict of every sample.</p></section>");
    b.push_str(r#"<section id="data"><h2>Data</h2><p>A series is no snapshot: this page embeds none. memtally plot draws the series as SVG.</p></section>"#);
    page::page("memtally report: a watch series", &b, None, None)
}
