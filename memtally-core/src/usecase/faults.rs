//! `faults`: the page faults of a selection over a time, sampled with
//! their call stacks, by category (see `source::faults`). Linux only:
//! elsewhere a usage error says so.

use crate::analyze::fault_report::FaultReport;
use crate::analyze::select::Selection;
use crate::error::{Error, LiveOnly, Result, UseCase};
use crate::model::Needs;
use crate::source::ProcRoot;
use crate::usecase::select::{require_selection, select};

pub use crate::model::faults::{FaultOptions, Unwind};

/// Records the page faults of the selected (live) processes, and of the
/// threads and children they start meanwhile, until `opts.duration`
/// has passed, `stop()` answers true, or every selected process ended.
/// `stop` is first asked once the faults are being counted.
pub fn faults(
    root: &ProcRoot,
    sel: &Selection,
    opts: &FaultOptions,
    stop: &dyn Fn() -> bool,
) -> Result<FaultReport> {
    require_selection(sel, UseCase::Faults)?;
    if !root.is_live() {
        return Err(Error::LiveOnly { root: root.path().to_path_buf(), what: LiveOnly::Faults });
    }
    let selected = select(root, sel, Needs::default())?;
    selected.require_any(root, sel)?;
    let pids: Vec<u32> = selected.infos.iter().map(|i| i.pid).collect();
    record(root, &pids, opts, stop)
}

/// A recording read back: the document `faults --format json` printed.
pub fn load(path: &std::path::Path) -> Result<FaultReport> {
    let io = |source| Error::Io { path: path.to_path_buf(), source };
    let file = crate::source::bounded::open_input(path).map_err(io)?;
    serde_json::from_reader(std::io::BufReader::new(file)).map_err(|e| Error::Parse {
        path: path.to_path_buf(),
        message: format!(
            "not a page-fault recording (the JSON document `memtally faults` prints): {e}"
        ),
    })
}

/// The recording a report page carries (`report --faults` embeds it):
/// `None` for a file that is no page, or a page without one.
pub fn from_page(path: &std::path::Path) -> Result<Option<FaultReport>> {
    use crate::source::parse::snapshot_html::{is_html, read_faults, ReadError};
    use std::io::BufRead;
    let io = |source| Error::Io { path: path.to_path_buf(), source };
    let file = crate::source::bounded::open_input(path).map_err(io)?;
    let mut r = std::io::BufReader::new(file);
    if !is_html(r.fill_buf().map_err(io)?) {
        return Ok(None);
    }
    read_faults(r).map_err(|e| match e {
        ReadError::Io(e) => io(e),
        ReadError::Parse(e) => Error::Parse { path: path.to_path_buf(), message: e.message },
    })
}

#[cfg(not(target_os = "linux"))]
fn record(_: &ProcRoot, _: &[u32], _: &FaultOptions, _: &dyn Fn() -> bool) -> Result<FaultReport> {
    Err(Error::LinuxOnly { what: "faults samples page faults with Linux's perf_event_open" })
}

/// The recording, categorised, summed and its frames named.
#[cfg(target_os = "linux")]
fn record(
    root: &ProcRoot,
    pids: &[u32],
    opts: &FaultOptions,
    stop: &dyn Fn() -> bool,
) -> Result<FaultReport> {
    use crate::analyze::categorize;
    use crate::analyze::fault_report::{BufferCut, FaultBytes};
    use crate::analyze::faults::{FaultTally, PlacedFault};

    let mut tally = FaultTally::default();
    let mut sink = |s: crate::model::faults::FaultSample<'_>| {
        tally.add(&PlacedFault {
            pid: s.pid,
            category: s.region.map(categorize),
            mapping: s.region.map_or("[unmapped]", |r| r.path.as_deref().unwrap_or("[anon]")),
            access: s.access,
            bytes: s.bytes,
            stack: s.stack,
        })
    };
    let mut rec = crate::source::faults::record(root, pids, opts, stop, &mut sink)?;
    let header = FaultReport {
        seconds: rec.seconds,
        sample_period: opts.period.max(1),
        page_size: rec.page_size,
        samples: rec.samples,
        lost: rec.lost,
        kernel_faults_seen: rec.kernel_faults_seen,
        buffer_cut: match rec.buffer_pages {
            (asked, pages) if pages < asked => {
                Some(BufferCut { asked_pages: asked as u64, pages: pages as u64 })
            }
            _ => None,
        },
        bytes: FaultBytes::default(),
        processes: Vec::new(),
        categories: Vec::new(),
    };
    let mut names = std::collections::HashMap::new();
    let commands: std::collections::HashMap<u32, String> =
        tally.pids().map(|pid| (pid, rec.command(pid))).collect();
    let name =
        |pid: u32, ip: u64| names.entry((pid, ip)).or_insert_with(|| rec.frames(pid, ip)).clone();
    let command = |pid: u32| commands.get(&pid).cloned().unwrap_or_default();
    Ok(tally.finish(opts.top, name, command, header))
}
