//! The seed Perl script's view (`mem_usage.pl`, 2004): virtual size of
//! each mapping, sorted by backing (device `00:00` means anonymous) and
//! permission bits. Reproduced rule for rule so the classic view gives the
//! seed's numbers; what it cannot tell (which pages are dirty) is what the
//! normal view adds.

use crate::model::{Flow, Region, RegionSink};

/// The seed's nine counters, in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Classic {
    /// File-backed `r-x`: program and library code.
    pub mapped_executable: u64,
    /// File-backed `r--`: read-only data.
    pub mapped_rodata: u64,
    /// File-backed `rw-`: writable data.
    pub mapped_rwdata: u64,
    /// File-backed, any other permissions (`---`, `rwx`).
    pub mapped_unknown: u64,
    /// Anonymous `rwx`.
    pub writable_code: u64,
    /// Anonymous `rw-`: heap, stacks, `mmap`.
    pub data: u64,
    /// Anonymous `r--`.
    pub rodata: u64,
    /// Anonymous `---`: guard pages and reservations.
    pub unreadable: u64,
    /// Anonymous, any other permissions (`r-x`: `[vdso]`).
    pub unbacked_unknown: u64,
}

/// Adds up regions by the seed's rules: anonymous when the device is
/// `00:00`, then by the first three permission characters.
pub fn classic(regions: &[Region]) -> Classic {
    let mut c = Classic::default();
    for r in regions {
        c.add(r);
    }
    c
}

impl Classic {
    /// Counts one mapping (regions can be streamed through this).
    pub(crate) fn add(&mut self, r: &Region) {
        // An end below the start is no mapping the kernel writes: it
        // counts nothing rather than 2^64 minus a little.
        let size = match (r.start, r.end) {
            (Some(s), Some(e)) => e.saturating_sub(s),
            _ => return,
        };
        let rwx = r.perms.get(..3).unwrap_or("");
        let slot = if r.device.as_deref() == Some("00:00") {
            match rwx {
                "rwx" => &mut self.writable_code,
                "rw-" => &mut self.data,
                "r--" => &mut self.rodata,
                "---" => &mut self.unreadable,
                _ => &mut self.unbacked_unknown,
            }
        } else {
            match rwx {
                "r-x" => &mut self.mapped_executable,
                "r--" => &mut self.mapped_rodata,
                "rw-" => &mut self.mapped_rwdata,
                _ => &mut self.mapped_unknown,
            }
        };
        // Crafted input can claim more than the address space: the
        // counter stops at u64::MAX instead of wrapping to a small figure.
        *slot = slot.saturating_add(size);
    }
}

/// The seed's table as a sink: every mapping counted as it is read.
impl RegionSink for Classic {
    fn region(&mut self, _line: usize, region: &Region) -> Flow {
        self.add(region);
        Flow::Continue
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::parse::smaps::SmapsReader;

    #[test]
    fn follows_the_seed_rules() {
        let maps = "\
1000-3000 r-xp 00000000 08:01 5 /bin/x
3000-4000 r--p 00000000 08:01 5 /bin/x
4000-5000 rw-p 00000000 08:01 5 /bin/x
5000-6000 ---p 00000000 08:01 5 /bin/x
6000-7000 rw-p 00000000 00:00 0 [heap]
7000-8000 rwxp 00000000 00:00 0
8000-9000 ---p 00000000 00:00 0
9000-a000 r--p 00000000 00:00 0
a000-b000 r-xp 00000000 00:00 0 [vdso]
b000-c000 rw-s 00000000 00:01 7 /dev/zero (deleted)
";
        let regions = SmapsReader::new(maps.as_bytes()).read_all().unwrap();
        let c = classic(&regions);
        assert_eq!(c.mapped_executable, 0x2000);
        assert_eq!(c.mapped_rodata, 0x1000);
        assert_eq!(c.mapped_rwdata, 0x2000, "device 00:01 counts as a file, as in the seed");
        assert_eq!(c.mapped_unknown, 0x1000);
        assert_eq!(c.data, 0x1000);
        assert_eq!(c.writable_code, 0x1000);
        assert_eq!(c.unreadable, 0x1000);
        assert_eq!(c.rodata, 0x1000);
        assert_eq!(c.unbacked_unknown, 0x1000);
    }

    /// The fuzzer's find (68 executions with overflow checks on): two
    /// mappings of the whole address space wrapped the counter to a small
    /// figure (or panicked). A counter saturates; an end below its start
    /// (no mapping the kernel writes) counts nothing instead of 2^64 - n.
    #[test]
    fn counters_saturate_and_an_inverted_range_counts_nothing() {
        let maps = "\
0-ffffffffffffffff rw-p 00000000 00:00 0
0-ffffffffffffffff rw-p 00000000 00:00 0
3000-1000 r-xp 00000000 08:01 5 /bin/x
";
        let regions = SmapsReader::new(maps.as_bytes()).read_all().unwrap();
        let c = classic(&regions);
        assert_eq!(c.data, u64::MAX);
        assert_eq!(c.mapped_executable, 0);
    }
}
