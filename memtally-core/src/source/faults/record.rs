//! The records of a perf ring buffer that `memtally faults` asks for,
//! parsed from their bytes: pure, so the layouts are tested without a
//! kernel.

/// `PERF_RECORD_LOST`: the kernel dropped records, the buffer was full.
const RECORD_LOST: u32 = 2;
/// `PERF_RECORD_SAMPLE`.
const RECORD_SAMPLE: u32 = 9;
/// `PERF_RECORD_LOST_SAMPLES`.
const RECORD_LOST_SAMPLES: u32 = 13;
/// Call-chain entries at or above this are context markers
/// (`PERF_CONTEXT_USER` and the like), not addresses.
const CONTEXT_MAX: u64 = (-4095i64) as u64;

/// One sample of the layout [`SAMPLE_TYPE`] asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sample {
    /// The process (thread group) the fault was taken in.
    pub pid: u32,
    /// The thread.
    pub tid: u32,
    /// The faulting address.
    pub addr: u64,
    /// How many faults this sample stands for.
    pub period: u64,
    /// The user call chain, the faulting instruction first.
    pub stack: Vec<u64>,
}

/// A record that matters here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Record {
    Sample(Sample),
    /// So many samples (or records) were lost.
    Lost(u64),
    /// A record of another type, skipped.
    Other,
}

/// The `PERF_SAMPLE_*` bits the parser reads, in their order in a sample:
/// IP, TID, TIME, ADDR, PERIOD, CALLCHAIN.
#[cfg(target_os = "linux")]
pub(crate) const SAMPLE_TYPE: u64 = {
    use crate::sys::perf::sample::*;
    IP | TID | TIME | ADDR | PERIOD | CALLCHAIN
};

struct Cursor<'a>(&'a [u8]);

impl Cursor<'_> {
    fn u64(&mut self) -> Option<u64> {
        let (head, rest) = self.0.split_first_chunk::<8>()?;
        self.0 = rest;
        Some(u64::from_ne_bytes(*head))
    }
    fn u32(&mut self) -> Option<u32> {
        let (head, rest) = self.0.split_first_chunk::<4>()?;
        self.0 = rest;
        Some(u32::from_ne_bytes(*head))
    }
}

/// Parses one record (header included); `None` when it is cut short.
pub(crate) fn parse(bytes: &[u8]) -> Option<Record> {
    let mut c = Cursor(bytes);
    let kind = c.u32()?;
    let _misc_and_size = c.u32()?;
    match kind {
        RECORD_SAMPLE => {
            let ip = c.u64()?;
            let pid = c.u32()?;
            let tid = c.u32()?;
            let _time = c.u64()?;
            let addr = c.u64()?;
            let period = c.u64()?;
            let nr = c.u64()?;
            let mut stack = Vec::with_capacity(nr.min(128) as usize);
            for _ in 0..nr {
                let pc = c.u64()?;
                if pc < CONTEXT_MAX {
                    stack.push(pc);
                }
            }
            if stack.is_empty() && ip != 0 {
                stack.push(ip);
            }
            Some(Record::Sample(Sample { pid, tid, addr, period, stack }))
        }
        RECORD_LOST => {
            let _id = c.u64()?;
            Some(Record::Lost(c.u64()?))
        }
        RECORD_LOST_SAMPLES => Some(Record::Lost(c.u64()?)),
        _ => Some(Record::Other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(kind: u32, words: &[u64]) -> Vec<u8> {
        let size = 8 + 8 * words.len();
        let mut b = kind.to_ne_bytes().to_vec();
        b.extend_from_slice(&0u16.to_ne_bytes());
        b.extend_from_slice(&(size as u16).to_ne_bytes());
        for w in words {
            b.extend_from_slice(&w.to_ne_bytes());
        }
        b
    }

    #[test]
    fn a_sample_with_its_user_chain_and_markers_dropped() {
        let pid_tid = u64::from_ne_bytes([7, 0, 0, 0, 9, 0, 0, 0]);
        let user = (-512i64) as u64; // PERF_CONTEXT_USER
        let r = record(9, &[0x401000, pid_tid, 123, 0x7f00_1000, 1, 3, user, 0x401000, 0x402000]);
        let Some(Record::Sample(s)) = parse(&r) else { panic!("{:?}", parse(&r)) };
        assert_eq!((s.pid, s.tid, s.addr, s.period), (7, 9, 0x7f00_1000, 1));
        assert_eq!(s.stack, vec![0x401000, 0x402000]);
    }

    #[test]
    fn lost_records_are_counted_and_a_short_record_is_none() {
        assert_eq!(parse(&record(2, &[5, 42])), Some(Record::Lost(42)));
        assert_eq!(parse(&record(13, &[17])), Some(Record::Lost(17)));
        assert_eq!(parse(&record(3, &[1])), Some(Record::Other));
        let r = record(9, &[0x401000, 0, 0, 0, 1, 4, 1]);
        assert_eq!(parse(&r), None, "a chain of 4 with one entry is cut short");
    }
}
