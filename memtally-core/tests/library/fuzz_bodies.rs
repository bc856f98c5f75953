//! The bodies of the cargo-fuzz targets (fuzz/fuzz_targets/*.rs include
//! this file), so that `fuzz_replay` runs the very same code over the
//! seeds and the crashers found so far in an ordinary test build, which
//! has overflow checks on: a sum that wraps panics there as it does under
//! `cargo fuzz run -a`.

use memtally_core::analyze::diff::{diff, DiffOptions, DiffSort};
use memtally_core::analyze::group::GroupSort;
use memtally_core::analyze::{categorize, show};
use memtally_core::model::{Figure, Flow, Sizes};
use memtally_core::source::parse;

/// smaps / maps text: the parser and every analysis over what it returns.
pub fn smaps(data: &[u8]) {
    let mut regions = Vec::new();
    for r in parse::smaps::SmapsReader::new(data) {
        match r {
            Ok(r) => regions.push(r),
            Err(_) => break,
        }
    }
    if let Ok(all) = parse::smaps::parse(data) {
        assert_eq!(all, regions, "the reader to its end is the whole parse");
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
    use memtally_core::model::vmmap::Record;
    let _ = parse::vmmap::parse_all(data, Default::default());
    let mut tally = Tally::new(TypeFilter::new(Vec::new()));
    let parsed = parse::vmmap::parse(data, Default::default(), |n, _, rec| {
        if let Some(Record::Region(r)) = rec {
            tally.add(n, r);
        }
        Flow::Continue
    });
    tally.finish();
    if let Ok(doc) = parsed {
        let _ = tally.count_check(&doc);
        let _ = summary_footprint(&doc, &TypeFilter::new(Vec::new()));
        let _ = total_check(&doc);
    }
}

/// DRM and dma-buf fdinfo, the fd targets list, and the other small
/// `/proc` and tool formats (nvidia-smi CSV, meminfo, mounts, cgroup
/// memory.stat).
pub fn fdinfo(data: &[u8]) {
    let _ = parse::fdinfo::parse(data, 3, Some("/dev/dri/renderD128"), false);
    let _ = parse::fdinfo::parse(data, 4, Some("/dmabuf:"), true);
    let _ = memtally_core::source::gpu::parse_fd_targets(data);
    let _ = parse::nvidia::parse(data);
    let text = String::from_utf8_lossy(data);
    let _ = parse::meminfo::parse(&text);
    let _ = parse::mounts::parse(&text);
    let _ = parse::cgroup::parse_stat(&text);
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
