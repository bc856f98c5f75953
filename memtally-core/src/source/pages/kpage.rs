//! Reads `/proc/kpagecount` and `/proc/kpageflags` for a set of frames, in
//! runs: frames close together (a huge page's 512, a file's pages loaded
//! together) are read with one `pread` each file, through small gaps,
//! rather than one read per frame; with many frames the runs join into a
//! sequential read of the stretch they cover.

use std::fs::File;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::model::pages::{FrameInfo, Frames, PageFlags, ReadCost};

/// Frames apart by at most this many are read through, in one run: the
/// kernel spends about 0.1 µs a frame on kpageflags and about 1 µs a
/// call, so reading through a gap of 8 costs what a second call would
/// (docs/benchmarks.md#page-level-reads).
const GAP: u64 = 8;
/// The longest run read at once: 1 MiB of each file.
const RUN: u64 = 128 * 1024;

/// Where the two files are.
#[derive(Debug, Clone)]
pub(crate) struct KpageFiles {
    /// `/proc/kpagecount`.
    pub(crate) count: PathBuf,
    /// `/proc/kpageflags`.
    pub(crate) flags: PathBuf,
}

impl KpageFiles {
    /// The files of the procfs at `proc`.
    pub(crate) fn under(proc: &Path) -> KpageFiles {
        KpageFiles { count: proc.join("kpagecount"), flags: proc.join("kpageflags") }
    }
}

/// Reads what the kernel says of each frame of `pfns` (sorted, no
/// repeats): flags, and with `counts` map counts (else 0: not read; page
/// states need the flags alone, and each file costs as much as the other).
/// The kernel's side is the cost (about 0.1 µs a frame, 1 µs a call), so
/// many frames are split among threads, each reading its own runs.
///
/// `huge`: frames of huge pages mapped whole (first, how many), one folio
/// each. Without `counts`, one flags word is read per such range and
/// given to each of its frames: the kernel tells every page of a folio
/// by the folio's flags (but whether it is the head or a tail, which no
/// figure uses). Map counts are read page by page: a huge page mapped
/// whole here may be mapped in part elsewhere, each part with its count.
pub(crate) fn read(
    files: &KpageFiles,
    pfns: Vec<u64>,
    counts: bool,
    huge: &[(u64, u64)],
) -> Result<(Frames, ReadCost)> {
    let open = |p: &Path| File::open(p).map_err(|e| Error::io(p, e));
    let (count, flags) = (counts.then(|| open(&files.count)).transpose()?, open(&files.flags)?);
    let wanted = if counts || huge.is_empty() { None } else { Some(heads(&pfns, huge)) };
    let to_read = wanted.as_deref().unwrap_or(&pfns);
    let most = to_read.len().div_ceil(PER_THREAD).max(1);
    let threads = crate::source::scan::default_threads().clamp(1, most);
    let chunk = to_read.len().div_ceil(threads).max(1);
    // One vector the threads fill in place, each its own part: no copy of
    // the parts into a whole afterwards.
    let mut info = vec![FrameInfo::default(); to_read.len()];
    let parts: Vec<Result<u64>> = std::thread::scope(|s| {
        let handles: Vec<_> = to_read
            .chunks(chunk)
            .zip(info.chunks_mut(chunk))
            .map(|(part, out)| s.spawn(|| read_part(files, count.as_ref(), &flags, part, out)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or(Err(Error::ThreadPanicked { what: "a page frame reader" })))
            .collect()
    });
    let mut words = 0;
    for part in parts {
        words += part?;
    }
    let cost = ReadCost {
        kpageflags_entries: words,
        kpagecount_entries: if counts { words } else { 0 },
        ..ReadCost::default()
    };
    let Some(wanted) = wanted else { return Ok((Frames::new(pfns, info), cost)) };
    // Each frame not read is a later frame of the huge page whose frame
    // was read last (the ranges are contiguous, the frames sorted).
    let mut all = Vec::with_capacity(pfns.len());
    let mut w = 0;
    for &pfn in &pfns {
        if wanted.get(w) == Some(&pfn) {
            w += 1;
        }
        all.push(info.get(w.wrapping_sub(1)).copied().unwrap_or_default());
    }
    Ok((Frames::new(pfns, all), cost))
}

/// The frames of `pfns` to read when each range of `huge` is told by its
/// first frame: every frame outside the ranges, and the first of each
/// range among `pfns`.
fn heads(pfns: &[u64], huge: &[(u64, u64)]) -> Vec<u64> {
    let mut ranges: Vec<(u64, u64)> = huge.iter().map(|&(first, n)| (first, first + n)).collect();
    ranges.sort_unstable();
    // Ranges that overlap share frames, so they are of one folio: joined.
    // Ranges that only touch may be two folios: kept apart.
    let mut joined: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
    for r in ranges {
        match joined.last_mut() {
            Some(last) if r.0 < last.1 => last.1 = last.1.max(r.1),
            _ => joined.push(r),
        }
    }
    let mut out = Vec::with_capacity(pfns.len().min(joined.len() + pfns.len() / 8));
    let (mut h, mut told) = (0, usize::MAX);
    for &pfn in pfns {
        while h < joined.len() && joined[h].1 <= pfn {
            h += 1;
        }
        match joined.get(h) {
            Some(&(first, _)) if first <= pfn => {
                if told != h {
                    told = h;
                    out.push(pfn);
                }
            }
            _ => out.push(pfn),
        }
    }
    out
}

/// Frames per thread below which one thread reads them all.
const PER_THREAD: usize = 32 * 1024;

/// Reads the frames of `pfns` (sorted) in runs, into `out` (one per frame);
/// how many flags words were read.
fn read_part(
    files: &KpageFiles,
    count: Option<&File>,
    flags: &File,
    pfns: &[u64],
    out: &mut [FrameInfo],
) -> Result<u64> {
    let mut read_words = 0;
    let mut words = Vec::new();
    let mut bits = Vec::new();
    let mut i = 0;
    while i < pfns.len() {
        // One run: pfns[i..j], spanning first..=last.
        let first = pfns[i];
        let mut j = i + 1;
        while j < pfns.len() && pfns[j] - pfns[j - 1] <= GAP && pfns[j] - first < RUN {
            j += 1;
        }
        let last = pfns[j - 1];
        let len = ((last - first + 1) * 8) as usize;
        if let Some(count) = count {
            read_run(count, &files.count, first, len, &mut words)?;
        }
        read_run(flags, &files.flags, first, len, &mut bits)?;
        read_words += bits.len() as u64 / 8;
        for (at, &pfn) in (i..j).zip(&pfns[i..j]) {
            let k = (pfn - first) as usize;
            // A frame past the end of either file (memory hot-removed
            // while read) is no frame: a count of 0. The words are
            // decoded where they lie (a vector per run was a cost).
            out[at] = FrameInfo {
                mapcount: if count.is_some() { word(&words, k).unwrap_or(0) } else { 0 },
                flags: PageFlags(word(&bits, k).unwrap_or(0)),
            };
        }
        i = j;
    }
    Ok(read_words)
}

/// Word `k` of a read of whole little-endian words (kpageflags, kpagecount: see
/// [`PageFlags`](crate::model::pages::PageFlags) for what the flags words mean).
fn word(bytes: &[u8], k: usize) -> Option<u64> {
    let b = bytes.get(k * 8..k * 8 + 8)?;
    Some(u64::from_le_bytes(b.try_into().ok()?))
}

/// Reads `len` bytes of frame `first` on into `out` (fewer at the file's end).
fn read_run(f: &File, path: &Path, first: u64, len: usize, out: &mut Vec<u8>) -> Result<()> {
    out.resize(len, 0);
    let done = super::read_at(f, out, first * 8).map_err(|e| Error::io(path, e))?;
    out.truncate(done - done % 8);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Files laid out as the kernel's: frame N's word at byte 8 * N.
    fn files(n: u64) -> (tempfile::TempDir, KpageFiles) {
        let dir = tempfile::tempdir().unwrap();
        let files = KpageFiles::under(dir.path());
        let words = |f: &dyn Fn(u64) -> u64| -> Vec<u8> {
            (0..n).flat_map(|i| f(i).to_le_bytes()).collect()
        };
        std::fs::write(&files.count, words(&|i| i % 7)).unwrap();
        std::fs::write(&files.flags, words(&|i| i << 1)).unwrap();
        (dir, files)
    }

    #[test]
    fn frames_near_and_far_are_read_in_runs_each_to_its_own_word() {
        let (_dir, f) = files(300_000);
        // Close together, apart by more than GAP, past a run's length,
        // and past the end of the files.
        let pfns = vec![3, 4, 60, 200, 140_000, 299_999, 400_000];
        let frames = read(&f, pfns.clone(), true, &[]).unwrap().0;
        assert_eq!(frames.len(), pfns.len());
        for &p in &pfns[..6] {
            let got = frames.get(p).unwrap();
            assert_eq!((got.mapcount, got.flags.0), (p % 7, p << 1), "frame {p}");
        }
        assert_eq!(frames.get(400_000).unwrap().mapcount, 0, "no frame there: no mappings");
        assert!(frames.get(5).is_none(), "only the frames asked for");
        assert!(read(&f, Vec::new(), true, &[]).unwrap().0.is_empty());
        // Enough frames for several threads: each still lands on its own word.
        let many: Vec<u64> = (0..299_000).step_by(3).collect();
        let frames = read(&f, many.clone(), true, &[]).unwrap().0;
        assert!(many.iter().all(|&p| frames.get(p).unwrap().mapcount == p % 7));
        let flags_only = read(&f, vec![60], false, &[]).unwrap().0;
        assert_eq!(
            (flags_only.get(60).unwrap().mapcount, flags_only.get(60).unwrap().flags.0),
            (0, 120)
        );
    }

    #[test]
    fn a_huge_page_is_read_as_one_flags_word_and_its_counts_page_by_page() {
        let (_dir, f) = files(4096);
        // Two huge pages that touch (two folios), one told twice (two
        // processes mapping it), and frames outside them.
        let huge = [(1024, 512), (1536, 512), (1024, 512)];
        let mut pfns: Vec<u64> = (1024..2048).collect();
        pfns.extend([5, 3000]);
        pfns.sort_unstable();
        assert_eq!(heads(&pfns, &huge), vec![5, 1024, 1536, 3000]);
        let (frames, cost) = read(&f, pfns.clone(), false, &huge).unwrap();
        assert_eq!(cost.kpageflags_entries, 4, "one word a huge page: {cost:?}");
        for &p in &pfns {
            let head = if (1024..1536).contains(&p) {
                1024
            } else if (1536..2048).contains(&p) {
                1536
            } else {
                p
            };
            assert_eq!(frames.get(p).unwrap().flags.0, head << 1, "frame {p}");
        }
        let (frames, cost) = read(&f, pfns.clone(), true, &huge).unwrap();
        assert!(cost.kpagecount_entries >= pfns.len() as u64 - 2, "{cost:?}");
        assert!(pfns.iter().all(|&p| frames.get(p).unwrap().mapcount == p % 7));
    }
}
