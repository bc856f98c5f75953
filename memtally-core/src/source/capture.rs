//! What a capture records: the `/proc` files of a process (and of the
//! machine) that memtally reads, laid out like `/proc` itself so that
//! `--proc-root DIR` reads the recording back later, anywhere.

/// Files recorded per process. `smaps` is required; the rest are kept when
/// readable (a kernel without `smaps_rollup` still gives a useful capture).
pub const PROCESS_FILES: &[&str] =
    &["smaps", "maps", "smaps_rollup", "status", "statm", "stat", "cmdline", "comm", "cgroup"];

/// Files recorded once per tree.
pub const MACHINE_FILES: &[&str] = &["meminfo"];
