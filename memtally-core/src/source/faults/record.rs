//! The records of a perf ring buffer that `memtally faults` asks for,
//! parsed from their bytes: pure, so the layouts are tested without a
//! kernel.

/// `PERF_RECORD_LOST`: the kernel dropped records, the buffer was full.
const RECORD_LOST: u32 = 2;
/// `PERF_RECORD_COMM`: a thread's name changed (an exec).
const RECORD_COMM: u32 = 3;
/// `PERF_RECORD_FORK`: a thread or process started.
const RECORD_FORK: u32 = 7;
/// `PERF_RECORD_MMAP2`: a mapping was made.
const RECORD_MMAP2: u32 = 10;
/// `PERF_RECORD_SAMPLE`.
const RECORD_SAMPLE: u32 = 9;
/// `PERF_RECORD_LOST_SAMPLES`.
const RECORD_LOST_SAMPLES: u32 = 13;
/// Call-chain entries at or above this are context markers
/// (`PERF_CONTEXT_USER` and the like), not addresses.
const CONTEXT_MAX: u64 = (-4095i64) as u64;

/// One sample of the layout `sample_type` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sample<'a> {
    /// The process (thread group) the fault was taken in.
    pub pid: u32,
    /// The thread.
    pub tid: u32,
    /// The faulting address.
    pub addr: u64,
    /// The user call chain, the faulting instruction first.
    pub stack: Vec<u64>,
    /// The user registers and stack bytes, where asked for (`Unwind`) and
    /// the fault was taken in a user task.
    pub user: Option<UserStack<'a>>,
}

/// A sample's copy of its user registers and stack, to unwind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UserStack<'a> {
    /// The registers of [`REGS_USER`], in its bits' order.
    pub regs: [u64; REGS],
    /// The stack from the stack pointer up (what the kernel could copy).
    pub bytes: &'a [u8],
}

/// The user registers a sample copies (`perf_regs.h` bits), as the
/// unwinder needs them: x86_64 bp, sp, ip; aarch64 x29 (fp), x30 (lr),
/// sp, pc. Other architectures copy none (frame-pointer chains only).
#[cfg(target_arch = "x86_64")]
pub(crate) const REGS_USER: u64 = 1 << 6 | 1 << 7 | 1 << 8;
#[cfg(target_arch = "aarch64")]
pub(crate) const REGS_USER: u64 = 1 << 29 | 1 << 30 | 1 << 31 | 1 << 32;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub(crate) const REGS_USER: u64 = 0;
/// How many registers [`REGS_USER`] names.
pub(crate) const REGS: usize = REGS_USER.count_ones() as usize;

/// A mapping made (`PERF_RECORD_MMAP2`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mmap {
    pub pid: u32,
    pub start: u64,
    pub len: u64,
    pub offset: u64,
    pub major: u32,
    pub minor: u32,
    pub inode: u64,
    /// `PROT_*` bits.
    pub prot: u32,
    /// `MAP_*` bits.
    pub flags: u32,
    /// The file, `//anon`, `[heap]`, `[stack]`, ...
    pub path: String,
}

impl Mmap {
    /// The mapping as a line of `/proc/PID/maps`, for the maps parser.
    pub(crate) fn maps_line(&self) -> String {
        let bit = |b: u32, c: char| if self.prot & b != 0 { c } else { '-' };
        let share = if self.flags & 1 != 0 { 's' } else { 'p' };
        let path = if self.path == "//anon" { "" } else { self.path.as_str() };
        format!(
            "{:x}-{:x} {}{}{}{share} {:08x} {:02x}:{:02x} {} {path}",
            self.start,
            self.start + self.len,
            bit(1, 'r'),
            bit(2, 'w'),
            bit(4, 'x'),
            self.offset,
            self.major,
            self.minor,
            self.inode,
        )
    }
}

/// A record that matters here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Record<'a> {
    Sample(Sample<'a>),
    Mmap(Mmap),
    /// A new process (`pid`) forked from `parent`; a new thread has both the same.
    Fork {
        pid: u32,
        parent: u32,
    },
    /// A process's new name; `exec`: an exec gave it (a new address space).
    Comm {
        pid: u32,
        comm: String,
        exec: bool,
    },
    /// So many samples (or records) were lost.
    Lost(u64),
    /// A record of another type, skipped.
    Other,
}

/// The `PERF_SAMPLE_*` bits the parser reads, in their order in a sample:
/// IP, TID, TIME, ADDR, CALLCHAIN, and with `user_stack` REGS_USER and
/// STACK_USER. Not PERIOD: with it, the kernel samples every software
/// event whatever the sample period.
#[cfg(target_os = "linux")]
pub(crate) fn sample_type(user_stack: bool) -> u64 {
    use crate::sys::perf::sample::*;
    let chain = IP | TID | TIME | ADDR | CALLCHAIN;
    if user_stack {
        chain | REGS_USER | STACK_USER
    } else {
        chain
    }
}

struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn u64(&mut self) -> Option<u64> {
        let (head, rest) = self.0.split_first_chunk::<8>()?;
        self.0 = rest;
        Some(u64::from_ne_bytes(*head))
    }
    /// A NUL-terminated string (padded to 8 bytes), the rest if no NUL.
    fn text(&mut self) -> String {
        let end = self.0.iter().position(|&b| b == 0).unwrap_or(self.0.len());
        let s = String::from_utf8_lossy(&self.0[..end]).into_owned();
        self.0 = &[];
        s
    }
    fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = (self.0.get(..n)?, &self.0[n..]);
        self.0 = rest;
        Some(head)
    }
    fn u32(&mut self) -> Option<u32> {
        let (head, rest) = self.0.split_first_chunk::<4>()?;
        self.0 = rest;
        Some(u32::from_ne_bytes(*head))
    }
}

/// Parses one record (header included); `None` when it is cut short.
/// `user_stack`: the samples carry registers and stack
/// (`sample_type(true)`).
pub(crate) fn parse(bytes: &[u8], user_stack: bool) -> Option<Record<'_>> {
    let mut c = Cursor(bytes);
    let kind = c.u32()?;
    let misc = c.u32()? & 0xffff;
    match kind {
        RECORD_SAMPLE => {
            let ip = c.u64()?;
            let pid = c.u32()?;
            let tid = c.u32()?;
            let _time = c.u64()?;
            let addr = c.u64()?;
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
            let user = if user_stack { user_regs_and_stack(&mut c)? } else { None };
            Some(Record::Sample(Sample { pid, tid, addr, stack, user }))
        }
        RECORD_LOST => {
            let _id = c.u64()?;
            Some(Record::Lost(c.u64()?))
        }
        RECORD_LOST_SAMPLES => Some(Record::Lost(c.u64()?)),
        RECORD_FORK => {
            let pid = c.u32()?;
            let parent = c.u32()?;
            Some(Record::Fork { pid, parent })
        }
        RECORD_COMM => {
            let pid = c.u32()?;
            let _tid = c.u32()?;
            // PERF_RECORD_MISC_COMM_EXEC
            Some(Record::Comm { pid, comm: c.text(), exec: misc & (1 << 13) != 0 })
        }
        RECORD_MMAP2 => {
            let pid = c.u32()?;
            let _tid = c.u32()?;
            let (start, len, offset) = (c.u64()?, c.u64()?, c.u64()?);
            let (major, minor, inode) = (c.u32()?, c.u32()?, c.u64()?);
            let _generation = c.u64()?;
            let (prot, flags) = (c.u32()?, c.u32()?);
            let path = c.text();
            Some(Record::Mmap(Mmap {
                pid,
                start,
                len,
                offset,
                major,
                minor,
                inode,
                prot,
                flags,
                path,
            }))
        }
        _ => Some(Record::Other),
    }
}

/// REGS_USER (`abi`, then the registers unless it is 0: a kernel
/// thread) and STACK_USER (`size`, the bytes, then how many of them the
/// kernel filled); `Some(None)` where there is nothing to unwind.
fn user_regs_and_stack<'a>(c: &mut Cursor<'a>) -> Option<Option<UserStack<'a>>> {
    let abi = c.u64()?;
    let mut regs = [0u64; REGS];
    if abi != 0 {
        for r in &mut regs {
            *r = c.u64()?;
        }
    }
    let size = c.u64()?;
    if size == 0 {
        return Some(None);
    }
    let bytes = c.bytes(usize::try_from(size).ok()?)?;
    let filled = usize::try_from(c.u64()?).ok()?.min(bytes.len());
    Some((abi != 0 && REGS > 0).then_some(UserStack { regs, bytes: &bytes[..filled] }))
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
        let r = record(9, &[0x401000, pid_tid, 123, 0x7f00_1000, 3, user, 0x401000, 0x402000]);
        let Some(Record::Sample(s)) = parse(&r, false) else { panic!("{:?}", parse(&r, false)) };
        assert_eq!((s.pid, s.tid, s.addr), (7, 9, 0x7f00_1000));
        assert_eq!(s.stack, vec![0x401000, 0x402000]);
    }

    #[test]
    fn a_sample_with_its_user_registers_and_stack() {
        let pid_tid = u64::from_ne_bytes([7, 0, 0, 0, 9, 0, 0, 0]);
        let mut words = vec![0x401000, pid_tid, 123, 0x7f00_1000, 1, 0x401000];
        words.push(2); // PERF_SAMPLE_REGS_ABI_64
        words.extend((0..REGS as u64).map(|i| 0x10 + i));
        words.extend([24, 0xa, 0xb, 0xc, 16]); // 24 bytes copied, 16 filled
        let r = record(9, &words);
        let Some(Record::Sample(s)) = parse(&r, true) else { panic!() };
        let user = s.user.expect("registers and stack");
        assert_eq!(user.regs.to_vec(), (0..REGS as u64).map(|i| 0x10 + i).collect::<Vec<_>>());
        assert_eq!(user.bytes.len(), 16, "the bytes the kernel filled");
        assert_eq!(&user.bytes[8..], &0xbu64.to_ne_bytes());
        // A kernel thread (abi 0) has no registers, and nothing to unwind.
        let words = [0x401000, pid_tid, 123, 0x7f00_1000, 1, 0x401000, 0, 0];
        let r = record(9, &words);
        let Some(Record::Sample(s)) = parse(&r, true) else { panic!() };
        assert_eq!(s.user, None);
        let short = [0x401000, pid_tid, 123, 0x7f00_1000, 1, 0x401000, 2];
        assert_eq!(parse(&record(9, &short), true), None, "registers cut short");
    }

    #[test]
    fn a_mapping_reads_as_its_maps_line() {
        let mut words =
            vec![u64::from_ne_bytes([7, 0, 0, 0, 7, 0, 0, 0]), 0x7f00_0000, 0x2000, 0x1000];
        words.push(u64::from_ne_bytes([8, 0, 0, 0, 1, 0, 0, 0])); // major 8, minor 1
        words.extend([42, 0]);
        words.push(u64::from_ne_bytes([3, 0, 0, 0, 2, 0, 0, 0])); // rw-, MAP_PRIVATE
        words.push(u64::from_ne_bytes(*b"/lib/x\0\0"));
        let Some(Record::Mmap(m)) = parse(&record(10, &words), false) else { panic!() };
        assert_eq!(m.path, "/lib/x");
        assert_eq!(m.maps_line(), "7f000000-7f002000 rw-p 00001000 08:01 42 /lib/x");
        let words = [u64::from_ne_bytes([9, 0, 0, 0, 7, 0, 0, 0]), 0, 0];
        assert_eq!(parse(&record(7, &words), false), Some(Record::Fork { pid: 9, parent: 7 }));
    }

    #[test]
    fn lost_records_are_counted_and_a_short_record_is_none() {
        assert_eq!(parse(&record(2, &[5, 42]), false), Some(Record::Lost(42)));
        assert_eq!(parse(&record(13, &[17]), false), Some(Record::Lost(17)));
        assert_eq!(parse(&record(4, &[1]), false), Some(Record::Other));
        let r = record(9, &[0x401000, 0, 0, 0, 4, 1]);
        assert_eq!(parse(&r, false), None, "a chain of 4 with one entry is cut short");
    }
}
