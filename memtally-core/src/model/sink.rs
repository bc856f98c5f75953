//! Where a reader hands the regions it reads, one at a time: a fold that
//! sums them, a printer that writes them out, a list that keeps them. The
//! sink answers each one with [`Flow`], so a printer whose output has gone
//! (`memtally show PID | head`) stops the read at once instead of letting
//! the rest of a large smaps be parsed for nothing.

use super::process::Process;
use super::region::Region;

/// What a sink asks of the reader after a step: go on, or stop reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Hand over the next region.
    Continue,
    /// Read no further: the sink has what it wants, or cannot take more
    /// (the reader then returns what it read so far, unchecked).
    Stop,
}

impl Flow {
    /// Whether the reader should stop.
    pub(crate) fn is_stop(self) -> bool {
        self == Flow::Stop
    }
}

/// Takes regions as a reader reads them.
///
/// A reader of one process calls [`begin`](Self::begin) once the file it
/// reads the regions from is open (so the process's `source` is known),
/// then [`region`](Self::region) for each region in input order, until the
/// input ends or the sink answers [`Flow::Stop`]. What a sink does at the
/// end (print totals, build a report) needs what only its caller has, so
/// it is the sink's own method, not the reader's call.
pub trait RegionSink {
    /// The process whose regions follow (identity and source).
    fn begin(&mut self, _process: &Process) -> Flow {
        Flow::Continue
    }

    /// One region, read from input line `line` (its first line: an smaps
    /// header, a vmmap region line), lent for the call: the reader reads
    /// the next into the same memory, so a sink that keeps it clones it.
    fn region(&mut self, line: usize, region: &Region) -> Flow;

    /// Drops what the sink took of a read that did not stand (the process
    /// exec'd while it was read), before the reader reads it once more
    /// (a read plan's `retry`). `false`: it cannot (what it took is
    /// printed), and the read's error stands.
    fn restart(&mut self) -> bool {
        false
    }
}

/// Keeps every region.
impl RegionSink for Vec<Region> {
    fn region(&mut self, _line: usize, region: &Region) -> Flow {
        self.push(region.clone());
        Flow::Continue
    }

    fn restart(&mut self) -> bool {
        self.clear();
        true
    }
}

/// Takes every region and keeps none: for a caller that wants only what
/// the reader returns (a report's sums).
impl RegionSink for () {
    fn region(&mut self, _line: usize, _region: &Region) -> Flow {
        Flow::Continue
    }

    fn restart(&mut self) -> bool {
        true
    }
}

/// A sink borrowed is a sink.
impl<S: RegionSink + ?Sized> RegionSink for &mut S {
    fn begin(&mut self, process: &Process) -> Flow {
        (**self).begin(process)
    }

    fn region(&mut self, line: usize, region: &Region) -> Flow {
        (**self).region(line, region)
    }

    fn restart(&mut self) -> bool {
        (**self).restart()
    }
}
