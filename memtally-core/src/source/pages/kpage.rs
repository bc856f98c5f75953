//! Reads `/proc/kpagecount` and `/proc/kpageflags` for a set of frames, in
//! runs: frames close together (a huge page's 512, a file's pages loaded
//! together) are read with one `pread` each file, through small gaps,
//! rather than one read per frame; with many frames the runs join into a
//! sequential read of the stretch they cover.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::model::pages::{FrameInfo, Frames};
use crate::source::parse::kpageflags;

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
pub(crate) fn read(files: &KpageFiles, pfns: Vec<u64>, counts: bool) -> Result<Frames> {
    let open = |p: &Path| File::open(p).map_err(|e| Error::io(p, e));
    let (count, flags) = (counts.then(|| open(&files.count)).transpose()?, open(&files.flags)?);
    let most = pfns.len().div_ceil(PER_THREAD).max(1);
    let threads = crate::source::scan::default_threads().clamp(1, most);
    let chunk = pfns.len().div_ceil(threads).max(1);
    let parts: Vec<Result<Vec<FrameInfo>>> = std::thread::scope(|s| {
        let handles: Vec<_> = pfns
            .chunks(chunk)
            .map(|part| s.spawn(|| read_part(files, count.as_ref(), &flags, part)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(Error::Usage("a frame reader failed".into()))))
            .collect()
    });
    let mut info = Vec::with_capacity(pfns.len());
    for part in parts {
        info.extend(part?);
    }
    Ok(Frames::new(pfns, info))
}

/// Frames per thread below which one thread reads them all.
const PER_THREAD: usize = 32 * 1024;

/// Reads the frames of `pfns` (sorted) in runs, in order.
fn read_part(
    files: &KpageFiles,
    count: Option<&File>,
    flags: &File,
    pfns: &[u64],
) -> Result<Vec<FrameInfo>> {
    let mut info = Vec::with_capacity(pfns.len());
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
        let counts = kpageflags::parse_counts(&words).map_err(|e| bad(&files.count, e))?;
        let bits = kpageflags::parse(&bits).map_err(|e| bad(&files.flags, e))?;
        for &pfn in &pfns[i..j] {
            let k = (pfn - first) as usize;
            // A frame past the end of either file (memory hot-removed
            // while read) is no frame: a count of 0.
            info.push(FrameInfo {
                mapcount: counts.get(k).copied().unwrap_or(0),
                flags: bits.get(k).copied().unwrap_or_default(),
            });
        }
        i = j;
    }
    Ok(info)
}

fn bad(path: &Path, e: crate::source::parse::ParseError) -> Error {
    Error::Parse { path: path.into(), message: e.to_string() }
}

/// Reads `len` bytes of frame `first` on into `out` (fewer at the file's end).
fn read_run(f: &File, path: &Path, first: u64, len: usize, out: &mut Vec<u8>) -> Result<()> {
    out.resize(len, 0);
    let mut done = 0;
    while done < len {
        match f.read_at(&mut out[done..], first * 8 + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(path, e)),
        }
    }
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
        let frames = read(&f, pfns.clone(), true).unwrap();
        assert_eq!(frames.len(), pfns.len());
        for &p in &pfns[..6] {
            let got = frames.get(p).unwrap();
            assert_eq!((got.mapcount, got.flags.0), (p % 7, p << 1), "frame {p}");
        }
        assert_eq!(frames.get(400_000).unwrap().mapcount, 0, "no frame there: no mappings");
        assert!(frames.get(5).is_none(), "only the frames asked for");
        assert!(read(&f, Vec::new(), true).unwrap().is_empty());
        // Enough frames for several threads: each still lands on its own word.
        let many: Vec<u64> = (0..299_000).step_by(3).collect();
        let frames = read(&f, many.clone(), true).unwrap();
        assert!(many.iter().all(|&p| frames.get(p).unwrap().mapcount == p % 7));
        let flags_only = read(&f, vec![60], false).unwrap();
        assert_eq!(
            (flags_only.get(60).unwrap().mapcount, flags_only.get(60).unwrap().flags.0),
            (0, 120)
        );
    }
}
