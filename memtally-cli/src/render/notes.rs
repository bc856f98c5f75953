//! The wording of every note, once: the table, JSON, CSV and the
//! exporter print a note as [`word`] says it. The library hands notes out
//! as data ([`Note`]); a sentence is the front end's choice.

use memtally_core::model::{Note, Side, Withheld};
use serde::Serialize;

use crate::render::units::{human, plural};

/// Every note of `notes`, worded.
pub fn words(notes: &[Note]) -> Vec<String> {
    notes.iter().map(word).collect()
}

/// What memtally's privileges leave out of other users' processes, and
/// what gives it (docs/privileges.md): one clause ("privileges leave out
/// ..." for the caller to say whose), or None when nothing is left out. `serve` and `export` print it at start, `top` in its
/// restricted note.
pub fn withheld(list: &[Withheld]) -> Option<String> {
    let parts: Vec<&str> = list
        .iter()
        .map(|w| match w {
            Withheld::Detail => "PSS, USS, swap, dirty and per-mapping figures (CAP_SYS_PTRACE or CAP_PERFMON gives them)",
            Withheld::Gpu => "GPU memory (CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH)",
            Withheld::PageFrames => "page frame numbers (CAP_SYS_ADMIN and CAP_DAC_READ_SEARCH)",
        })
        .collect();
    (!parts.is_empty())
        .then(|| format!("privileges leave out of other users' processes: {}", parts.join("; ")))
}

/// One note as a sentence.
pub fn word(note: &Note) -> String {
    match note {
        Note::Denied { count, hint } => format!(
            "{} could not be read (permission denied) and {} not in these figures; {hint}.",
            plural(*count, "selected process", "selected processes"),
            if *count == 1 { "is" } else { "are" }
        ),
        Note::Unreadable { count, first } => format!(
            "{} could not be read and {} not in these figures (first: {first})",
            plural(*count, "selected process", "selected processes"),
            if *count == 1 { "is" } else { "are" }
        ),
        Note::Exited { count } => {
            format!("{} exited while being read", plural(*count, "selected process", "selected processes"))
        }
        Note::RecordedIncomplete { pid, why } => {
            format!("pid {pid} was recorded incomplete ({why}): its figures may be short of the whole")
        }
        Note::RecordingCutShort { why } => format!(
            "the recording is incomplete ({why}): processes its capture selected are missing from these figures"
        ),
        Note::LargeFolioAverage { bytes } => format!(
            "{} of the exclusive figures are pages of large folios, whose map count this kernel may give as the folio's average (CONFIG_NO_PAGE_MAPCOUNT, or a kernel whose configuration memtally could not read in /proc/config.gz or /boot): a partly shared large folio can be counted as the group's when it is not, or not when it is.",
            human(*bytes)
        ),
        Note::KsmAndZeroPages { ksm, zero } => {
            let mut parts = Vec::new();
            if *ksm > 0 {
                parts.push(format!("{} of KSM pages are in the exclusive figures (a KSM page joins processes that share nothing else; it is a row's only when every process mapping it is in the row)", human(*ksm)));
            }
            if *zero > 0 {
                parts.push(format!("{} of zero-page mappings are left out (the zero page is no one's; RSS leaves it out too)", human(*zero)));
            }
            format!("{}.", parts.join("; "))
        }
        Note::PagesChanged { bytes } => format!(
            "{} of pages changed while being read (their map count fell below the processes' own mappings of them): left out of the exclusive figures; run again for a steadier picture.",
            human(*bytes)
        ),
        Note::PagesUnread { count, first } => format!(
            "the pages of {} could not be read (first: {first}): rows holding them show no exclusive figure (-).",
            plural(*count, "process", "processes")
        ),
        Note::PageFlagsHidden { why } => format!(
            "only the page states any reader may know are shown (present, swapped, file, huge, zero page): active/inactive LRU, referenced, KSM, swap cache, unevictable, locked, dirty and writeback come from /proc/kpageflags, which needs root (CAP_SYS_ADMIN) ({why}); run memtally as root (sudo) for them."
        ),
        Note::SharedTooWidely { frames } => format!(
            "{} mapped by more than 512 of the groups are left out of the pairs (a page nearly everyone maps says nothing of who shares with whom).",
            plural(*frames as usize, "page", "pages")
        ),
        Note::SwapAgainstSelection => "swap slots are counted as a row's when no other selected process holds them: processes outside the selection are not read, and one of them may hold some too (select every process for the exact figure).".into(),
        Note::MapsOnly { pid } => format!(
            "pid {pid}: smaps could not be read, only maps: virtual sizes are known, resident and dirty are not (shown as -). Run as the process's user, as root, or with CAP_SYS_PTRACE for the rest."
        ),
        Note::NoPssDirty => "this kernel gives no Pss_Dirty (Linux 6.0 and later do): PRIV DIRTY is each process's private dirty pages only; dirty pages shared with other processes (after fork, shared memory) are left out rather than counted again in every process that maps them.".into(),
        Note::PssShmem { bytes } => format!(
            "{} of the PSS is tmpfs / shared memory (Pss_Shmem: /dev/shm, memfd, SysV, shared anonymous), also in USS where one process maps it: a process's exit does not free it while the file or segment exists. memtally show PID gives each process's shmem part.",
            human(*bytes)
        ),
        Note::OthersMemory { count } => format!(
            "{} of other users could not be read (macOS gives a process's memory to its own user and root alone): listed without figures; sudo memtally reads them.",
            plural(*count, "process", "processes"),
        ),
        Note::Restricted { count, hint, withheld: w } => format!(
            "{} could not be read in detail (permission denied: other users' or protected processes): they show RSS from status only, no PSS/USS/dirty, and are not in the PSS totals; {hint}.{}",
            plural(*count, "process", "processes"),
            withheld(w).map(|w| format!(" memtally's {w}.")).unwrap_or_default(),
        ),
        Note::ReadStopped { pid, regions } => format!(
            "the read of pid {pid} was stopped after {regions} regions: the figures cover only those"
        ),
        Note::SubtreeRows => "--by tree: each row adds up the process and all its descendants (PROCS of them); the total counts every process once.".into(),
        Note::CgroupsOutsideNamespace { rows } => format!(
            "{rows} {} outside this cgroup namespace, named as seen from inside it (/../…) and without a charge: give the host's cgroup tree with --cgroup-root.",
            if *rows == 1 { "cgroup lies" } else { "cgroups lie" }
        ),
        Note::RowsWithoutPss => {
            "* this row's PSS/USS leaves out processes that could not be read in detail.".into()
        }
        Note::NoSuchProcess { pids } => format!(
            "no such process: {} (never there, or exited before the scan).",
            list(pids)
        ),
        Note::ExitedDuringScan { count } => format!(
            "{} exited during the scan and {} skipped.",
            plural(*count, "process", "processes"),
            if *count == 1 { "was" } else { "were" }
        ),
        Note::Failed { pid, why } => format!("pid {pid}: {why}"),
        Note::NvidiaFailed { why } => why.clone(),
        Note::NvidiaWithoutFigure { count, why } => format!(
            "nvidia-smi lists {} without a used-memory figure ({why}): unknown, not counted",
            plural(*count, "process", "processes")
        ),
        Note::NvidiaUnknown { pids } => format!(
            "nvidia-smi lists processes not seen here (another PID namespace?): {}",
            list(pids)
        ),
        Note::GpuRestricted { count } => format!(
            "the open files of {} could not be read (permission denied; needs the same user, root, or CAP_SYS_PTRACE): their GPU memory is left out",
            plural(*count, "process", "processes")
        ),
        Note::NotAnFdinfo { path, message } => format!("{}: {message}; not counted", path.display()),
        Note::FdinfoProblem { path, problem } => format!("{}: {problem}", path.display()),
        Note::NoFdRecord { path, record } => format!(
            "{}: no record of open files (fd/ or {record}); recorded before GPU support? GPU fds not counted",
            path.display(),
        ),
        Note::NoFdRecords { count, first, record } => format!(
            "{count} processes have no record of open files (fd/ or {record}; the first: {}); recorded before GPU support? GPU fds not counted",
            first.display(),
        ),
        Note::TotalsDisagree { side, who, figure, stored, summed } => format!(
            "{}: {who}: the snapshot's totals disagree with its regions ({figure} {} stored, {} in the regions): the regions' sums are used",
            side_name(*side),
            figure_or_none(*stored),
            figure_or_none(*summed),
        ),
        Note::TotalDisagrees { side } => format!(
            "{}: its stored total disagrees with the sum of its processes: the sum is used",
            side_name(*side)
        ),
        Note::ExitedDuringInterval { pid, comm } => format!(
            "pid {pid} ({comm}) exited (or ran a new program) during the interval: it has no working set to report"
        ),
        Note::TouchedHugePages { bytes } => format!(
            "{} is in transparent huge pages, whose one referenced bit covers the whole huge page: a byte touched in one counts all of it (2 MiB) as touched",
            human(*bytes)
        ),
        Note::ExclusiveMissing { side } => format!(
            "exclusive figures: not in the {} snapshot (taken without --exact), so they are not compared",
            match side {
                Side::First => "earlier",
                Side::Second => "later",
            }
        ),
        Note::WorkingSetMissing { side } => format!(
            "working-set figures (touched, working_set, cold): not in the {} snapshot (taken without --wss), so their changes are unknown",
            match side {
                Side::First => "earlier",
                Side::Second => "later",
            }
        ),
        Note::WorkingSetSpread { bytes, regions } => format!(
            "{} hold dirty and clean pages both, and smaps does not say which of them were touched: WORKING SET counts the fewest clean touched pages there can be, and may be up to {} more",
            plural(*regions, "mapping", "mappings"),
            human(*bytes)
        ),
    }
}

fn list(pids: &[u32]) -> String {
    pids.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
}

fn side_name(side: Side) -> &'static str {
    match side {
        Side::First => "the first snapshot",
        Side::Second => "the second snapshot",
    }
}

fn figure_or_none(v: Option<u64>) -> String {
    v.map_or_else(|| "none".to_string(), |v| v.to_string())
}

/// A library value serialized as it is, then its notes worded, as the
/// last key: for values whose own `notes` the library leaves unserialized.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WithNotes<'a, T: Serialize> {
    #[serde(flatten)]
    pub value: &'a T,
    pub notes: Vec<String>,
}

impl<'a, T: Serialize> WithNotes<'a, T> {
    /// `value` with `notes` worded.
    pub fn new(value: &'a T, notes: &[Note]) -> WithNotes<'a, T> {
        WithNotes { value, notes: words(notes) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_agree_with_their_nouns() {
        assert_eq!(
            word(&Note::ExitedDuringScan { count: 1 }),
            "1 process exited during the scan and was skipped."
        );
        assert_eq!(
            word(&Note::GpuRestricted { count: 2 }),
            "the open files of 2 processes could not be read (permission denied; needs the same user, root, or CAP_SYS_PTRACE): their GPU memory is left out"
        );
    }

    #[test]
    fn withheld_figures_name_what_gives_them() {
        assert_eq!(withheld(&[]), None);
        let w = withheld(&[Withheld::Gpu]).unwrap();
        assert!(w.ends_with("GPU memory (CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH)"), "{w}");
        let note = word(&Note::Restricted {
            count: 3,
            hint: "h".into(),
            withheld: vec![Withheld::Detail, Withheld::PageFrames],
        });
        assert!(note.contains("; h. memtally's privileges leave out"), "{note}");
        assert!(note.contains("CAP_SYS_PTRACE or CAP_PERFMON gives them); page frame"), "{note}");
    }

    #[test]
    fn a_disagreement_names_the_side_and_both_figures() {
        let n = Note::TotalsDisagree {
            side: Side::Second,
            who: "pid 7".into(),
            figure: "rss".into(),
            stored: Some(4096),
            summed: None,
        };
        assert_eq!(word(&n), "the second snapshot: pid 7: the snapshot's totals disagree with its regions (rss 4096 stored, none in the regions): the regions' sums are used");
    }

    #[test]
    fn notes_go_last_beside_the_value_s_own_keys() {
        #[derive(Serialize)]
        struct V {
            a: u32,
        }
        let json =
            serde_json::to_string(&WithNotes::new(&V { a: 1 }, &[Note::NoPssDirty])).unwrap();
        assert!(json.starts_with(r#"{"a":1,"notes":["this kernel gives no Pss_Dirty"#), "{json}");
    }
}
