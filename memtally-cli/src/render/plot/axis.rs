//! The value and label axes of memtally's charts: ticks at round steps
//! ending at a ceiling just above the data, and one slot per bar.

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

/// A value axis whose ticks are exactly the given ones (the last one its
/// end), printed by [`tick_text`].
pub(super) struct Axis {
    inner: plotters::coord::types::RangedCoordf64,
    ticks: Vec<f64>,
}

impl Axis {
    pub(super) fn new(ticks: Vec<f64>) -> Axis {
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
pub(super) struct Labels {
    pub(super) n: usize,
    pub(super) centers: Vec<f64>,
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
pub(super) fn tick_text(v: f64) -> String {
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
        assert_eq!(tick_text(0.25), "0.25");
    }
}
