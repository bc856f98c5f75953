//! `files`: every mapped file across the selection (the machine, by
//! default), with its PSS, USS and swap PSS summed over the processes that
//! map it, and which processes those are (smem -m, Android's librank).
//!
//! Each process's smaps streams through a fold that keeps one sum per
//! file (`ProcessFiles`); no region is kept, so memory is bounded by the
//! distinct files times the processes mapping each, whatever the maps' sizes.

use std::collections::HashMap;

use crate::analyze::files::{FileSort, FileTally, Files, ProcessFiles};
use crate::analyze::select::Selection;
use crate::error::{Error, Result};
use crate::model::{Figure, Needs, Note, SizeSource};
use crate::source::{scan, ProcRoot, ReadPlan};
use crate::usecase::read::ReadProcesses;
use crate::usecase::select::select;
use crate::usecase::Progress;

/// What to show. Built from `default()` and the `with_*` setters.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct FilesOptions {
    /// Which processes to read (every one by default).
    pub select: Selection,
    /// Sort by these, largest first.
    pub sort: Vec<FileSort>,
    /// Keep the first N rows (totals still cover every file).
    pub top: Option<usize>,
    /// Leave out rows whose first sort figure is below this many bytes.
    pub min: Option<u64>,
    /// Smallest first.
    pub reverse: bool,
    /// Only file mappings: no anonymous memory (`[heap]`, `[anon:NAME]`,
    /// unnamed), no kernel pages (`[vdso]`).
    pub files_only: bool,
}

impl Default for FilesOptions {
    fn default() -> FilesOptions {
        FilesOptions {
            select: Selection::default(),
            sort: vec![FileSort::Figure(Figure::Pss)],
            top: Some(20),
            min: None,
            reverse: false,
            files_only: false,
        }
    }
}

setters!(FilesOptions {
    with_select: select: Selection,
    with_sort: sort: Vec<FileSort>,
    with_top: top: Option<usize>,
    with_min: min: Option<u64>,
    with_reverse: reverse: bool,
    with_files_only: files_only: bool,
});

/// One process's read: its files, or why there are none.
enum Outcome {
    Read(ProcessFiles),
    /// smaps refused, only maps read: no resident figures to add.
    MapsOnly,
    Failed(Error),
}

/// Reads every selected process's smaps and adds its files up.
pub fn files(root: &ProcRoot, opts: &FilesOptions, progress: &dyn Progress) -> Result<Files> {
    let selected = select(root, &opts.select, Needs { cmdline: true, ..Needs::default() })?;
    selected.require_any(root, &opts.select)?;
    progress.start("reading processes", selected.infos.len());
    let outcomes = scan::par_map(&selected.infos, scan::default_threads(), 1, |info| {
        let outcome = read_one(root, info.pid, opts.files_only);
        progress.step();
        outcome
    });
    progress.finish();
    let mut tally = FileTally::default();
    let mut read = ReadProcesses { vanished: selected.vanished, ..ReadProcesses::default() };
    let mut commands = HashMap::new();
    let mut maps_only = 0;
    for (info, outcome) in selected.infos.iter().zip(outcomes) {
        match outcome {
            Outcome::Read(files) => {
                tally.add(info.pid, files);
                commands.insert(info.pid, info.command());
            }
            Outcome::MapsOnly => maps_only += 1,
            Outcome::Failed(e) => read.missed(e),
        }
    }
    // Nothing read of a narrowed selection: the first reason is the error.
    let read = if commands.is_empty() && !opts.select.is_everything() {
        read.require_some()?
    } else {
        read
    };
    let mut notes = read.notes();
    if maps_only > 0 {
        notes.push(Note::Denied { count: maps_only, hint: crate::source::access::read_hint() });
    }
    notes.extend(
        commands
            .keys()
            .filter_map(|&pid| root.incomplete(pid).map(|why| (pid, why)))
            .map(|(pid, why)| Note::RecordedIncomplete { pid, why }),
    );
    if !selected.missing.is_empty() {
        notes.push(Note::NoSuchProcess { pids: selected.missing.clone() });
    }
    let partial = !read.failed.is_empty() || maps_only > 0;
    let report = tally.finish(&opts.sort, opts.min, opts.top, opts.reverse);
    Ok(Files { report, commands, notes, partial, files_only: opts.files_only })
}

/// One process's files, from its smaps alone (no rollup: this view adds
/// up mappings, and the rollup would walk the page tables a second time;
/// no helper threads: processes are read one after another); a process
/// that exec'd while being read is read once more, the first read's sums
/// dropped.
fn read_one(root: &ProcRoot, pid: u32, files_only: bool) -> Outcome {
    let mut files = ProcessFiles::new(files_only);
    let plan = ReadPlan::default().with_threads(false).with_rollup(false).with_retry(true);
    match root.process(pid, plan, &mut files) {
        Ok(p) if p.source == SizeSource::Maps => Outcome::MapsOnly,
        Ok(_) => Outcome::Read(files),
        Err(e) => Outcome::Failed(e),
    }
}
