//! How a selection resolves against live processes, through the library
//! calls the command line makes (`top`, `snapshot::take`): a PID that is
//! not there, a kernel thread, a tree, a snapshot's parents and owners.
//! The command line's own side (exit codes, wording) is tested in
//! memtally-cli/tests/cli/selections.rs.

use memtally_core::usecase::{snapshot, top};
use memtally_core::{Error, ProcRoot, SelectOptions, Silent, TopBy, TopOptions};

use crate::support::child::family;

const MIB: usize = 1 << 20;

/// A PID with no `/proc` directory now (and, being above every PID this
/// machine has handed out lately, one that never existed in this test).
fn unused_pid() -> u32 {
    (900_000..4_000_000).find(|p| !std::path::Path::new(&format!("/proc/{p}")).exists()).unwrap()
}

fn select_pids(pids: Vec<u32>) -> memtally_core::Selection {
    SelectOptions::default().with_pids(pids).resolve().unwrap()
}

fn select_tree(pid: u32) -> memtally_core::Selection {
    SelectOptions::default().with_trees(vec![pid]).resolve().unwrap()
}

/// A PID that never existed next to a live one: it is listed as missing,
/// not counted as a process that exited during the scan.
#[test]
fn a_missing_pid_is_not_said_to_have_exited() {
    let child = family(MIB, 0);
    let missing = unused_pid();
    let opts = TopOptions::default().with_select(select_pids(vec![child.pid as u32, missing]));
    let found = top::top(&ProcRoot::live(), &opts, &Silent).unwrap();
    assert_eq!(found.missing, vec![missing]);
    assert_eq!(found.scan.vanished, 0);
    let pids: Vec<u32> = found.scan.processes.iter().map(|p| p.info.pid).collect();
    assert_eq!(pids, vec![child.pid as u32]);
    assert!(found.scan.processes[0].sizes.rss.unwrap() >= MIB as u64, "the child's touched MiB");
}

/// Nothing there at all: the use case fails with the PID, rather than
/// returning an empty view.
#[test]
fn only_a_missing_pid_is_an_error_that_names_it() {
    let missing = unused_pid();
    let opts = TopOptions::default().with_select(select_pids(vec![missing]));
    match top::top(&ProcRoot::live(), &opts, &Silent) {
        Err(Error::NoSuchProcess { pid, .. }) => assert_eq!(pid, missing),
        other => panic!("{other:?}"),
    }
}

/// A kernel thread named alone is refused, naming it; beside a real
/// process it is left out and counted.
#[test]
fn a_kernel_thread_named_alone_is_refused() {
    let comm = std::fs::read_to_string("/proc/2/comm").unwrap_or_default();
    let status = std::fs::read_to_string("/proc/2/status").unwrap_or_default();
    if comm.trim() != "kthreadd" || status.contains("VmSize") {
        eprintln!("skipped: pid 2 is not the kernel thread kthreadd here");
        return;
    }
    let root = ProcRoot::live();
    let alone = TopOptions::default().with_select(select_pids(vec![2]));
    match top::top(&root, &alone, &Silent) {
        Err(Error::KernelThread { pid: 2, comm }) => assert_eq!(comm, "kthreadd"),
        other => panic!("{other:?}"),
    }
    let child = family(MIB, 0);
    let beside = TopOptions::default().with_select(select_pids(vec![2, child.pid as u32]));
    let found = top::top(&root, &beside, &Silent).unwrap();
    assert_eq!(found.kernel_threads, 1);
    assert_eq!(found.scan.processes.len(), 1);
    assert_eq!(found.scan.processes[0].info.pid, child.pid as u32);
}

/// `--by tree`: the root row adds up its whole subtree (3 processes), and
/// each child's row itself.
#[test]
fn tree_rows_add_up_their_subtree() {
    let child = family(2 * MIB, 2);
    let opts =
        TopOptions::default().with_by(TopBy::Tree).with_select(select_tree(child.pid as u32));
    let found = top::top(&ProcRoot::live(), &opts, &Silent).unwrap();
    let rows = &found.report.rows;
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert_eq!(rows[0].key, child.pid.to_string());
    assert_eq!((rows[0].depth, rows[0].processes), (0, 3));
    assert!(rows[1..].iter().all(|r| r.depth == 1 && r.processes == 1), "{rows:?}");
    // The root row's figures are its subtree's: the sum of the three
    // processes' own PSS (at least the 2 MiB the child touched, shared
    // among them); a full-count figure (RSS) stands per process only.
    let own: u64 = found.scan.processes.iter().map(|p| p.sizes.pss.unwrap()).sum();
    assert!(own >= 2 * MIB as u64);
    assert_eq!(rows[0].sizes.pss, Some(own));
    assert_eq!(rows[0].sizes.rss, None, "RSS of three processes is no sum");
}

/// A snapshot records each process's parent and owner.
#[test]
fn snapshots_record_parent_and_user() {
    let child = family(MIB, 1);
    let taken = snapshot::take(&ProcRoot::live(), &select_tree(child.pid as u32), &Silent).unwrap();
    assert!(!taken.partial(), "{:?}", taken.notes);
    let procs = &taken.snapshot.processes;
    assert_eq!(procs.len(), 2);
    let me = std::process::id();
    let uid = unsafe { libc::getuid() };
    let id = std::process::Command::new("id").args(["-un", &uid.to_string()]).output().unwrap();
    let name = String::from_utf8(id.stdout).unwrap();
    for p in procs {
        let want_parent = if p.pid == Some(child.pid as u32) { me } else { child.pid as u32 };
        assert_eq!(p.ppid, Some(want_parent), "{p:?}");
        assert_eq!(p.user.as_deref(), Some(name.trim()), "{p:?}");
    }
}
