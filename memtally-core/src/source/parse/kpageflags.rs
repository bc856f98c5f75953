//! `/proc/kpageflags` and `/proc/kpagecount`: one little-endian u64 per
//! page frame (kernel Documentation/admin-guide/mm/pagemap.rst). The
//! flags are the bits below; the count is how many page table entries map
//! the frame (for a large folio on a kernel built with
//! `CONFIG_NO_PAGE_MAPCOUNT`, the folio's average).

use super::pagemap::words;
use super::ParseError;
use crate::model::pages::PageFlags;

/// Decodes a kpageflags read: one `Flags` per frame.
pub fn parse(input: &[u8]) -> Result<Vec<PageFlags>, ParseError> {
    Ok(words(input)?.map(PageFlags).collect())
}

/// Decodes a kpagecount read: one map count per frame.
pub fn parse_counts(input: &[u8]) -> Result<Vec<u64>, ParseError> {
    Ok(words(input)?.collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_by_their_kernel_numbers() {
        let f = PageFlags((1 << 12) | (1 << 14) | (1 << 22) | (1 << 6) | (1 << 5));
        assert!(f.anon() && f.swapbacked() && f.thp() && f.active() && f.lru());
        assert!(!f.shmem() && !f.ksm() && !f.zero_page());
        assert!(PageFlags(1 << 14).shmem());
    }

    #[test]
    fn counts_and_flags_are_whole_words() {
        let mut b = 3u64.to_le_bytes().to_vec();
        b.extend((1u64 << 24).to_le_bytes());
        assert_eq!(parse_counts(&b).unwrap(), vec![3, 1 << 24]);
        assert!(parse(&b).unwrap()[1].zero_page());
        assert!(parse(&b[..9]).is_err());
    }
}
