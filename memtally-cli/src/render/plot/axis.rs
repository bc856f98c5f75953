//! The value and label axes of memtally's charts: ticks at round steps
//! ending at a ceiling just above the data, and one slot per bar.

use super::{GRID, GRID_LIGHT, INK};
use crate::render::svg::{Anchor, Paint, Svg, Text};

/// Room above the largest value: the axis ends at least 5% past it, so
/// the largest bar or the top of a line never touches the frame.
pub const HEADROOM: f64 = 1.05;

/// The ticks of a value axis for data up to `max`, with [`HEADROOM`].
pub fn value_ticks(max: f64, whole: bool) -> Vec<f64> {
    nice_ticks(max * HEADROOM, whole)
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

/// The plotting area in pixels, and the values its edges stand for: x
/// from 0 at `left` to `x_end` at `right`, y from 0 at `bottom` to
/// `y_end` at `top`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Area {
    pub(super) left: f64,
    pub(super) right: f64,
    pub(super) top: f64,
    pub(super) bottom: f64,
    pub(super) x_end: f64,
    pub(super) y_end: f64,
}

impl Area {
    pub(super) fn x(&self, v: f64) -> f64 {
        self.left + v / self.x_end.max(f64::MIN_POSITIVE) * (self.right - self.left)
    }

    pub(super) fn y(&self, v: f64) -> f64 {
        self.bottom - v / self.y_end.max(f64::MIN_POSITIVE) * (self.bottom - self.top)
    }
}

/// Light grid lines between two ticks: the step cut in this many.
const FINE: usize = 5;

/// Where the light grid lines go: every fifth of a step from 0 to `end`,
/// but on the ticks (which get bold ones).
fn fine(ticks: &[f64], end: f64) -> Vec<f64> {
    let step = match ticks {
        [a, b, ..] => (b - a) / FINE as f64,
        _ => return Vec::new(),
    };
    (1..)
        .map(|k| k as f64 * step)
        .take_while(|v| *v <= end * (1.0 + 1e-9))
        .enumerate()
        .filter(|(k, _)| (k + 1) % FINE != 0)
        .map(|(_, v)| v)
        .collect()
}

/// Length of a tick mark outside the area, pixels.
const TICK: f64 = 5.0;
/// Size of ticks' and axes' text, pixels.
pub(super) const LABEL_SIZE: f64 = 12.0;
const LABEL: Text = Text { size: LABEL_SIZE, anchor: Anchor::End };

/// The x axis: light grid lines between the ticks, a grid line, a mark and the value under each tick, the
/// axis line, its name under the values.
pub(super) fn x_axis(svg: &mut Svg, a: &Area, ticks: &[f64], name: &str) {
    for t in fine(ticks, a.x_end) {
        let x = a.x(t);
        svg.line((x, a.bottom), (x, a.top), Paint::stroke(GRID_LIGHT, 1.0));
    }
    for &t in ticks {
        let x = a.x(t);
        svg.line((x, a.bottom), (x, a.top), Paint::stroke(GRID, 1.0));
    }
    svg.polyline([(a.left, a.bottom), (a.right, a.bottom)], Paint::stroke(INK, 1.0));
    for &t in ticks {
        let x = a.x(t);
        svg.polyline([(x, a.bottom), (x, a.bottom + TICK)], Paint::stroke(INK, 1.0));
        svg.text(x, a.bottom + TICK + 4.0, &tick_text(t), Text { anchor: Anchor::Below, ..LABEL });
    }
    let middle = (a.left + a.right) / 2.0;
    svg.text(middle, a.bottom + 36.0, name, Text { anchor: Anchor::Middle, ..LABEL });
}

/// The y axis of values: light grid lines between the ticks, a grid line, a mark and the value left of each
/// tick, the axis line, its name turned up at the far left.
pub(super) fn y_axis(svg: &mut Svg, a: &Area, ticks: &[f64], name: &str, name_x: f64) {
    for t in fine(ticks, a.y_end) {
        let y = a.y(t);
        svg.line((a.left, y), (a.right, y), Paint::stroke(GRID_LIGHT, 1.0));
    }
    for &t in ticks {
        let y = a.y(t);
        svg.line((a.left, y), (a.right, y), Paint::stroke(GRID, 1.0));
    }
    svg.polyline([(a.left, a.top), (a.left, a.bottom)], Paint::stroke(INK, 1.0));
    for &t in ticks {
        let y = a.y(t);
        svg.polyline([(a.left - TICK, y), (a.left, y)], Paint::stroke(INK, 1.0));
        svg.text(a.left - TICK - 4.0, y, &tick_text(t), LABEL);
    }
    let middle = (a.top + a.bottom) / 2.0;
    svg.text(name_x, middle, name, Text { anchor: Anchor::Up, ..LABEL });
}

/// The y axis of bars: each label left of its slot's middle, with a
/// mark, and the axis line; `labels` top down, one slot each.
pub(super) fn y_labels(svg: &mut Svg, a: &Area, labels: &[String]) {
    svg.polyline([(a.left, a.top), (a.left, a.bottom)], Paint::stroke(INK, 1.0));
    let slot = (a.bottom - a.top) / labels.len().max(1) as f64;
    for (i, label) in labels.iter().enumerate() {
        let y = a.top + slot * (i as f64 + 0.5);
        svg.polyline([(a.left - TICK, y), (a.left, y)], Paint::stroke(INK, 1.0));
        svg.text(a.left - TICK - 4.0, y, label, LABEL);
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
        assert_eq!(fine(&[0.0, 10.0, 20.0], 20.0), [2.0, 4.0, 6.0, 8.0, 12.0, 14.0, 16.0, 18.0]);
        assert_eq!(fine(&[0.0, 10.0], 13.0), [2.0, 4.0, 6.0, 8.0, 12.0]);
        assert_eq!(tick_text(0.25), "0.25");
    }
}
