//! Growth rates that mean what they say: no rate until [`MIN_SAMPLES`]
//! samples of the same process; a group's rate is the sum of the rates of
//! its members present throughout (a process joining or leaving a group
//! is not growth), and says when its membership changed.

use std::collections::{BTreeSet, HashMap};

use crate::ui::history::{per_minute, History};

/// Samples a rate needs: fewer, and a line through them is noise
/// (2-3 samples extrapolated to a minute made `-7.2G/m` of 1.7G).
pub const MIN_SAMPLES: usize = 10;

/// A row's growth.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    /// Bytes per minute.
    pub per_minute: f64,
    /// A steady climb (a leak): every counted member's line fits and rises.
    pub steady: bool,
    /// Members came or went while the samples were taken; the rate counts
    /// only those present throughout.
    pub members_changed: bool,
}

/// Every process's samples, and each group's members over time.
#[derive(Debug, Default)]
pub struct Rates {
    processes: History,
    groups: HashMap<String, Members>,
    /// Time of each refresh recorded, the last [`crate::ui::history::KEEP`].
    times: std::collections::VecDeque<f64>,
}

#[derive(Debug)]
struct Members {
    now: BTreeSet<u32>,
    /// When the membership last changed (seconds, as the samples).
    changed: Option<f64>,
}

impl Rates {
    /// Records one refresh: each process's figure, and which processes
    /// each group (of the grouping shown) holds; groups not seen are
    /// forgotten.
    pub fn record<'a>(
        &mut self,
        t: f64,
        processes: impl Iterator<Item = (u32, u64)>,
        groups: impl Iterator<Item = (&'a str, u32)>,
    ) {
        if self.times.len() == crate::ui::history::KEEP {
            self.times.pop_front();
        }
        self.times.push_back(t);
        let keyed: Vec<(String, u64)> = processes.map(|(pid, v)| (pid.to_string(), v)).collect();
        self.processes.record(t, keyed.iter().map(|(k, v)| (k.as_str(), *v)));
        let mut now: HashMap<&str, BTreeSet<u32>> = HashMap::new();
        for (g, pid) in groups {
            now.entry(g).or_default().insert(pid);
        }
        // Groups seen at the first refresh of a grouping were there from
        // the start; one seen later came with new members.
        let first = self.groups.is_empty();
        let mut next = HashMap::new();
        for (g, members) in now {
            let changed = match self.groups.remove(g) {
                Some(old) if old.now == members => old.changed,
                Some(_) => Some(t),
                None if first => None,
                None => Some(t),
            };
            next.insert(g.to_string(), Members { now: members, changed });
        }
        self.groups = next;
    }

    /// Forgets the groups (another grouping is shown); the processes'
    /// samples stay.
    pub fn regroup(&mut self) {
        self.groups.clear();
    }

    /// The rate of one process, from [`MIN_SAMPLES`] samples on.
    pub fn process(&self, pid: u32) -> Option<Rate> {
        let t = self.processes.trend(&pid.to_string())?;
        (t.samples >= MIN_SAMPLES).then(|| Rate {
            per_minute: per_minute(&t),
            steady: t.grows_steadily(),
            members_changed: false,
        })
    }

    /// The rate of a group: its members present for [`MIN_SAMPLES`]
    /// samples and more, added up; none when no member has been.
    pub fn group(&self, key: &str) -> Option<Rate> {
        let g = self.groups.get(key)?;
        let oldest = self.times.front().copied()?;
        let mut sum = 0.0;
        let mut counted = 0;
        let mut steady = true;
        for pid in &g.now {
            if let Some(r) = self.process(*pid) {
                sum += r.per_minute;
                steady &= r.steady;
                counted += 1;
            }
        }
        (counted > 0).then_some(Rate {
            per_minute: sum,
            steady: steady && sum > 0.0,
            members_changed: g.changed.is_some_and(|c| c > oldest) || counted < g.now.len(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_rate_before_ten_samples() {
        let mut r = Rates::default();
        for i in 0..MIN_SAMPLES as u64 {
            assert!(r.process(7).is_none(), "after {i} samples");
            r.record(i as f64, [(7, 1_000 + i * 60_000)].into_iter(), std::iter::empty());
        }
        let rate = r.process(7).unwrap();
        assert!((rate.per_minute - 3_600_000.0).abs() < 1.0, "{rate:?}");
    }

    #[test]
    fn a_group_counts_members_present_throughout() {
        let mut r = Rates::default();
        // Process 1 grows 1 KiB a second; process 2 joins at 10 s with a
        // gigabyte, which is no growth of the group.
        for i in 0..20u64 {
            let mut procs = vec![(1, 1_000_000 + i * 1024)];
            let mut members = vec![("g", 1)];
            if i >= 10 {
                procs.push((2, 1 << 30));
                members.push(("g", 2));
            }
            r.record(i as f64, procs.into_iter(), members.into_iter());
        }
        let rate = r.group("g").unwrap();
        assert!((rate.per_minute - 60.0 * 1024.0).abs() < 1.0, "{rate:?}");
        assert!(rate.members_changed);
        // A group whose members stayed says nothing changed.
        let mut r = Rates::default();
        for i in 0..12u64 {
            r.record(i as f64, [(1, 5)].into_iter(), [("g", 1)].into_iter());
        }
        assert!(!r.group("g").unwrap().members_changed);
    }
}
