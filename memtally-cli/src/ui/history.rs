//! The last samples of every row, bounded, for a growth rate (least
//! squares, `analyze::trend::fit`) and a sparkline, so a leak stands out.

use std::collections::{HashMap, VecDeque};

use memtally_core::analyze::trend::{fit, Trend};

/// Samples kept per row: a minute at the default 1 s refresh.
pub const KEEP: usize = 60;

/// How many of the last samples the sparkline draws.
pub const SPARK: usize = 8;

/// Samples per row key, each (seconds since start, bytes).
#[derive(Debug, Default)]
pub struct History {
    rows: HashMap<String, VecDeque<(f64, f64)>>,
}

impl History {
    /// Records one refresh: every key seen now gets its sample; keys not
    /// seen (exited processes, groups that emptied) are dropped, so the
    /// map never holds more than the rows of one refresh.
    pub fn record<'a>(&mut self, t: f64, now: impl Iterator<Item = (&'a str, u64)>) {
        let mut next: HashMap<String, VecDeque<(f64, f64)>> = HashMap::new();
        for (key, bytes) in now {
            let mut samples = self.rows.remove(key).unwrap_or_default();
            if samples.len() == KEEP {
                samples.pop_front();
            }
            samples.push_back((t, bytes as f64));
            next.insert(key.to_string(), samples);
        }
        self.rows = next;
    }

    /// The fitted line of a row, from two samples on.
    pub fn trend(&self, key: &str) -> Option<Trend> {
        let samples = self.rows.get(key)?;
        let points: Vec<(f64, f64)> = samples.iter().copied().collect();
        fit(&points)
    }

    /// The last samples as block characters, lowest to highest of them.
    pub fn sparkline(&self, key: &str) -> String {
        self.rows
            .get(key)
            .map(|s| spark(s.iter().rev().take(SPARK).rev().map(|p| p.1)))
            .unwrap_or_default()
    }
}

/// Growth per minute of a trend, in bytes.
pub fn per_minute(t: &Trend) -> f64 {
    t.slope * 60.0
}

fn spark(values: impl Iterator<Item = f64> + Clone) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let lo = values.clone().fold(f64::INFINITY, f64::min);
    let hi = values.clone().fold(f64::NEG_INFINITY, f64::max);
    values
        .map(
            |v| {
                if hi <= lo {
                    BARS[0]
                } else {
                    BARS[(((v - lo) / (hi - lo)) * 7.0).round() as usize]
                }
            },
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_steady_climb_is_a_rate_and_a_rising_line() {
        let mut h = History::default();
        for i in 0..10u64 {
            h.record(i as f64, [("1", 1_000_000 + i * 1_048_576)].into_iter());
        }
        let t = h.trend("1").unwrap();
        assert!((per_minute(&t) - 60.0 * 1_048_576.0).abs() < 1.0);
        assert!(t.grows_steadily());
        assert_eq!(h.sparkline("1"), "▁▂▃▄▅▆▇█");
    }

    #[test]
    fn bounded_and_forgets_rows_gone() {
        let mut h = History::default();
        for i in 0..(KEEP as u64 + 5) {
            h.record(i as f64, [("a", 5), ("b", 5)].into_iter());
        }
        assert_eq!(h.rows["a"].len(), KEEP);
        assert_eq!(h.sparkline("a"), "▁".repeat(SPARK));
        h.record(100.0, [("a", 5)].into_iter());
        assert!(h.trend("b").is_none());
        assert!(h.trend("a").is_some());
        assert!(History::default().trend("x").is_none());
    }
}
