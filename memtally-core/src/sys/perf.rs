//! `perf_event_open(2)` for one software event, sampled, with its ring
//! buffer: the calls `memtally faults` is made of. rustix does not offer
//! `perf_event_open`, so it is `libc::syscall` here, behind a safe
//! wrapper; the buffer is the kernel's shared mapping, read with the
//! acquire/release order its header asks for. Linux only.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};

/// `PERF_TYPE_SOFTWARE`.
const TYPE_SOFTWARE: u32 = 1;
/// `PERF_COUNT_SW_PAGE_FAULTS`.
pub(crate) const SW_PAGE_FAULTS: u64 = 2;

/// `PERF_SAMPLE_*` bits, in the order their fields come in a sample.
pub(crate) mod sample {
    pub const IP: u64 = 1 << 0;
    pub const TID: u64 = 1 << 1;
    pub const TIME: u64 = 1 << 2;
    pub const ADDR: u64 = 1 << 3;
    pub const CALLCHAIN: u64 = 1 << 5;
    pub const REGS_USER: u64 = 1 << 12;
    pub const STACK_USER: u64 = 1 << 13;
}

/// Bits of the attribute's flag word (`disabled`, `inherit`, ...).
mod flag {
    pub const DISABLED: u64 = 1 << 0;
    pub const INHERIT: u64 = 1 << 1;
    pub const EXCLUDE_KERNEL: u64 = 1 << 5;
    pub const EXCLUDE_HV: u64 = 1 << 6;
    pub const MMAP: u64 = 1 << 8;
    pub const COMM: u64 = 1 << 9;
    pub const TASK: u64 = 1 << 13;
    pub const MMAP_DATA: u64 = 1 << 17;
    pub const MMAP2: u64 = 1 << 23;
    pub const WATERMARK: u64 = 1 << 14;
    pub const EXCLUDE_CALLCHAIN_KERNEL: u64 = 1 << 21;
}

/// `PERF_FLAG_FD_CLOEXEC`.
const FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;

/// `PERF_EVENT_IOC_ENABLE`, `_DISABLE`, `_SET_OUTPUT` (`_IO('$', 0)`,
/// `_IO('$', 1)`, `_IO('$', 5)`).
const IOC_ENABLE: libc::c_ulong = 0x2400;
const IOC_DISABLE: libc::c_ulong = 0x2401;
const IOC_SET_OUTPUT: libc::c_ulong = 0x2405;

/// `struct perf_event_attr` as of `PERF_ATTR_SIZE_VER8` (136 bytes); the
/// bit fields are the one word `flags`.
#[repr(C)]
#[derive(Default)]
struct Attr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_watermark: u32,
    bp_type: u32,
    config1: u64,
    config2: u64,
    branch_sample_type: u64,
    sample_regs_user: u64,
    sample_stack_user: u32,
    clockid: i32,
    sample_regs_intr: u64,
    aux_watermark: u32,
    sample_max_stack: u16,
    reserved_2: u16,
    aux_sample_size: u32,
    reserved_3: u32,
    sig_data: u64,
    config3: u64,
}

/// What to sample.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sampling {
    /// The software event (`config`).
    pub event: u64,
    /// One sample every this many events (1: every one).
    pub period: u64,
    /// `PERF_SAMPLE_*` bits.
    pub sample_type: u64,
    /// Leave out events the kernel takes in kernel mode.
    pub exclude_kernel: bool,
    /// Also record mappings made (`PERF_RECORD_MMAP2`, data ones too),
    /// names (`COMM`) and forks (`FORK`) of the traced tasks.
    pub side_records: bool,
    /// Wake a poller when this many bytes are waiting.
    pub watermark: u32,
    /// The user registers (`perf_regs.h` bits) a sample copies, with
    /// `sample::REGS_USER`.
    pub regs_user: u64,
    /// Bytes of the user stack (from its pointer up) a sample copies,
    /// with `sample::STACK_USER` (a multiple of 8).
    pub stack_user: u32,
}

/// One event counting `tid` on `cpu` (and, inherited, the threads and
/// children it starts from now on), opened disabled. Per CPU, not per
/// task alone: the kernel maps no buffer of an inherited per-task event
/// (`cpu` -1), and the events of one CPU can share one buffer.
pub(crate) fn open(tid: u32, cpu: u32, s: &Sampling) -> io::Result<OwnedFd> {
    let mut flags = flag::DISABLED | flag::INHERIT | flag::EXCLUDE_HV;
    flags |= flag::EXCLUDE_CALLCHAIN_KERNEL | flag::WATERMARK;
    if s.side_records {
        flags |= flag::MMAP | flag::MMAP_DATA | flag::MMAP2 | flag::COMM | flag::TASK;
    }
    if s.exclude_kernel {
        flags |= flag::EXCLUDE_KERNEL;
    }
    let attr = Attr {
        kind: TYPE_SOFTWARE,
        size: std::mem::size_of::<Attr>() as u32,
        config: s.event,
        sample_period: s.period.max(1),
        sample_type: s.sample_type,
        flags,
        wakeup_watermark: s.watermark,
        sample_regs_user: s.regs_user,
        sample_stack_user: s.stack_user,
        ..Attr::default()
    };
    let pid = libc::pid_t::try_from(tid).map_err(|_| io::Error::from_raw_os_error(libc::ESRCH))?;
    // SAFETY: `attr` is a live, fully initialised perf_event_attr of the
    // size it says; the other arguments are plain integers.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const Attr,
            pid,
            cpu as libc::c_int,
            -1 as libc::c_int,
            FLAG_FD_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a new descriptor the kernel just returned, owned by no one else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) })
}

fn ioctl(fd: &OwnedFd, request: libc::c_ulong, arg: libc::c_int) -> io::Result<()> {
    // SAFETY: perf's ioctls take an integer argument (or none).
    match unsafe { libc::ioctl(fd.as_raw_fd(), request as _, arg) } {
        -1 => Err(io::Error::last_os_error()),
        _ => Ok(()),
    }
}

/// Starts counting.
pub(crate) fn enable(fd: &OwnedFd) -> io::Result<()> {
    ioctl(fd, IOC_ENABLE, 0)
}

/// Stops counting.
pub(crate) fn disable(fd: &OwnedFd) -> io::Result<()> {
    ioctl(fd, IOC_DISABLE, 0)
}

/// How many events `fd` counted (those of children that ended included).
pub(crate) fn count(fd: &OwnedFd) -> io::Result<u64> {
    let mut value = [0u8; 8];
    // SAFETY: reads at most 8 bytes into a buffer of 8.
    match unsafe { libc::read(fd.as_raw_fd(), value.as_mut_ptr().cast(), 8) } {
        8 => Ok(u64::from_ne_bytes(value)),
        -1 => Err(io::Error::last_os_error()),
        _ => Err(io::Error::from(io::ErrorKind::UnexpectedEof)),
    }
}

/// Sends `fd`'s samples to `into`'s ring buffer.
pub(crate) fn set_output(fd: &OwnedFd, into: &OwnedFd) -> io::Result<()> {
    ioctl(fd, IOC_SET_OUTPUT, into.as_raw_fd())
}

/// Offsets in `struct perf_event_mmap_page`.
const DATA_HEAD: usize = 1024;
const DATA_TAIL: usize = 1032;

/// An event's ring buffer: the header page and `2^n` data pages, mapped.
pub(crate) struct Ring {
    base: *mut u8,
    len: usize,
    page: usize,
    data_size: u64,
    fd: OwnedFd,
}

// SAFETY: the mapping is owned by the Ring alone; the kernel is the only
// other writer, through the header's acquire/release protocol.
unsafe impl Send for Ring {}

impl Ring {
    /// Maps `pages` (a power of two) data pages of `fd`'s buffer.
    pub(crate) fn map(fd: OwnedFd, pages: usize) -> io::Result<Ring> {
        let page = page_size();
        let len = page * (pages + 1);
        // SAFETY: a new shared mapping of the event's buffer; checked below.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Ring { base: base.cast(), len, page, data_size: (page * pages) as u64, fd })
    }

    /// The event whose buffer this is (to poll it).
    pub(crate) fn fd(&self) -> &OwnedFd {
        &self.fd
    }

    fn word(&self, offset: usize) -> &AtomicU64 {
        // SAFETY: offset is one of the header's aligned u64 fields, inside
        // the mapping, which lives as long as `self`.
        unsafe { &*(self.base.add(offset) as *const AtomicU64) }
    }

    /// Hands every record waiting (its bytes, header included, in one
    /// piece: read in place, or copied out where it wraps round the
    /// ring's end) to `each`, then frees their space. In place matters
    /// where samples carry a 16 KiB stack copy each.
    pub(crate) fn drain(&mut self, mut each: impl FnMut(&[u8])) {
        let head = self.word(DATA_HEAD).load(Ordering::Acquire);
        let mut tail = self.word(DATA_TAIL).load(Ordering::Relaxed);
        let mut record = Vec::new();
        while tail + 8 <= head {
            self.copy(tail, 8, &mut record);
            let size = u16::from_ne_bytes([record[6], record[7]]) as u64;
            if size < 8 || tail + size > head {
                break;
            }
            let pos = (tail % self.data_size) as usize;
            if pos + size as usize <= self.data_size as usize {
                // SAFETY: the record lies inside the data pages, which
                // start one page into the mapping, and the kernel leaves
                // it be until the tail moves past it.
                each(unsafe {
                    std::slice::from_raw_parts(self.base.add(self.page + pos), size as usize)
                });
            } else {
                self.copy(tail, size as usize, &mut record);
                each(&record);
            }
            tail += size;
        }
        self.word(DATA_TAIL).store(tail, Ordering::Release);
    }

    /// Copies `len` bytes at ring position `at` (wrapping) into `out`.
    fn copy(&self, at: u64, len: usize, out: &mut Vec<u8>) {
        out.clear();
        let mut pos = (at % self.data_size) as usize;
        let mut left = len;
        while left > 0 {
            let run = left.min(self.data_size as usize - pos);
            // SAFETY: `pos + run` stays inside the data pages, which start
            // one page into the mapping.
            let bytes = unsafe { std::slice::from_raw_parts(self.base.add(self.page + pos), run) };
            out.extend_from_slice(bytes);
            left -= run;
            pos = 0;
        }
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `map`, unmapped once.
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

/// The system's page size.
pub(crate) fn page_size() -> usize {
    // SAFETY: sysconf reads a constant.
    match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
        n if n > 0 => n as usize,
        _ => 4096,
    }
}

/// Waits up to `timeout_ms` for one of `fds` to have data (or hang up).
pub(crate) fn wait(fds: &[&OwnedFd], timeout_ms: i32) -> io::Result<()> {
    let mut polls: Vec<libc::pollfd> = fds
        .iter()
        .map(|fd| libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLIN, revents: 0 })
        .collect();
    // SAFETY: `polls` is a live array of as many pollfd as passed.
    match unsafe { libc::poll(polls.as_mut_ptr(), polls.len() as libc::nfds_t, timeout_ms) } {
        -1 => match io::Error::last_os_error() {
            e if e.kind() == io::ErrorKind::Interrupted => Ok(()),
            e => Err(e),
        },
        _ => Ok(()),
    }
}
