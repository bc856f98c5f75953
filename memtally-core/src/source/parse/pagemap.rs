//! `/proc/PID/pagemap` entries: one little-endian u64 per virtual page
//! (kernel Documentation/admin-guide/mm/pagemap.rst). Bit 63 present,
//! 62 swapped, 61 file page or shared anonymous, 57 write-protected by
//! userfaultfd, 56 mapped by this process only, 55 soft-dirty; bits 0-54
//! the page frame number when present (zero for a reader without
//! CAP_SYS_ADMIN), or the swap type (0-4) and offset (5-54) when swapped.

use super::ParseError;

const PRESENT: u64 = 1 << 63;
const SWAPPED: u64 = 1 << 62;
const FILE_OR_SHARED: u64 = 1 << 61;
const EXCLUSIVE: u64 = 1 << 56;
const SOFT_DIRTY: u64 = 1 << 55;
const LOW_55: u64 = (1 << 55) - 1;

/// Where one virtual page is, as pagemap tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Where {
    /// Not resident and not in swap (never touched, or a clean file page
    /// that was dropped).
    Absent,
    /// Resident in this page frame; `pfn` is 0 when the reader may not see
    /// frame numbers (no CAP_SYS_ADMIN).
    Present {
        /// The page frame number.
        pfn: u64,
    },
    /// In swap: which swap area, and where in it.
    Swapped {
        /// The swap area (its index in `/proc/swaps` order).
        kind: u8,
        /// The slot in that area.
        offset: u64,
    },
}

/// One decoded pagemap entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Where the page is.
    pub at: Where,
    /// A page of a file or shared anonymous memory (not private anonymous).
    pub file_or_shared: bool,
    /// Mapped by this process only (Linux 4.2 and later).
    pub exclusive: bool,
    /// Written since the soft-dirty bits were last cleared.
    pub soft_dirty: bool,
}

/// Decodes one raw entry.
pub fn decode(raw: u64) -> Entry {
    let at = if raw & PRESENT != 0 {
        Where::Present { pfn: raw & LOW_55 }
    } else if raw & SWAPPED != 0 {
        Where::Swapped { kind: (raw & 0x1f) as u8, offset: (raw & LOW_55) >> 5 }
    } else {
        Where::Absent
    };
    Entry {
        at,
        file_or_shared: raw & FILE_OR_SHARED != 0,
        exclusive: raw & EXCLUSIVE != 0,
        soft_dirty: raw & SOFT_DIRTY != 0,
    }
}

/// The raw u64 words of a pagemap read (a whole number of 8-byte entries).
pub fn words(input: &[u8]) -> Result<impl Iterator<Item = u64> + '_, ParseError> {
    if !input.len().is_multiple_of(8) {
        return Err(ParseError::at(
            0,
            format!("{} bytes is not a whole number of 8-byte entries", input.len()),
        ));
    }
    Ok(input.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8]))))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes a pagemap read: one entry per page.
    fn parse(input: &[u8]) -> Result<Vec<Entry>, ParseError> {
        Ok(words(input)?.map(decode).collect())
    }

    #[test]
    fn present_swapped_absent() {
        let e = decode(PRESENT | EXCLUSIVE | 0x1234);
        assert_eq!(e.at, Where::Present { pfn: 0x1234 });
        assert!(e.exclusive && !e.file_or_shared);
        let s = decode(SWAPPED | (77 << 5) | 3);
        assert_eq!(s.at, Where::Swapped { kind: 3, offset: 77 });
        assert_eq!(decode(0).at, Where::Absent);
        let f = decode(PRESENT | FILE_OR_SHARED | SOFT_DIRTY);
        assert_eq!(f.at, Where::Present { pfn: 0 }, "an unprivileged reader sees no frame");
        assert!(f.file_or_shared && f.soft_dirty);
    }

    #[test]
    fn bytes_are_little_endian_whole_entries() {
        let mut b = (PRESENT | 5).to_le_bytes().to_vec();
        b.extend(0u64.to_le_bytes());
        let v = parse(&b).unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].at, Where::Present { pfn: 5 });
        assert!(parse(&b[..7]).is_err());
    }
}
