//! The bodies of the cargo-fuzz targets (fuzz/fuzz_targets/*.rs include
//! this file), so that `fuzz_replay` runs the very same code over the
//! seeds and the crashers found so far in an ordinary test build, which
//! has overflow checks on: a sum that wraps panics there as it does under
//! `cargo fuzz run -a`.

use memtally_core::analyze::diff::{diff, DiffOptions, DiffSort};
use memtally_core::analyze::group::GroupSort;
use memtally_core::analyze::{categorize, show};
use memtally_core::model::{Figure, Sizes};
use memtally_core::source::parse;

/// smaps / maps text: the parser and every analysis over what it returns.
pub fn smaps(data: &[u8]) {
    let mut regions = Vec::new();
    let mut reader = parse::smaps::SmapsReader::new(data);
    while let Ok(Some(r)) = reader.next_region() {
        regions.push(r);
    }
    for r in &regions {
        let _ = categorize(r);
    }
    let sum = Sizes::total(&regions);
    let procs = vec![memtally_core::model::Process {
        pid: 1,
        comm: String::new(),
        cmdline: String::new(),
        source: memtally_core::model::SizeSource::Smaps,
        regions,
        rollup: None,
        streamed: None,
        footprint: None,
    }];
    for by in [show::ShowBy::Category, show::ShowBy::Path, show::ShowBy::Perms] {
        let rep = show::build(
            procs.clone(),
            by,
            &[GroupSort::Figure(Figure::Dirty), GroupSort::Figure(Figure::Rss)],
            Some(3),
        );
        assert_eq!(rep.totals.rss, sum.rss);
        let _ =
            memtally_core::analyze::snapshot::linux_snapshot(&rep.processes, Default::default());
    }
    let _ = memtally_core::analyze::classic::classic(&procs[0].regions);
}

/// vmmap text: the streaming parser, and the tally and summary sums the
/// `vmmap` command makes of it.
pub fn vmmap(data: &[u8]) {
    use memtally_core::analyze::vmmap::{summary_footprint, total_check, Tally, TypeFilter};
    let _ = parse::vmmap::parse_all(data, Default::default());
    let mut tally = Tally::new(TypeFilter::new(Vec::new()));
    let parsed = parse::vmmap::parse(data, Default::default(), &mut tally);
    tally.finish();
    if let Ok(doc) = parsed {
        let _ = tally.count_check(&doc);
        let _ = summary_footprint(&doc, &TypeFilter::new(Vec::new()));
        let _ = total_check(&doc);
    }
}

/// DRM and dma-buf fdinfo, and the other small `/proc` and tool formats
/// (nvidia-smi XML, meminfo, mounts, cgroup memory.stat, zram mm_stat).
pub fn fdinfo(data: &[u8]) {
    for (fd, node, dmabuf) in [(3, "/dev/dri/renderD128", false), (4, "/dmabuf:", true)] {
        let parsed = parse::fdinfo::parse(data, fd, Some(node), dmabuf);
        assert!(parsed.is_ok(), "fdinfo says every line it cannot read, never fails");
    }
    let _ = parse::nvidia::parse(data);
    assert!(parse::meminfo::parse(data).is_ok(), "meminfo skips what it cannot read");
    assert!(parse::mounts::parse(data).is_ok(), "mounts skips what it cannot read");
    assert!(parse::memory_stat::parse(data).is_ok(), "memory.stat skips what it cannot read");
    if let Ok(z) = parse::zram_mm_stat::parse(data) {
        assert!(z.ratio().is_none_or(|r| r >= 0.0), "a ratio of sizes is never negative");
    }
}

/// `/proc/PID/status`: never fails, and its sizes are whole kB.
pub fn status(data: &[u8]) {
    let s = parse::status::parse(data).expect("status skips what it cannot read");
    for bytes in [s.vm_size, s.vm_rss, s.rss_anon, s.rss_file, s.rss_shmem, s.vm_swap] {
        assert!(bytes.unwrap_or(0) % 1024 == 0, "a `N kB` figure in bytes is whole kB");
    }
    let _ = s.exited();
}

/// `/proc/PID/stat`: a stamp, when it reads, compares with itself as the
/// same process (or a gone one, when it says the process exited; or one
/// that exec'd, when its address space was still being built).
pub fn stat(data: &[u8]) {
    use memtally_core::source::parse::stat::Change;
    let Ok(stamp) = parse::stat::parse(data) else { return };
    let want = if stamp.exited() {
        Change::Gone
    } else if stamp.under_construction() {
        Change::Execed
    } else {
        Change::Same
    };
    assert_eq!(stamp.compare(&stamp), want);
}

/// `PID/fd_targets` of a recording: never fails, sorted by fd, one line each.
pub fn fd_targets(data: &[u8]) {
    let targets = parse::fd_targets::parse(data).expect("fd_targets skips what it cannot read");
    assert!(targets.windows(2).all(|w| w[0] <= w[1]), "sorted by fd");
    assert!(targets.iter().all(|(_, t)| !t.contains('\n')), "a target is one line");
}

/// Snapshot JSON (and show JSON): loading, and a diff against itself.
pub fn snapshot(data: &[u8]) {
    let Ok(snap) = parse::snapshot::parse(data) else { return };
    let d = diff(
        &snap,
        &snap,
        &DiffOptions::default().with_sort(vec![DiffSort(Figure::Dirty)]).with_min_delta(0),
    );
    assert!(d.processes.is_empty(), "a snapshot equals itself");
    let _ = serde_json::to_string(&snap);
}

/// A `memtally report` page: the snapshot it embeds read back (and, when
/// it reads, compared with itself as `diff` does).
pub fn report_page(data: &[u8]) {
    let _ = parse::snapshot_html::is_html(data);
    let Ok(snap) = parse::snapshot_html::parse(data) else { return };
    let d = diff(&snap, &snap, &DiffOptions::default().with_min_delta(0));
    assert!(d.processes.is_empty(), "a page's snapshot equals itself");
}

/// A document in a file, as `diff` and `report --input` read it: a
/// snapshot file of JSON Lines is read a line at a time into a digest and
/// its listed regions fetched again where their lines begin; any other
/// document whole. Loading and diffing agree on whether it reads.
pub fn snapshot_file(data: &[u8]) {
    use memtally_core::usecase;
    let path = snapshot_file_path();
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let loaded = usecase::snapshot::load(&path);
    let opts = DiffOptions::default().with_min_delta(0);
    let diffed = usecase::diff::diff_files(&path, &path, &opts);
    assert_eq!(loaded.is_ok(), diffed.is_ok(), "load and diff read the same documents");
    if let (Ok(snap), Ok(d)) = (loaded, diffed) {
        assert!(d.processes.is_empty(), "a document equals itself");
        let whole = diff(&snap, &snap, &opts);
        assert_eq!(whole.processes.len(), d.processes.len());
    }
}

/// Where [`snapshot_file`] writes its input: one file per process and thread.
pub fn snapshot_file_path() -> std::path::PathBuf {
    let thread = format!("{:?}", std::thread::current().id());
    let thread: String = thread.chars().filter(char::is_ascii_digit).collect();
    std::env::temp_dir().join(format!("memtally-fuzz-{}-{thread}.input", std::process::id()))
}
