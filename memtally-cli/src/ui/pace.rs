//! How often the explorer reads the process list: every refresh, unless
//! the explorer would take more than `--max-cpu` of one core (all of it:
//! the reads, and the drawing and keys meanwhile). Nearly all of a
//! list read is the kernel's walk of every resident page behind each
//! process's smaps_rollup (PSS), so its cost follows the machine's
//! resident memory, not the explorer: 4.5 GB of compilers cost ~190 ms of
//! CPU a read (docs/benchmarks.md). Then the list is read less often, at
//! the share asked, and the title says how often; keys that ask for
//! another list (sort, grouping) are answered at once all the same.

use std::time::{Duration, Instant};

/// CPU time of this whole process (every thread: the list's reads run on
/// several), on CLOCK_PROCESS_CPUTIME_ID.
pub fn process_cpu() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

#[derive(Debug)]
pub struct Pace {
    /// The share of one core the list's reads may take (0.05: 5%); 0: no
    /// limit.
    share: f64,
    /// When the next list read is due.
    next: Option<Instant>,
    /// How often the list is read, when less often than every refresh.
    pub every: Option<Duration>,
    /// The process's CPU time at the last list read's end.
    cpu_mark: Option<Duration>,
}

impl Pace {
    /// `max_cpu`: percent of one core, 0 for no limit.
    pub fn new(max_cpu: f64) -> Pace {
        Pace { share: max_cpu / 100.0, next: None, every: None, cpu_mark: None }
    }

    /// Whether a refresh reads the list now.
    pub fn due(&self, now: Instant) -> bool {
        self.next.is_none_or(|n| now >= n)
    }

    /// A list read began at `started` and has ended with the process at
    /// `cpu` of CPU time: what it took since the last read's end (this
    /// read, the screens drawn meanwhile) is spread so that it is the
    /// share asked of the time to the next read's start.
    pub fn record(&mut self, started: Instant, cpu: Duration, interval: Duration) {
        let cost = cpu.saturating_sub(self.cpu_mark.unwrap_or_default());
        self.cpu_mark = Some(cpu);
        if self.share <= 0.0 {
            return;
        }
        let spread = cost.div_f64(self.share);
        self.next = Some(started + spread);
        // Said from a tenth over the interval on: a refresh's own jitter is not it.
        self.every = (spread > interval + interval / 10).then_some(spread);
    }

    /// The share asked, in percent of one core.
    pub fn percent(&self) -> f64 {
        self.share * 100.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_dearer_than_the_share_spreads_the_next() {
        let mut p = Pace::new(5.0);
        let t = Instant::now();
        assert!(p.due(t));
        // 190 ms at 5%: 3.8 s between reads.
        p.record(t, Duration::from_millis(190), Duration::from_secs(1));
        assert_eq!(p.every, Some(Duration::from_millis(3800)));
        assert!(!p.due(t + Duration::from_secs(1)));
        assert!(p.due(t + Duration::from_millis(3800)));
        // A cheap read (20 ms more): every refresh again, and the title
        // says nothing.
        p.record(t, Duration::from_millis(210), Duration::from_secs(1));
        assert_eq!(p.every, None);
        assert!(p.due(t + Duration::from_millis(400)));
        let mut off = Pace::new(0.0);
        off.record(t, Duration::from_secs(5), Duration::from_secs(1));
        assert!(off.due(t) && off.every.is_none());
    }
}
