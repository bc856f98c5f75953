//! `memtally snapshot`: everything show and top know about a selection,
//! at one moment, into one JSON file for `diff` and `plot`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use clap::Args;

use crate::analyze::snapshot::{linux_snapshot, Moment};
use crate::cli::progress::with_progress;
use crate::cli::select::{select, SelectArgs};
use crate::error::{Error, Result};
use crate::model::snapshot::Snapshot;
use crate::model::Process;
use crate::source::meminfo::MemInfo;
use crate::source::scan::Needs;
use crate::source::ProcRoot;

#[derive(Debug, Args)]
pub struct SnapshotArgs {
    /// One process; or a selection (--tree, --pid, --name, --user, --cgroup); every process when none.
    pub pid: Option<u32>,

    #[command(flatten)]
    pub select: SelectArgs,

    /// Write the snapshot here (`-` or absent: standard output).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub fn run(root: &ProcRoot, args: &SnapshotArgs, out: &mut dyn Write) -> Result<()> {
    let mut sel = args.select.selection()?;
    sel.pids.extend(args.pid);
    let snapshot = take(root, &sel)?;
    let json = serde_json::to_vec(&snapshot).map_err(|e| Error::Usage(e.to_string()))?;
    match args.output.as_deref() {
        None => out
            .write_all(&json)
            .and_then(|()| out.write_all(b"\n"))
            .map_err(|e| Error::io("standard output", e)),
        Some(p) if p == Path::new("-") => out
            .write_all(&json)
            .and_then(|()| out.write_all(b"\n"))
            .map_err(|e| Error::io("standard output", e)),
        Some(p) => write_atomically(p, &json),
    }
}

/// Reads the selection in full and builds the snapshot.
pub fn take(root: &ProcRoot, sel: &crate::analyze::select::Selection) -> Result<Snapshot> {
    let selected = select(root, sel, Needs::default())?;
    let infos = selected.infos;
    let mut notes = Vec::new();
    let (processes, denied, vanished, first_error) =
        with_progress(infos.len(), "reading processes", |done| {
            let mut processes: Vec<Process> = Vec::new();
            let (mut denied, mut vanished) = (0usize, selected.vanished);
            let mut first_error = None;
            for info in &infos {
                match root.process(info.pid) {
                    Ok(p) => processes.push(p),
                    Err(Error::NoSuchProcess { .. } | Error::Exited { .. }) => vanished += 1,
                    Err(Error::KernelThread { .. }) => {}
                    Err(e) => {
                        denied += 1;
                        first_error.get_or_insert(e);
                    }
                }
                done.fetch_add(1, Ordering::Relaxed);
            }
            (processes, denied, vanished, first_error)
        });
    if processes.is_empty() {
        // Nothing to show: the reason for the first failure is the answer
        // (permission denied says who and what would fix it).
        return Err(first_error.unwrap_or_else(|| {
            Error::NotFound(format!("no selected process could be read ({vanished} exited)"))
        }));
    }
    if denied > 0 {
        notes.push(format!(
            "{denied} selected processes could not be read (permission denied) and are not in this snapshot"
        ));
    }
    if vanished > 0 {
        notes.push(format!("{vanished} processes exited while the snapshot was taken"));
    }
    Ok(linux_snapshot(&processes, moment(root), notes))
}

/// When and where: now, the host and kernel the /proc tree describes.
pub fn moment(root: &ProcRoot) -> Moment {
    let now = std::time::SystemTime::now();
    let read = |p: &str| {
        std::fs::read_to_string(root.path().join(p))
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    };
    Moment {
        time: Some(humantime::format_rfc3339_millis(now).to_string()),
        unix_time: now.duration_since(std::time::UNIX_EPOCH).ok().map(|d| d.as_secs_f64()),
        host: read("sys/kernel/hostname"),
        kernel: read("sys/kernel/osrelease"),
        proc_root: Some(root.path().display().to_string()),
        machine: read("meminfo").map(|t| MemInfo::parse(&t).fields),
    }
}

/// Writes `bytes` to `path` through a temporary file and a rename, so a
/// reader never sees half a file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.memtally-{}.tmp", std::process::id()));
    std::fs::write(&tmp, bytes).map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io(path, e)
    })
}
