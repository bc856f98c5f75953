//! The page's two pictures as inline SVG: the machine waterfall (one
//! stacked bar whose parts add up to MemTotal) and the treemap. Colours
//! are presentation attributes, not `style`, so the page's content
//! security policy needs no inline-style allowance.

use std::fmt::Write as _;

use memtally_core::analyze::machine::{LineGroup, Machine};

use super::esc;
use super::tree::{Kind, Node};
use super::treemap::{squarify, Rect};
use crate::render::units::{human, signed};

/// Width and height of the treemap's drawing, in SVG units.
pub const TREEMAP_W: f64 = 1200.0;
pub const TREEMAP_H: f64 = 640.0;

/// The fill of a waterfall group.
pub fn group_colour(group: LineGroup) -> &'static str {
    match group {
        LineGroup::Free => "#8fd19e",
        LineGroup::Processes => "#4e79a7",
        LineGroup::Cache => "#f1ce63",
        LineGroup::Swap => "#9c755f",
        LineGroup::Kernel => "#b07aa1",
        LineGroup::Hugetlb => "#f28e2b",
        LineGroup::Drivers => "#76b7b2",
        LineGroup::Unexplained => "#e15759",
    }
}

/// The waterfall bar's width, in SVG units.
const BAR_W: f64 = 1200.0;

/// The narrowest a part with bytes is drawn, in SVG units (about two
/// pixels at the page's width): a 2 MiB zswap pool on a 24 GiB machine
/// would otherwise be a tenth of a unit, there but not to be seen.
const MIN_PART_W: f64 = 2.0;

/// Each line's width on the bar: its bytes to scale, a line with bytes
/// at least [`MIN_PART_W`], the whole scaled back to the bar's width;
/// a negative line (only `unexplained`) has none of its own (it is drawn
/// as the overflow, see [`waterfall`]). Returns the widths and the units
/// per byte the other parts were drawn at.
fn part_widths(m: &Machine) -> (Vec<f64>, f64) {
    let drawn: i64 = m.lines.iter().map(|l| l.bytes.max(0)).sum();
    let scale = BAR_W / (drawn.max(m.total as i64).max(1) as f64);
    let raw: Vec<f64> = m
        .lines
        .iter()
        .map(|l| match l.bytes {
            b if b > 0 => (b as f64 * scale).max(MIN_PART_W),
            _ => 0.0,
        })
        .collect();
    // What the narrow parts were widened by comes off the wide ones, so
    // the narrow keep their width and the bar its length.
    let narrow: f64 = raw.iter().filter(|&&w| w == MIN_PART_W).sum();
    let wide: f64 = raw.iter().filter(|&&w| w > MIN_PART_W).sum();
    let fit = match narrow + wide > BAR_W && wide > 0.0 {
        true => ((BAR_W - narrow) / wide).clamp(0.0, 1.0),
        false => 1.0,
    };
    (raw.into_iter().map(|w| if w > MIN_PART_W { w * fit } else { w }).collect(), scale * fit)
}

/// The waterfall as one bar: each line a part as wide as its bytes (at
/// least [`MIN_PART_W`] where it has any, so the swap group's zram and
/// zswap show however small), in waterfall order. The parts' `data-bytes`
/// add up to the bar's `data-total`, MemTotal.
///
/// A negative `unexplained` (the lines before it add up to more than
/// MemTotal: figures read at different moments, pages counted twice) is
/// no part of its own width: it is a hatched box over the bar's end, as
/// wide as the overflow, left of it a mark at MemTotal, so the excess is
/// seen instead of hidden as a zero.
pub fn waterfall(m: &Machine) -> String {
    let w = BAR_W;
    let (widths, scale) = part_widths(m);
    let mut s = String::new();
    let _ = write!(
        s,
        r##"<svg id="waterfall" class="bar" viewBox="0 0 {w} 52" width="100%" role="img" aria-label="MemTotal {} split into its lines" data-total="{}" xmlns="http://www.w3.org/2000/svg"><defs><pattern id="over" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#fbe3e4"/><line x1="0" y1="0" x2="0" y2="6" stroke="#e15759" stroke-width="3"/></pattern></defs>"##,
        human(m.total),
        m.total
    );
    let end: f64 = widths.iter().sum();
    let mut x = 0.0;
    for (l, &width) in m.lines.iter().zip(&widths) {
        let title = format!("{}: {} ({})", l.name, signed(l.bytes), esc(&l.source));
        if l.bytes < 0 {
            let over =
                (l.bytes.unsigned_abs() as f64 * scale).clamp(MIN_PART_W, end.max(MIN_PART_W));
            let at = (end - over).max(0.0);
            let _ = write!(
                s,
                r##"<rect class="part over" data-line="{}" data-group="{}" data-bytes="{}" x="{at:.2}" y="0" width="{over:.2}" height="44" fill="url(#over)" stroke="#e15759" stroke-width="1"><title>{title}: the lines add up to {} more than MemTotal</title></rect><line class="memtotal" x1="{at:.2}" y1="0" x2="{at:.2}" y2="52" stroke="#000" stroke-width="1.5"><title>MemTotal {}</title></line>"##,
                l.name,
                l.group,
                l.bytes,
                human(l.bytes.unsigned_abs()),
                human(m.total)
            );
            continue;
        }
        let _ = write!(
            s,
            r##"<rect class="part" data-line="{}" data-group="{}" data-bytes="{}" x="{x:.2}" y="0" width="{width:.2}" height="44" fill="{}" stroke="#fff" stroke-width="0.5"><title>{title}</title></rect>"##,
            l.name,
            l.group,
            l.bytes,
            group_colour(l.group),
        );
        x += width;
    }
    s.push_str("</svg>");
    s
}

/// Growth red, shrinking green, by the change's share of the size
/// (a quarter or more: full colour); unchanged grey.
fn growth_colour(delta: i128, value: u64) -> String {
    if delta == 0 {
        return "#b0b8c0".into();
    }
    let share = (delta.unsigned_abs() as f64 / value.max(1) as f64 * 4.0).clamp(0.15, 1.0);
    let (r, g, b) = if delta > 0 { (214.0, 39.0, 40.0) } else { (44.0, 160.0, 44.0) };
    let mix = |a: f64, b: f64| (a + (b - a) * share).round() as u8;
    format!("#{:02x}{:02x}{:02x}", mix(176.0, r), mix(184.0, g), mix(192.0, b))
}

/// A colour from clean (blue) to dirty (red) by the dirty share; grey when
/// the share is unknown.
pub fn dirty_colour(n: &Node) -> String {
    if let Some(d) = n.delta {
        return growth_colour(d, n.value);
    }
    match (n.kind, n.dirty) {
        (Kind::Smaller, _) => "#c9c9c9".into(),
        (Kind::Unread, _) => "url(#unread)".into(),
        (_, Some(d)) if n.value > 0 => {
            let share = (d as f64 / n.value as f64).clamp(0.0, 1.0);
            // From clean (#8ab8e6) to dirty (#d62728), straight in RGB.
            let mix = |a: f64, b: f64| (a + (b - a) * share).round() as u8;
            format!("#{:02x}{:02x}{:02x}", mix(138.0, 214.0), mix(184.0, 39.0), mix(230.0, 40.0))
        }
        _ => "#b0b8c0".into(),
    }
}

/// The treemap: every node a `<rect id="nI">` (I its number in
/// depth-first order, the machine 0) in one group the script zooms, with
/// its parent and figures as data attributes and a `<title>` tooltip; a
/// label layer for the nodes large enough at full size.
pub fn treemap(root: &Node, dirty_name: &str, area_name: &str) -> String {
    let mut drawn = 0usize;
    let mut rects = String::new();
    let mut labels = String::new();
    let area = Rect { x: 0.0, y: 0.0, w: TREEMAP_W, h: TREEMAP_H };
    let names = (dirty_name, area_name);
    draw(root, area, None, 0, &mut drawn, &mut rects, &mut labels, names);
    format!(
        r##"<svg id="treemap" viewBox="0 0 {TREEMAP_W} {TREEMAP_H}" width="100%" role="img" aria-label="treemap of {area_name}" xmlns="http://www.w3.org/2000/svg"><defs><pattern id="unread" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="8" height="8" fill="#e0e0e0"/><line x1="0" y1="0" x2="0" y2="8" stroke="#888" stroke-width="3"/></pattern></defs><g id="tm-all">{rects}</g><g id="tm-labels">{labels}</g></svg>"##
    )
}

#[allow(clippy::too_many_arguments)]
fn draw(
    n: &Node,
    r: Rect,
    parent: Option<usize>,
    depth: usize,
    drawn: &mut usize,
    rects: &mut String,
    labels: &mut String,
    names: (&str, &str),
) {
    let id = *drawn;
    *drawn += 1;
    let share = match n.dirty {
        Some(d) if n.value > 0 => {
            format!(", {} {} ({:.0}%)", names.0, human(d), 100.0 * d as f64 / n.value as f64)
        }
        Some(d) => format!(", {} {}", names.0, human(d)),
        None => String::new(),
    };
    let share = match n.delta {
        Some(d) => format!("{share}, change {}", crate::render::units::human_signed(d)),
        None => share,
    };
    let what = match n.kind {
        Kind::Unread => "RSS (status; not readable in detail, no PSS)".to_string(),
        Kind::Gpu => "GPU memory (memtally gpu's share)".to_string(),
        _ => names.1.to_string(),
    };
    let mut pid = n.pid.map(|p| format!(r#" data-pid="{p}""#)).unwrap_or_default();
    // The faults section's entry of the stacks that filled the box (an
    // id the page made: no escaping needed, escaped all the same).
    if let Some(link) = &n.link {
        let _ = write!(pid, r#" data-faults="{}""#, esc(link));
    }
    let _ = write!(
        rects,
        r##"<rect id="n{id}" class="k-{}" data-parent="{}" data-depth="{depth}" data-v="{}"{pid} data-label="{}" x="{:.2}" y="{:.2}" width="{:.2}" height="{:.2}" fill="{}" stroke="#fff" stroke-width="{}" vector-effect="non-scaling-stroke"><title>{} — {}: {}{}</title></rect>"##,
        n.kind.name(),
        parent.map_or_else(String::new, |p| format!("n{p}")),
        n.value,
        esc(&n.label),
        r.x,
        r.y,
        r.w,
        r.h,
        dirty_colour(n),
        match depth {
            0 | 1 => 2.5,
            2 => 1.2,
            _ => 0.4,
        },
        esc(&n.label),
        what,
        human(n.value),
        share,
    );
    // A node with children keeps a strip at the top for its label.
    let header = !n.children.is_empty() && depth > 0 && r.h > 40.0 && r.w > 60.0;
    if (header || n.children.is_empty()) && depth > 0 && depth <= 3 && r.w > 46.0 && r.h > 13.0 {
        let chars = ((r.w - 6.0) / 6.5).max(1.0) as usize;
        let _ = write!(
            labels,
            r#"<text x="{:.1}" y="{:.1}" class="d{depth}">{}</text>"#,
            r.x + 3.0,
            r.y + 11.0,
            esc(&cut(&format!("{} {}", n.label, human(n.value)), chars))
        );
    }
    if n.children.is_empty() {
        return;
    }
    let inner = if header {
        Rect { x: r.x + 1.0, y: r.y + 14.0, w: r.w - 2.0, h: r.h - 15.0 }
    } else if depth == 0 {
        r
    } else {
        r.inset(1.0)
    };
    // The children take their share of the node's area; what they leave
    // (a total larger than its parts, as the rollup's exact PSS is beside
    // the mappings' rounded-down ones) stays the parent's own colour.
    let mut values: Vec<f64> = n.children.iter().map(|c| c.value as f64).collect();
    let parts: u64 = n.children.iter().map(|c| c.value).fold(0, u64::saturating_add);
    values.push(n.value.saturating_sub(parts) as f64);
    let boxes = squarify(&values, inner);
    for (c, b) in n.children.iter().zip(boxes) {
        draw(c, b, Some(id), depth + 1, drawn, rects, labels, names);
    }
}

/// `s` cut to `n` characters, an ellipsis marking the cut.
pub fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
    t.push('…');
    t
}
