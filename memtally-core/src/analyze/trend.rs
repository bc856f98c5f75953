//! Growth rates: a least-squares line through (seconds, bytes) samples,
//! and a verdict on whether memory grows steadily (a leak's signature)
//! rather than wobbling; and the samples `watch` takes, as series.

use std::collections::BTreeMap;

use crate::model::{Figure, Sizes};

pub use crate::model::series::Scope;

/// A series: (scope, key), as `(Process, "1234")`, `(Category, "heap")`
/// or `(Total, "total")`.
pub type SeriesKey = (Scope, String);

/// One sample: series -> (label, sizes).
pub type Sample = BTreeMap<SeriesKey, (String, Sizes)>;

/// Fitted trends: series -> (label, trend).
pub(crate) type Trends = BTreeMap<SeriesKey, (String, Trend)>;

/// Fits every series of the samples (taken at the given seconds) for one
/// figure; series with fewer than two known values are left out.
pub fn trends(series: &[(f64, Sample)], figure: Figure) -> Trends {
    let mut points: BTreeMap<SeriesKey, (String, Vec<(f64, f64)>)> = BTreeMap::new();
    for (t, sample) in series {
        for (key, (label, sizes)) in sample {
            if let Some(v) = sizes.figure(figure) {
                let e = points.entry(key.clone()).or_insert_with(|| (label.clone(), Vec::new()));
                e.1.push((*t, v as f64));
            }
        }
    }
    points.into_iter().filter_map(|(k, (label, pts))| fit(&pts).map(|t| (k, (label, t)))).collect()
}

/// A fitted line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Trend {
    /// Bytes per second.
    pub slope: f64,
    /// How well the line explains the samples, 0 to 1; `None` when the
    /// samples do not move at all (a constant series has no variance for a
    /// line to explain, so r² is undefined: neither 0 nor 1).
    pub r2: Option<f64>,
    /// How many samples the line was fitted to.
    pub samples: usize,
    /// Seconds from the first sample to the last.
    pub span: f64,
    /// Last value minus first.
    pub change: f64,
}

/// Fits `y = a + slope·t`. `None` with fewer than two samples or no time span.
pub fn fit(points: &[(f64, f64)]) -> Option<Trend> {
    let n = points.len();
    if n < 2 {
        return None;
    }
    let nf = n as f64;
    let mt = points.iter().map(|p| p.0).sum::<f64>() / nf;
    let my = points.iter().map(|p| p.1).sum::<f64>() / nf;
    let (mut stt, mut sty, mut syy) = (0.0, 0.0, 0.0);
    for &(t, y) in points {
        stt += (t - mt) * (t - mt);
        sty += (t - mt) * (y - my);
        syy += (y - my) * (y - my);
    }
    if stt <= 0.0 {
        return None;
    }
    let slope = sty / stt;
    let r2 = (syy > 0.0).then(|| (sty * sty) / (stt * syy));
    let span = points[n - 1].0 - points[0].0;
    Some(Trend { slope, r2, samples: n, span, change: points[n - 1].1 - points[0].1 })
}

impl Trend {
    /// Steady growth: the line explains the samples (r² ≥ 0.9), at least
    /// three samples, and it grew by at least a page per sample and 64 KiB
    /// in all, so page-cache noise does not count. A constant series
    /// (r² undefined) does not grow.
    pub fn grows_steadily(&self) -> bool {
        self.samples >= 3
            && self.slope > 0.0
            && self.r2.is_some_and(|r2| r2 >= 0.9)
            && self.change >= (64 * 1024) as f64
            && self.change >= 4096.0 * (self.samples - 1) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_straight_line_is_found_exactly() {
        let pts: Vec<(f64, f64)> =
            (0..10).map(|i| (i as f64 * 0.5, 1000.0 + 2048.0 * i as f64 * 0.5)).collect();
        let t = fit(&pts).unwrap();
        assert!((t.slope - 2048.0).abs() < 1e-9);
        assert!((t.r2.unwrap() - 1.0).abs() < 1e-12);
        assert_eq!(t.samples, 10);
        assert!((t.span - 4.5).abs() < 1e-12);
    }

    #[test]
    fn steady_growth_is_told_from_noise_and_flat_lines() {
        let grow: Vec<(f64, f64)> = (0..5).map(|i| (i as f64, (i as f64) * 1e6)).collect();
        assert!(fit(&grow).unwrap().grows_steadily());
        let flat: Vec<(f64, f64)> = (0..5).map(|i| (i as f64, 5e6)).collect();
        assert!(!fit(&flat).unwrap().grows_steadily());
        assert_eq!(fit(&flat).unwrap().r2, None, "r² of a constant series is undefined");
        assert_eq!(fit(&flat).unwrap().slope, 0.0);
        let noise: Vec<(f64, f64)> =
            [0.0, 9e6, 1e6, 8e6, 2e6].iter().enumerate().map(|(i, y)| (i as f64, *y)).collect();
        assert!(!fit(&noise).unwrap().grows_steadily());
        assert!(fit(&[(0.0, 1.0)]).is_none());
        assert!(fit(&[(1.0, 1.0), (1.0, 2.0)]).is_none());
    }
}
