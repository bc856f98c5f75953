//! Idle page tracking (`/sys/kernel/mm/page_idle/bitmap`, kernels built
//! with `CONFIG_IDLE_PAGE_TRACKING`): one bit per page frame, in 64-bit
//! words (frame N is bit N % 64 of word N / 64, the word at byte 8 ×
//! (N / 64)). Writing a 1 bit marks that frame's page idle; reading gives
//! 1 where the page is still idle, that is, was not accessed since (the
//! kernel checks and clears the page tables' accessed bits as it reads).
//! The kernel takes whole, aligned words only: every read and write here
//! is 8-byte aligned and a multiple of 8 bytes long.
//!
//! Unlike `clear_refs`, marking pages idle leaves the accessed state the
//! reclaim code looks at as it was: the method to prefer where it is.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::model::wss::IdleTracking;
use crate::source::pages::read_at;

/// The bitmap idle page tracking reads and writes (one bit per frame).
pub(crate) const BITMAP: &str = "/sys/kernel/mm/page_idle/bitmap";

/// Words apart by at most this many are written and read through, in one
/// call (the words between are written as 0, which marks nothing).
const GAP_WORDS: u64 = 8;
/// The longest run of words one call handles: 512 KiB of the bitmap.
const RUN_WORDS: u64 = 64 * 1024;

/// Whether this kernel offers idle page tracking, and whether memtally
/// may use it (it is root's: mode 0600).
pub(crate) fn detect() -> IdleTracking {
    detect_at(Path::new(BITMAP))
}

fn detect_at(path: &Path) -> IdleTracking {
    if !path.exists() {
        IdleTracking::Absent
    } else if OpenOptions::new().read(true).write(true).open(path).is_ok() {
        IdleTracking::Used
    } else {
        IdleTracking::PresentUnused
    }
}

/// Frame `pfn`'s word and bit in the bitmap.
pub(crate) fn word_bit(pfn: u64) -> (u64, u32) {
    (pfn / 64, (pfn % 64) as u32)
}

/// A run of bitmap words: the first word's index and, per word, the bits
/// of the frames asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WordRun {
    pub(crate) first: u64,
    pub(crate) bits: Vec<u64>,
}

impl WordRun {
    /// The byte offset of the run in the bitmap.
    fn offset(&self) -> u64 {
        self.first * 8
    }
}

/// The words of the frames `pfns` (sorted), in runs: words close
/// together share a run (the words between carry no bits).
pub(crate) fn word_runs(pfns: &[u64]) -> Vec<WordRun> {
    let mut runs: Vec<WordRun> = Vec::new();
    for &pfn in pfns {
        let (word, bit) = word_bit(pfn);
        match runs.last_mut() {
            Some(r) if word >= r.first && word - r.first < RUN_WORDS => {
                let at = (word - r.first) as usize;
                if at >= r.bits.len() + GAP_WORDS as usize {
                    runs.push(WordRun { first: word, bits: vec![1 << bit] });
                } else {
                    if at >= r.bits.len() {
                        r.bits.resize(at + 1, 0);
                    }
                    r.bits[at] |= 1 << bit;
                }
            }
            _ => runs.push(WordRun { first: word, bits: vec![1 << bit] }),
        }
    }
    runs
}

/// The bitmap, open for reading and writing.
#[derive(Debug)]
pub(crate) struct Bitmap {
    file: File,
}

impl Bitmap {
    /// Opens the kernel's bitmap.
    pub(crate) fn open() -> io::Result<Bitmap> {
        Self::open_at(Path::new(BITMAP))
    }

    fn open_at(path: &Path) -> io::Result<Bitmap> {
        Ok(Bitmap { file: OpenOptions::new().read(true).write(true).open(path)? })
    }

    /// Marks the pages of the frames `pfns` (sorted) idle.
    pub(crate) fn mark(&self, pfns: &[u64]) -> io::Result<()> {
        for run in word_runs(pfns) {
            let bytes: Vec<u8> = run.bits.iter().flat_map(|w| w.to_le_bytes()).collect();
            self.file.write_all_at(&bytes, run.offset())?;
        }
        Ok(())
    }

    /// Of the frames `pfns` (sorted), whether each is still idle, in order.
    /// A frame the kernel does not track (not on an LRU list: the zero
    /// page, a kernel page) reads as not idle.
    pub(crate) fn idle(&self, pfns: &[u64]) -> io::Result<Vec<bool>> {
        let mut out = Vec::with_capacity(pfns.len());
        let mut buf = Vec::new();
        let mut i = 0;
        for run in word_runs(pfns) {
            buf.resize(run.bits.len() * 8, 0);
            let got = read_at(&self.file, &mut buf, run.offset())?;
            let words: Vec<u64> = buf[..got - got % 8]
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
                .collect();
            let end = run.first + run.bits.len() as u64;
            while i < pfns.len() && word_bit(pfns[i]).0 < end {
                let (word, bit) = word_bit(pfns[i]);
                let w = words.get((word - run.first) as usize).copied().unwrap_or(0);
                out.push(w & (1 << bit) != 0);
                i += 1;
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Frames of this process's own resident pages, from its pagemap
    /// (root only: else the frame numbers read as 0).
    fn own_pfns() -> Option<Vec<u64>> {
        let v = vec![9u8; 8 << 20];
        let start = v.as_ptr() as u64 / 4096;
        let f = File::open("/proc/self/pagemap").ok()?;
        let mut buf = vec![0u8; (v.len() / 4096) * 8];
        f.read_exact_at(&mut buf, start * 8).ok()?;
        let mut pfns: Vec<u64> = buf
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .filter(|e| e >> 63 == 1)
            .map(|e| e & ((1 << 55) - 1))
            .filter(|&p| p != 0)
            .collect();
        drop(v);
        pfns.sort_unstable();
        pfns.dedup();
        (!pfns.is_empty()).then_some(pfns)
    }

    #[test]
    fn a_frame_is_its_words_bit() {
        assert_eq!(word_bit(0), (0, 0));
        assert_eq!(word_bit(63), (0, 63));
        assert_eq!(word_bit(64), (1, 0));
        assert_eq!(word_bit(0x12345), (0x12345 / 64, (0x12345 % 64) as u32));
    }

    #[test]
    fn runs_join_close_words_and_split_far_ones() {
        let runs = word_runs(&[1, 2, 64, 130, 64 * 20, 64 * 20 + 63]);
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[0], WordRun { first: 0, bits: vec![0b110, 1, 1 << 2] });
        assert_eq!(runs[1], WordRun { first: 20, bits: vec![1 | (1 << 63)] });
        let far = word_runs(&[0, RUN_WORDS * 64]);
        assert_eq!(far.len(), 2, "a run is at most RUN_WORDS long");
    }

    /// On real frames (this process's pages): every frame's bit is in its
    /// run, once, and the runs are whole aligned words.
    #[test]
    fn runs_of_real_frames_hold_each_frame_once() {
        let Some(pfns) = own_pfns() else {
            return eprintln!("skipped: frame numbers need root (pagemap reads 0)");
        };
        let runs = word_runs(&pfns);
        let bits: u64 = runs.iter().flat_map(|r| &r.bits).map(|w| w.count_ones() as u64).sum();
        assert_eq!(bits, pfns.len() as u64);
        for &p in &pfns {
            let (word, bit) = word_bit(p);
            let r = runs.iter().find(|r| word >= r.first && word < r.first + r.bits.len() as u64);
            let r = r.unwrap_or_else(|| panic!("frame {p} in no run"));
            assert!(r.bits[(word - r.first) as usize] & (1 << bit) != 0);
            assert_eq!(r.offset() % 8, 0);
        }
        assert!(runs.windows(2).all(|w| w[0].first + (w[0].bits.len() as u64) < w[1].first));
    }

    /// Marking and reading back through a file laid out as the bitmap:
    /// the words written are the frames' bits, the reads see them.
    #[test]
    fn marks_and_reads_whole_words_of_a_bitmap_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bitmap");
        std::fs::write(&path, vec![0u8; 8 * 4096]).unwrap();
        let pfns = own_pfns()
            .map(|p| p.iter().map(|x| x % (64 * 4096)).collect::<Vec<_>>())
            .unwrap_or_else(|| (0..64 * 4096).step_by(37).collect());
        let mut pfns = pfns;
        pfns.sort_unstable();
        pfns.dedup();
        let bm = Bitmap::open_at(&path).unwrap();
        // Idle before marking: nothing.
        assert!(bm.idle(&pfns).unwrap().iter().all(|&b| !b));
        bm.mark(&pfns).unwrap();
        assert!(bm.idle(&pfns).unwrap().iter().all(|&b| b));
        let others: Vec<u64> = (0..64 * 4096).filter(|p| pfns.binary_search(p).is_err()).collect();
        assert!(bm.idle(&others).unwrap().iter().all(|&b| !b), "only the frames marked");
        assert_eq!(detect_at(&path), IdleTracking::Used);
        assert_eq!(detect_at(&dir.path().join("none")), IdleTracking::Absent);
    }

    #[test]
    fn detection_agrees_with_the_file() {
        let there = Path::new(BITMAP).exists();
        assert_eq!(detect() != IdleTracking::Absent, there);
    }
}
