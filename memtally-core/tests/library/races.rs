//! A process that exits, execs or changes while the library reads it: the
//! kernel ends its smaps early, at a mapping boundary, without an error.
//! `show` of one process must then fail with why (gone, changed), never return
//! the part it read as the whole. The command line's side (exit code 3,
//! and `capture`, whose files are the command's) is tested in
//! memtally-cli/tests/cli/exit_races.rs.

use std::time::{Duration, Instant};

use crate::support::shown::{show_many, show_one, show_one_with};
use memtally_core::model::Note;
use memtally_core::usecase::top;
use memtally_core::{
    Error, Flow, ProcRoot, Region, RegionSink, SelectOptions, ShowOptions, Silent, TopOptions,
};

use crate::support::child::{exec_loop, fork_ready, many_mappings, map_and_touch, Forked};
use crate::support::recorded::copied_fixture;

const PAGES: usize = 12_000;

/// Whether `e` says the process is gone or changed under the read (what
/// the command line reports with exit code 3).
fn gone_or_changed(e: &Error) -> bool {
    matches!(
        e,
        Error::NoSuchProcess { .. }
            | Error::Exited { .. }
            | Error::Changed { .. }
            | Error::Unsteady { .. }
    )
}

#[test]
fn show_of_a_process_killed_mid_read_is_never_a_complete_map() {
    let root = ProcRoot::live();
    let probe = many_mappings(PAGES);
    let start = Instant::now();
    let whole = show_one(&root, probe.pid as u32, &ShowOptions::default()).unwrap();
    let full = start.elapsed();
    assert!(whole.region_count >= PAGES, "{} regions", whole.region_count);
    drop(probe);
    let (mut complete, mut gone) = (0, 0);
    let runs = 24;
    for i in 0..runs {
        let child = many_mappings(PAGES);
        let pid = child.pid as u32;
        let read =
            std::thread::spawn(move || show_one(&ProcRoot::live(), pid, &ShowOptions::default()));
        // Kills spread over the read, from its start to its end.
        std::thread::sleep(full * i / runs);
        child.kill();
        match read.join().unwrap() {
            Ok(report) => {
                assert!(
                    report.region_count >= PAGES,
                    "run {i}: a report of {} regions of {PAGES}+: {:?}",
                    report.region_count,
                    report.notes
                );
                complete += 1;
            }
            Err(e) if gone_or_changed(&e) => gone += 1,
            Err(e) => panic!("run {i}: {e:?}"),
        }
        drop(child);
    }
    eprintln!("{runs} kills during show ({full:?} a read): {complete} complete before the kill, {gone} said gone");
    assert!(gone > 0, "no kill landed during a read: the test aimed badly");
}

/// The paths of the regions a read hands out.
#[derive(Default)]
struct Paths(Vec<String>);

impl RegionSink for Paths {
    fn region(&mut self, _line: usize, region: &Region) -> Flow {
        self.0.extend(region.path.clone());
        Flow::Continue
    }
}

#[test]
fn show_of_a_process_that_execs_mid_read_is_never_cut_short() {
    let tmp = tempfile::tempdir().unwrap();
    let mut looping = exec_loop(tmp.path(), 8);
    let pid = looping.id();
    let root = ProcRoot::live();
    let start = Instant::now();
    let (mut runs, mut ok, mut changed) = (0, 0, 0);
    while start.elapsed() < Duration::from_secs(6) && runs < 300 {
        let mut paths = Paths::default();
        runs += 1;
        match show_one_with(&root, pid, &ShowOptions::default(), &mut paths) {
            Ok(_) => {
                // The stack and the vDSO sit at the top of the address
                // space: a map cut short lacks them.
                let has = |p: &str| paths.0.iter().any(|q| q == p);
                assert!(
                    has("[stack]") && has("[vdso]"),
                    "run {runs}: a whole report of a map cut short: {:?}",
                    paths.0
                );
                ok += 1;
            }
            Err(e) if gone_or_changed(&e) => changed += 1,
            Err(e) => panic!("run {runs}: {e:?}"),
        }
    }
    let _ = looping.kill();
    let _ = looping.wait();
    eprintln!(
        "{runs} shows of a process exec'ing in a loop: {ok} whole, {changed} said changed or gone"
    );
    assert!(runs >= 10 && ok > 0, "{runs} runs, {ok} whole");
}

/// A forked child with `PAGES` mappings low in its address space (so
/// `smaps` takes a while to reach the rest, and `smaps_rollup`, a walk in
/// the kernel alone, far less), and above them 64 MiB it maps, writes,
/// unmaps and maps again for ever: where the two reads reach it, its
/// resident memory has swung by 64 MiB.
fn spawn_flapping() -> Forked {
    let (child, ready) = fork_ready(|ready| unsafe {
        let many = libc::mmap(
            0x2000_0000_0000usize as *mut libc::c_void,
            PAGES * 4096,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if many == libc::MAP_FAILED {
            libc::_exit(1);
        }
        for i in (0..PAGES).step_by(2) {
            libc::mprotect((many as *mut u8).add(i * 4096).cast(), 4096, libc::PROT_READ);
        }
        ready.signal();
        let len = 64 << 20;
        let pause = libc::timespec { tv_sec: 0, tv_nsec: 20_000_000 };
        loop {
            let p = map_and_touch(len, 0x5a);
            libc::nanosleep(&pause, std::ptr::null_mut());
            libc::munmap(p, len);
            libc::nanosleep(&pause, std::ptr::null_mut());
        }
    });
    assert!(ready, "the child mapped its {PAGES} pages");
    child
}

/// When the regions sum to far less resident memory than the rollup read
/// beside them (64 MiB went between the two reads), `show` of one
/// process, which handed the regions out as it read them, fails saying
/// the process changed; `show` of a selection, which keeps them, reads
/// once more, and is whole (or fails the same way when that disagrees too).
#[test]
fn show_of_a_process_whose_rollup_disagrees_is_not_whole() {
    let child = spawn_flapping();
    let pid = child.pid as u32;
    let root = ProcRoot::live();
    let start = Instant::now();
    let (mut runs, mut whole, mut unsteady) = (0, 0, 0);
    while start.elapsed() < Duration::from_secs(10) && runs < 100 && unsteady < 2 {
        runs += 1;
        match show_one(&root, pid, &ShowOptions::default()) {
            Ok(_) => whole += 1,
            Err(Error::Unsteady { pid: p, summed_kib, rollup_kib, .. }) => {
                assert_eq!(p, pid);
                assert!(summed_kib < rollup_kib, "{summed_kib} kB summed, {rollup_kib} kB rollup");
                unsteady += 1;
            }
            Err(e) => panic!("run {runs}: {e:?}"),
        }
    }
    let sel = SelectOptions::default().with_pids(vec![pid]).resolve().unwrap();
    let (mut again_runs, mut again_whole) = (0, 0);
    while again_runs < 3 && start.elapsed() < Duration::from_secs(20) {
        again_runs += 1;
        match show_many(&root, &sel, &ShowOptions::default()) {
            Ok(report) => {
                assert!(report.notes.is_empty(), "{:?}", report.notes);
                assert_eq!(report.processes.len(), 1);
                again_whole += 1;
            }
            // Read twice and both disagreed: the one process selected is
            // left out, which leaves nothing to show.
            Err(Error::Unsteady { .. }) => {}
            Err(e) => panic!("{e:?}"),
        }
    }
    eprintln!("{runs} shows of a process swinging by 64 MiB: {whole} whole, {unsteady} said it changed; a selection: {again_whole} of {again_runs} whole");
    assert!(unsteady > 0, "the rollup never disagreed with the regions: the test aimed badly");
}

/// A recorded tree with the capture's incomplete mark is read back with
/// the mark's reason as a note (and `top` lists it as failed); without
/// the mark, as whole. A recorded zombie is still read when its capture
/// said it exited.
#[test]
fn a_tree_marked_incomplete_is_read_back_as_partial() {
    let (_tmp, dir) = copied_fixture("python3-mmap");
    let root = ProcRoot::new(&dir);
    let shown = show_one(&root, 11364, &ShowOptions::default()).unwrap();
    assert!(shown.notes.is_empty(), "{:?}", shown.notes);
    let whole = top::top(&root, &TopOptions::default(), &Silent).unwrap();
    assert!(!whole.partial() && whole.scan.failed.is_empty(), "{:?}", whole.scan.failed);

    std::fs::write(dir.join("11364/memtally-incomplete"), "exited while being recorded\n").unwrap();
    let root = ProcRoot::new(&dir);
    let shown = show_one(&root, 11364, &ShowOptions::default()).unwrap();
    let want = Note::RecordedIncomplete { pid: 11364, why: "exited while being recorded".into() };
    assert_eq!(shown.notes, vec![want.clone()]);
    assert_eq!(shown.region_count, whole_regions(&dir), "every recorded region is still read");
    let marked = top::top(&root, &TopOptions::default(), &Silent).unwrap();
    assert!(marked.partial());
    assert!(
        marked.notes().iter().any(
            |n| matches!(n, Note::Failed { pid: 11364, why } if why.contains("recorded incomplete"))
        ),
        "{:?}",
        marked.notes()
    );

    // A recorded zombie is still shown when its capture said it exited.
    let status = std::fs::read_to_string(dir.join("11364/status")).unwrap();
    let zombie: String = status
        .lines()
        .map(|l| if l.starts_with("State:") { "State:\tZ (zombie)" } else { l })
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(dir.join("11364/status"), zombie).unwrap();
    let shown = show_one(&ProcRoot::new(&dir), 11364, &ShowOptions::default()).unwrap();
    assert_eq!(shown.notes, vec![want]);
}

/// The mappings of the recorded process's maps: one region each.
fn whole_regions(dir: &std::path::Path) -> usize {
    std::fs::read_to_string(dir.join("11364/maps")).unwrap().lines().count()
}

/// `snapshot` (written as it reads, each region as it is parsed, through
/// `ProcRoot::process` with the selection's `ReadPlan::known`: one open
/// `stat` for both stamps, the selection's `status`) of a process that execs in a loop: each time, the
/// process is in the document whole (its stack and vDSO, at the top of the
/// address space, are there) and once (its regions in address order: a
/// read that did not stand left none of its own before the next read's),
/// or left out as gone or changed, never cut short.
#[test]
fn snapshot_of_a_process_that_execs_mid_read_is_never_cut_short() {
    use memtally_core::model::snapshot::Snapshot;
    use memtally_core::source::parse::snapshot::parse;
    use memtally_core::usecase::snapshot_stream::{take_into, Extras, Output};
    let tmp = tempfile::tempdir().unwrap();
    let mut looping = exec_loop(tmp.path(), 8);
    let pid = looping.id();
    let root = ProcRoot::live();
    let sel = memtally_core::Selection::of_pids(vec![pid]);
    let start = Instant::now();
    let (mut runs, mut ok, mut left_out) = (0, 0, 0);
    while start.elapsed() < Duration::from_secs(6) && runs < 300 {
        runs += 1;
        let mut doc = Vec::new();
        let word = |n: &Note| format!("{n:?}");
        let error = |e| Error::io("test output", e);
        let output = Output { out: &mut doc, word: &word, error: &error };
        match take_into(&root, &sel, &Silent, Extras::default(), output) {
            Ok(_) => {
                let snap: Snapshot = parse(&doc).unwrap();
                let p = &snap.processes[0];
                let has = |want: &str| p.regions.iter().any(|r| r.path.as_deref() == Some(want));
                assert!(has("[stack]") && has("[vdso]"), "run {runs}: a map cut short");
                let starts: Vec<u64> = p.regions.iter().filter_map(|r| r.start).collect();
                let ordered = starts.windows(2).all(|w| w[0] < w[1]);
                assert!(ordered, "run {runs}: regions out of order, of two reads");
                ok += 1;
            }
            Err(e) if gone_or_changed(&e) => left_out += 1,
            Err(e) => panic!("run {runs}: {e:?}"),
        }
    }
    let _ = looping.kill();
    let _ = looping.wait();
    eprintln!("{runs} snapshots of a process exec'ing in a loop: {ok} whole, {left_out} left out");
    assert!(runs >= 10 && ok > 0, "{runs} runs, {ok} whole");
}
