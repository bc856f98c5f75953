//! GPU memory of processes, read through [`ProcRoot`] so recorded trees
//! work like the live `/proc`.
//!
//! For each process: the fds that point at a DRM device (`/dev/dri/*`) or
//! a dma-buf (`/dmabuf:NAME`, older kernels `anon_inode:dmabuf`), each
//! one's `fdinfo` parsed by [`fdinfo`]; the dma-buf mappings of `maps`;
//! and, for processes that have any of these, the resident bytes of GPU
//! device mappings and `LazyFree` from smaps. The `nvidia` module (inside
//! the library) asks `nvidia-smi`, where it exists.
//!
//! ## Recorded trees
//! A recorded tree cannot hold the live `fd/` symlinks in a useful way
//! (they point at devices and anonymous inodes), so `memtally capture`
//! writes `PID/fd_targets`, one line per DRM or dma-buf fd: the fd
//! number, a tab, the link target as `readlink` gave it. Next to it go
//! `PID/fdinfo/N` for those fds only (other fds are not recorded: their
//! targets name the user's files). Reading a tree, an `fd/` directory is
//! used when there is one (live, or a copy made with symlinks), else
//! `fd_targets`; a tree with neither was recorded before GPU support,
//! and says so in a note.

use crate::source::parse::{fd_targets, fdinfo};
pub(crate) mod nvidia;

use std::io::ErrorKind;
use std::path::Path;
use std::time::Instant;

use crate::error::{Error, Result};
use crate::model::gpu::{DmaBufMapping, ProcGpu};
use crate::model::guard::{Limited, ReadGuard};
use crate::model::Note;
use crate::source::bounded::Kind;
use crate::source::proc_root::RegionsFile;
use crate::source::ProcRoot;
use fdinfo::{is_dmabuf_target, is_drm_target, is_gpu_device_path, FdInfo};

/// The text file a capture writes in place of `fd/`.
pub(crate) const FD_TARGETS: &str = "fd_targets";

/// Every fd of a process with its link target; `None` when the tree has
/// no record of fds (a capture made before GPU support).
fn read_fd_targets(root: &ProcRoot, pid: u32) -> Result<Option<Vec<(u32, String)>>> {
    let dir = Path::new(&pid.to_string()).join("fd");
    match root.list(&dir) {
        Ok(names) => {
            let mut out = Vec::new();
            for name in names {
                let Some(fd) = name.to_str().and_then(|s| s.parse::<u32>().ok()) else {
                    continue;
                };
                // Read as text, never followed (in a recording it may
                // name anything).
                match root.read_link(&dir.join(&name)) {
                    Ok(t) => out.push((fd, t.to_string_lossy().into_owned())),
                    // The directory can be listable while its links are not
                    // (no ptrace access to the process): that is a refusal,
                    // not an empty list.
                    Err(err) if err.kind() == ErrorKind::PermissionDenied => {
                        return Err(root.explain(pid, root.path().join(&dir).join(&name), err));
                    }
                    // An fd closed since the directory was listed is gone.
                    Err(_) => {}
                }
            }
            out.sort();
            Ok(Some(out))
        }
        Err(e) if e.kind() == ErrorKind::NotFound && !root.is_live() => {
            match root.read(pid, FD_TARGETS) {
                Ok(bytes) => Ok(fd_targets::parse(&bytes).ok()),
                Err(Error::NoSuchProcess { pid, path }) => Err(Error::NoSuchProcess { pid, path }),
                Err(_) => Ok(None),
            }
        }
        Err(e) => Err(root.explain(pid, root.path().join(&dir), e)),
    }
}

/// The fds worth reading: DRM devices and dma-bufs.
fn gpu_fds(targets: &[(u32, String)]) -> impl Iterator<Item = &(u32, String)> {
    targets.iter().filter(|(_, t)| is_drm_target(t) || is_dmabuf_target(t))
}

/// How much of a process's GPU files to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Depth {
    /// Everything its own figures need: fds and their fdinfo, maps, and
    /// smaps where it has GPU memory (a process that is shown).
    Full,
    /// Only its DRM and dma-buf fds' fdinfo: enough to count it among the
    /// holders of a client or a buffer (a process that is not shown).
    Holders,
}

/// What a process's maps says for its GPU view.
#[derive(Debug, Default)]
struct MapsScan {
    /// Its dma-buf mappings.
    dmabuf: Vec<DmaBufMapping>,
    /// Whether it maps a GPU device (`/dev/dri/*`, …).
    device_maps: bool,
    /// How many mappings in all.
    mappings: usize,
}

impl crate::model::RegionSink for MapsScan {
    fn region(&mut self, _line: usize, r: &crate::model::Region) -> crate::model::Flow {
        self.mappings += 1;
        if let Some(path) = r.path.as_deref() {
            if is_dmabuf_target(path) {
                if let (Some(inode), Some(size)) = (r.inode, r.vsize()) {
                    self.dmabuf.push(DmaBufMapping { inode, size });
                }
            } else if is_gpu_device_path(path) {
                self.device_maps = true;
            }
        }
        crate::model::Flow::Continue
    }
}

/// Streams `pid`'s maps; an unreadable one gives nothing (as before).
fn scan_maps(root: &ProcRoot, pid: u32) -> MapsScan {
    root.read_regions(pid, RegionsFile::Maps, MapsScan::default()).unwrap_or_default()
}

/// Adds to each process `wanted` accepts the mappings of `inodes` its
/// maps holds (a dma-buf can be held by a mapping alone, its fd closed):
/// the processes read at [`Depth::Holders`] whose mappings may make them
/// holders of a buffer the shown processes hold.
pub(crate) fn add_dmabuf_maps(
    root: &ProcRoot,
    processes: &mut [ProcGpu],
    wanted: &dyn Fn(u32) -> bool,
    inodes: &std::collections::HashSet<u64>,
    threads: usize,
) {
    let pids: Vec<u32> = processes.iter().map(|p| p.pid).filter(|&p| wanted(p)).collect();
    let found = crate::source::scan::par_map(&pids, threads, 1, |&pid| scan_maps(root, pid).dmabuf);
    let by_pid: std::collections::HashMap<u32, Vec<DmaBufMapping>> =
        pids.into_iter().zip(found).collect();
    for p in processes.iter_mut() {
        if let Some(maps) = by_pid.get(&p.pid) {
            p.dmabuf_maps.extend(maps.iter().filter(|m| inodes.contains(&m.inode)).copied());
        }
    }
}

/// Reads one process's GPU fds and, at [`Depth::Full`], its dma-buf
/// mappings and (where it has any of those or a GPU device mapping) the
/// mapped bytes and `LazyFree`.
fn read_process(root: &ProcRoot, pid: u32, guard: ReadGuard, depth: Depth) -> Result<ProcGpu> {
    let started = Instant::now();
    let mut gpu = ProcGpu { pid, ..Default::default() };
    match read_fd_targets(root, pid)? {
        Some(targets) => {
            for (fd, target) in gpu_fds(&targets) {
                let file = format!("fdinfo/{fd}");
                // A few hundred bytes (a line per DRM region): read whole,
                // at most MAX_SMALL, so a giant or a device is refused.
                let bytes = match root.read(pid, &file) {
                    Ok(b) => b,
                    Err(Error::Io { source, .. }) if source.kind() == ErrorKind::NotFound => {
                        // Closed meanwhile, or not recorded.
                        continue;
                    }
                    // Not an fdinfo (too big, not a regular file): said, and
                    // the process's GPU figures are partial without it.
                    Err(Error::Parse { path, message }) => {
                        gpu.notes.push(Note::NotAnFdinfo { path, message });
                        continue;
                    }
                    Err(e) => return Err(e),
                };
                let parsed = fdinfo::parse(&bytes, *fd, Some(target), is_dmabuf_target(target))
                    .unwrap_or_else(|e| fdinfo::Parsed {
                        info: FdInfo::Other,
                        problems: vec![e.to_string()],
                    });
                for p in parsed.problems {
                    gpu.notes
                        .push(Note::FdinfoProblem { path: root.pid_file(pid, &file), problem: p });
                }
                match parsed.info {
                    FdInfo::Drm(c) => gpu.drm.push(c),
                    FdInfo::DmaBuf(b) => gpu.dmabufs.push(b),
                    FdInfo::Other => {}
                }
            }
        }
        None => {
            gpu.notes.push(Note::NoFdRecord { path: root.pid_file(pid, ""), record: FD_TARGETS })
        }
    }
    if depth == Depth::Holders {
        // Another process's figures are not shown: its fds tell who holds
        // the selection's DRM clients and dma-bufs, and its mappings are
        // read only where the selection holds a dma-buf (add_dmabuf_maps).
        return Ok(gpu);
    }
    // maps is cheap (no page walk): it finds dma-bufs mapped without an fd
    // and tells whether smaps is worth reading. Streamed: only the
    // dma-buf lines are kept, whatever the process's mappings.
    let maps = scan_maps(root, pid);
    let (device_maps, mappings) = (maps.device_maps, maps.mappings);
    gpu.dmabuf_maps = maps.dmabuf;
    // smaps costs the kernel ~30 times what maps does per mapping: the
    // guard skips it for a process past its bounds (model/guard.rs).
    if (device_maps || !gpu.is_empty()) && mappings > guard.max_mappings {
        gpu.limited = Some(Limited::Mappings);
    } else if (device_maps || !gpu.is_empty()) && started.elapsed() > guard.budget {
        gpu.limited = Some(Limited::ReadBudget);
    } else if device_maps || !gpu.is_empty() {
        if let Ok(regions) = root.read_regions(pid, RegionsFile::Smaps, Vec::new()) {
            let gpu_mapped = |p: &str| is_gpu_device_path(p) || is_dmabuf_target(p);
            gpu.mapped = Some(
                regions
                    .iter()
                    .filter(|r| r.path.as_deref().is_some_and(gpu_mapped))
                    .filter_map(|r| r.sizes.rss)
                    .sum(),
            );
            gpu.lazy_free = regions.iter().map(|r| r.sizes.lazy_free).sum();
        }
    }
    Ok(gpu)
}

/// What reading many processes found.
#[derive(Debug, Default)]
pub(crate) struct GpuScan {
    /// Every process read, including those with no GPU memory.
    pub processes: Vec<ProcGpu>,
    /// Processes whose fds could not be read (permission): PIDs.
    pub restricted: Vec<u32>,
    /// Other failures: (pid, one line).
    pub failed: Vec<(u32, String)>,
}

/// Reads the GPU files of `pids` on `threads` threads, each as deep as
/// `depth` says; processes that exit meanwhile are left out.
pub(crate) fn read_many(
    root: &ProcRoot,
    pids: &[u32],
    threads: usize,
    guard: ReadGuard,
    depth: &(dyn Fn(u32) -> Depth + Sync),
) -> GpuScan {
    let results = crate::source::scan::par_map(pids, threads, 1, |&pid| {
        read_process(root, pid, guard, depth(pid))
    });
    let mut scan = GpuScan::default();
    for (&pid, r) in pids.iter().zip(results) {
        match r {
            Ok(g) => scan.processes.push(g),
            Err(Error::NoSuchProcess { .. }) => {}
            Err(Error::PermissionDenied { .. }) => scan.restricted.push(pid),
            Err(e) => scan.failed.push((pid, e.to_string())),
        }
    }
    scan
}

/// Whether this machine (or recorded tree) can have DRM or dma-buf fds at
/// all, so `top` can skip reading every process's fds where it cannot.
/// Live: `/dev/dri`, `/dev/dma_heap` or `/dev/udmabuf` exists. Recorded:
/// some process has an `fd_targets` file or an `fd/` directory.
pub(crate) fn worth_reading(root: &ProcRoot, pids: &[u32]) -> bool {
    if root.is_live() {
        return ["/dev/dri", "/dev/dma_heap", "/dev/udmabuf"].iter().any(|p| Path::new(p).exists());
    }
    pids.iter().any(|&pid| {
        let dir = Path::new(&pid.to_string()).to_path_buf();
        root.kind(&dir.join(FD_TARGETS)).is_some() || root.kind(&dir.join("fd")) == Some(Kind::Dir)
    })
}

/// What a capture records of a process's GPU files, so [`read_process`]
/// reads the recording back: `fd_targets` (one `FD<TAB>TARGET` line per
/// DRM or dma-buf fd; empty says "no GPU fds") and each such fd's fdinfo.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct GpuRecording {
    pub fd_targets: String,
    /// (fd, fdinfo bytes); fds that closed meanwhile are left out.
    pub fdinfo: Vec<(u32, Vec<u8>)>,
}

/// Reads what a capture records; `None` when the process's fds cannot
/// be listed (a recorded tree without them).
pub(crate) fn recording(root: &ProcRoot, pid: u32) -> Result<Option<GpuRecording>> {
    let Some(targets) = read_fd_targets(root, pid)? else { return Ok(None) };
    let mut rec = GpuRecording::default();
    for (fd, target) in gpu_fds(&targets) {
        if target.contains('\n') {
            continue;
        }
        let bytes = match root.read(pid, &format!("fdinfo/{fd}")) {
            Ok(b) => b,
            Err(Error::Io { source, .. }) if source.kind() == ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        rec.fdinfo.push((*fd, bytes));
        rec.fd_targets.push_str(&format!("{fd}\t{target}\n"));
    }
    Ok(Some(rec))
}
