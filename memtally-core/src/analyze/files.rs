//! The `files` view: every mapped file (and every named kind of memory,
//! as librank and `smem -m` list them: `[heap]`, `[stack]`, `[anon:NAME]`,
//! unnamed anonymous memory as `[anonymous]`) with its figures summed over
//! the processes that map it, and which processes those are.
//!
//! Built in two steps that keep memory bounded by the distinct files times
//! the processes mapping each: a `ProcessFiles` folds one process's
//! regions into one sum per file as they stream past (no region is kept),
//! then `FileTally::add` merges that into the machine-wide rows.

use std::collections::HashMap;

use crate::model::{Backing, Figure, Flow, Note, Region, RegionSink, Sizes};

/// What the rows sort by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileSort {
    /// A figure that adds up across processes, largest first; a row that
    /// lacks it sorts below every row that has it.
    Figure(Figure),
    /// How many processes map the file, most first.
    Processes,
}

crate::model::named::named!(FileSort = [
    FileSort::Figure(Figure::Pss),
    FileSort::Figure(Figure::Uss),
    FileSort::Figure(Figure::SwapPss),
    FileSort::Figure(Figure::PssDirty),
    FileSort::Figure(Figure::PrivateDirty),
    FileSort::Figure(Figure::PrivateClean),
    FileSort::Processes,
] {
    Processes => "processes", "how many processes map the file";
});

/// The key of a region in this view: its path or kind (`[heap]`), and
/// `[anonymous]` for anonymous memory without a name (as `show --by path`).
pub(crate) fn file_key(region: &Region) -> &str {
    region.path.as_deref().unwrap_or("[anonymous]")
}

/// Whether a region is a file's: a regular file, a shared memory object
/// (`/dev/shm`, `memfd:`, SysV), a device node or a hugetlbfs file, by
/// its name. Anonymous and kernel memory are not.
pub fn is_file(region: &Region) -> bool {
    region.path.is_some()
        && matches!(
            region.backing,
            Backing::File | Backing::SharedMemory | Backing::Device | Backing::HugePages
        )
        && !region.path.as_deref().is_some_and(|p| p.starts_with('['))
}

/// One process's mappings folded into one sum per file, as they are read.
#[derive(Debug, Default)]
pub(crate) struct ProcessFiles {
    /// Only file mappings ([`is_file`]); otherwise every mapping.
    files_only: bool,
    index: HashMap<String, usize>,
    sums: Vec<OneFile>,
}

/// One process's mappings of one file.
#[derive(Debug)]
struct OneFile {
    key: String,
    backing: Backing,
    regions: usize,
    sizes: Sizes,
}

impl ProcessFiles {
    /// A fold that keeps every mapping, or only the files' (`files_only`).
    pub fn new(files_only: bool) -> ProcessFiles {
        ProcessFiles { files_only, ..ProcessFiles::default() }
    }

    /// Adds one region to its file's sum.
    pub fn add(&mut self, region: &Region) {
        if self.files_only && !is_file(region) {
            return;
        }
        let key = file_key(region);
        let i = match self.index.get(key) {
            Some(&i) => i,
            None => {
                self.sums.push(OneFile {
                    key: key.to_string(),
                    backing: region.backing,
                    regions: 0,
                    sizes: Sizes::default(),
                });
                self.index.insert(key.to_string(), self.sums.len() - 1);
                self.sums.len() - 1
            }
        };
        let f = &mut self.sums[i];
        f.regions += 1;
        f.sizes.add_region(region);
    }
}

impl RegionSink for ProcessFiles {
    fn region(&mut self, _line: usize, region: &Region) -> Flow {
        self.add(region);
        Flow::Continue
    }

    fn restart(&mut self) -> bool {
        *self = ProcessFiles::new(self.files_only);
        true
    }
}

/// One process's part in a file's row: what it maps of the file. Its own
/// figures, so RSS is there too (one process's resident pages of it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapper {
    /// The process.
    pub pid: u32,
    /// How many of its mappings are of the file.
    pub regions: usize,
    /// Its PSS of the file.
    pub pss: Option<u64>,
    /// Its resident bytes of the file (each shared page in full).
    pub rss: Option<u64>,
    /// Its private bytes of the file (Private_Clean + Private_Dirty).
    pub uss: Option<u64>,
    /// Its SwapPss of the file.
    pub swap_pss: Option<u64>,
}

/// One file and the processes that map it.
#[derive(Debug, Clone)]
pub struct FileRow {
    /// Its path, or the kind of memory (`[heap]`, `[anonymous]`).
    pub key: String,
    /// What its pages come from (of its first mapping seen).
    pub backing: Backing,
    /// How many mappings of it, in every process.
    pub regions: usize,
    /// Its figures summed over the processes that map it: only the ones
    /// that add up across processes where more than one does
    /// (`model::summable`: no RSS then).
    pub sizes: Sizes,
    /// The processes that map it, most PSS first.
    pub mappers: Vec<Mapper>,
}

/// Every file's row, sorted and cut, with the totals of all.
#[derive(Debug, Clone)]
pub struct FilesReport {
    /// The rows, sorted and cut to the first `top`.
    pub rows: Vec<FileRow>,
    /// Rows left out by `min` and `top` (their figures are in `totals`).
    pub omitted: usize,
    /// How many distinct files (or kinds) in all.
    pub files: usize,
    /// The sum over every file and process (summable figures only where
    /// more than one process was read).
    pub totals: Sizes,
    /// How many processes were added.
    pub processes: usize,
    /// The sort, as asked.
    pub sort: Vec<FileSort>,
}

/// The rows being built, one process at a time.
#[derive(Debug, Default)]
pub(crate) struct FileTally {
    index: HashMap<String, usize>,
    rows: Vec<FileRow>,
    totals: Sizes,
    processes: usize,
}

impl FileTally {
    /// Adds one process's sums (its fold is consumed: nothing per region stays).
    pub fn add(&mut self, pid: u32, files: ProcessFiles) {
        self.processes += 1;
        for f in files.sums {
            self.totals.add(&f.sizes);
            let i = match self.index.get(&f.key) {
                Some(&i) => i,
                None => {
                    self.rows.push(FileRow {
                        key: f.key.clone(),
                        backing: f.backing,
                        regions: 0,
                        sizes: Sizes::default(),
                        mappers: Vec::new(),
                    });
                    self.index.insert(f.key, self.rows.len() - 1);
                    self.rows.len() - 1
                }
            };
            let row = &mut self.rows[i];
            row.regions += f.regions;
            row.sizes.add(&f.sizes);
            row.mappers.push(Mapper {
                pid,
                regions: f.regions,
                pss: f.sizes.pss,
                rss: f.sizes.rss,
                uss: f.sizes.uss(),
                swap_pss: f.sizes.swap_pss,
            });
        }
    }

    /// The view: rows sorted by `sort` (smallest first with `reverse`),
    /// those below `min` in the first sort figure left out, the first
    /// `top` kept; the totals cover every row.
    pub fn finish(
        self,
        sort: &[FileSort],
        min: Option<u64>,
        top: Option<usize>,
        reverse: bool,
    ) -> FilesReport {
        let files = self.rows.len();
        let mut rows: Vec<FileRow> = self
            .rows
            .into_iter()
            .map(|mut r| {
                r.sizes = r.sizes.over_processes(r.mappers.len());
                r.mappers.sort_by(|a, b| b.pss.cmp(&a.pss).then(a.pid.cmp(&b.pid)));
                r
            })
            .collect();
        rows.sort_by(|a, b| compare(a, b, sort).then_with(|| a.key.cmp(&b.key)));
        if reverse {
            rows.reverse();
        }
        let before = rows.len();
        if let Some(min) = min {
            let figure = sort
                .iter()
                .find_map(|s| match s {
                    FileSort::Figure(f) => Some(*f),
                    FileSort::Processes => None,
                })
                .unwrap_or(Figure::Pss);
            rows.retain(|r| r.sizes.figure(figure).is_some_and(|v| v >= min));
        }
        let mut omitted = before - rows.len();
        omitted += crate::analyze::group::keep_first(&mut rows, top);
        FilesReport {
            rows,
            omitted,
            files,
            totals: self.totals.over_processes(self.processes),
            processes: self.processes,
            sort: sort.to_vec(),
        }
    }
}

/// `a` before `b` in the sort: largest first, a missing figure last.
fn compare(a: &FileRow, b: &FileRow, sort: &[FileSort]) -> std::cmp::Ordering {
    for s in sort {
        let o = match s {
            FileSort::Figure(f) => b.sizes.figure(*f).cmp(&a.sizes.figure(*f)),
            FileSort::Processes => b.mappers.len().cmp(&a.mappers.len()),
        };
        if o.is_ne() {
            return o;
        }
    }
    std::cmp::Ordering::Equal
}

/// The view, with who each PID is and what it leaves out.
#[derive(Debug)]
#[non_exhaustive]
pub struct Files {
    /// The rows and totals.
    pub report: FilesReport,
    /// Each process read's command line (`[comm]` without one), by PID.
    pub commands: HashMap<u32, String>,
    /// What the figures leave out.
    pub notes: Vec<Note>,
    /// Whether some selected process is not in the figures.
    pub partial: bool,
    /// Only file mappings were counted (`usecase::files::FilesOptions::files_only`).
    pub files_only: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region(path: Option<&str>, backing: Backing, pss: u64, rss: u64, private: u64) -> Region {
        let mut r = Region::new(backing);
        r.path = path.map(String::from);
        r.sizes.pss = Some(pss);
        r.sizes.rss = Some(rss);
        r.sizes.private_clean = Some(private);
        r.sizes.private_dirty = Some(0);
        r.sizes.swap_pss = Some(0);
        r
    }

    #[test]
    fn a_file_mapped_by_two_processes_sums_their_pss_and_keeps_rss_per_process() {
        let lib = Some("/usr/lib/libc.so.6");
        let mut a = ProcessFiles::new(false);
        a.add(&region(lib, Backing::File, 4096, 8192, 0));
        a.add(&region(lib, Backing::File, 4096, 8192, 4096));
        a.add(&region(Some("[heap]"), Backing::Anonymous, 12288, 12288, 12288));
        let mut b = ProcessFiles::new(false);
        b.add(&region(lib, Backing::File, 8192, 16384, 0));
        let mut tally = FileTally::default();
        tally.add(1, a);
        tally.add(2, b);
        let report = tally.finish(&[FileSort::Figure(Figure::Pss)], None, None, false);
        assert_eq!(report.files, 2);
        let libc = &report.rows[0];
        assert_eq!(libc.key, "/usr/lib/libc.so.6");
        assert_eq!(libc.sizes.pss, Some(16384));
        assert_eq!(libc.sizes.uss(), Some(4096));
        assert_eq!(libc.sizes.rss, None, "RSS counts a shared page once per process");
        assert_eq!(libc.regions, 3);
        let pids: Vec<(u32, Option<u64>)> = libc.mappers.iter().map(|m| (m.pid, m.rss)).collect();
        assert_eq!(pids, [(1, Some(16384)), (2, Some(16384))]);
        let heap = &report.rows[1];
        assert_eq!((heap.key.as_str(), heap.sizes.rss), ("[heap]", Some(12288)));
        assert_eq!(report.totals.pss, Some(16384 + 12288));
    }

    #[test]
    fn files_only_leaves_out_anonymous_and_kernel_memory_and_min_and_top_cut_rows() {
        let mut a = ProcessFiles::new(true);
        a.add(&region(None, Backing::Anonymous, 4096, 4096, 4096));
        a.add(&region(Some("[vdso]"), Backing::Kernel, 0, 4096, 0));
        a.add(&region(Some("/dev/shm/x"), Backing::SharedMemory, 8192, 8192, 8192));
        a.add(&region(Some("/bin/sh"), Backing::File, 4096, 4096, 0));
        a.add(&region(Some("/lib/small"), Backing::File, 1024, 4096, 0));
        let mut tally = FileTally::default();
        tally.add(7, a);
        let sort = [FileSort::Figure(Figure::Pss)];
        let report = tally.finish(&sort, Some(2048), Some(1), false);
        let keys: Vec<&str> = report.rows.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, ["/dev/shm/x"]);
        assert_eq!((report.files, report.omitted), (3, 2));
    }
}
