//! What a capture records: the `/proc` files of a process (and of the
//! machine) that memtally reads, laid out like `/proc` itself so that a
//! [`ProcRoot`](crate::source::ProcRoot) on the recorded directory reads
//! it back later, anywhere.

/// Files recorded per process. `smaps` is required; the rest are kept when
/// readable (a kernel without `smaps_rollup` still gives a useful capture).
pub(crate) const PROCESS_FILES: &[&str] =
    &["smaps", "maps", "smaps_rollup", "status", "statm", "stat", "cmdline", "comm", "cgroup"];

/// Files recorded once per tree (and beside them, under `sys/`, the
/// memory cgroup files of the recorded processes and every zram device's
/// `sys/block/zramN/mm_stat`).
pub(crate) const MACHINE_FILES: &[&str] = &["meminfo"];

/// Written into `DIR/PID/` by a capture that could not record the process
/// consistently: it exited while being recorded, or ran a new program
/// again when the capture was repeated. One line says which. Readers of
/// the tree (`ProcRoot::incomplete`) then report that process partial,
/// with the line as a note, instead of as a whole.
pub(crate) const INCOMPLETE: &str = "memtally-incomplete";

/// Written into `DIR/` itself by a capture before its first process is
/// installed, and removed once its last one is in: a capture ended
/// midway (a signal, a full disk, a kill) leaves it, saying why where it
/// could. Readers of the tree (`ProcRoot::cut_short`) then report the
/// whole recording partial, with the line as a note. (The same name as
/// [`INCOMPLETE`], one level up: a process directory is named by a PID.)
pub(crate) const TREE_INCOMPLETE: &str = INCOMPLETE;
