//! What each command does, as library calls: plain option structs in,
//! results out, progress through a callback. The command line, the
//! exporter and the explorer are thin layers over these (parse their
//! input into options, call the use case, print the result), so every
//! front end shows the same figures from the same code.

pub mod by_mapping;
pub mod capture;
pub mod cgroup;
pub mod diff;
pub mod faults;
pub mod files;
pub mod gpu;
pub mod machine;
pub mod metrics;
pub mod metrics_pages;
pub mod pages;
pub mod plot;
pub(crate) mod read;
pub mod report;
mod report_input;
mod report_lines;
pub mod select;
pub mod shared;
pub(crate) mod shmem_swap;
pub mod show;
pub mod snapshot;
mod snapshot_regions;
pub mod snapshot_stream;
pub mod top;
pub mod vmmap;
pub mod watch;
pub mod wss;

/// Told how a long read is going: how many items, then each one done.
/// Called from several threads at once.
pub trait Progress: Sync {
    /// `total` items of `what` are about to be read.
    fn start(&self, what: &str, total: usize) {
        let _ = (what, total);
    }

    /// One more item is done.
    fn step(&self) {}

    /// Every item is done.
    fn finish(&self) {}
}

/// Progress nobody watches.
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

impl Progress for Silent {}

/// Who may read a file that holds what `root` gives of its processes
/// (their mapping addresses, which the kernel shows only to a process's
/// own user and root, to protect ASLR): memtally's user alone when it
/// reads the live system as root (every process is then root's or
/// another user's); as the umask says for a user's own processes and for
/// a recorded tree (whose files keep their own modes).
pub fn output_access(root: &crate::source::ProcRoot) -> crate::write::Access {
    crate::write::Access::for_addresses(root.is_procfs())
}
