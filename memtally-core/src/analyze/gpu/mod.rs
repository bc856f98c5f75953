//! GPU memory per process and device, each thing counted once.
//!
//! - A DRM client is one open of a device: `(device, drm-client-id)`,
//!   where the device is `drm-pdev` (else the node, else the driver). A
//!   dup'd fd, an inherited fd, or the same client seen from two processes
//!   is one client. Each process that holds a client shows its figures in
//!   full (like RSS); machine totals count it once; the proportional
//!   figure divides it among its holders (like PSS), so it sums.
//! - A dma-buf is one inode across the machine, whether a process holds an
//!   fd to it or only maps it. A process's `pss` is Σ size ÷ holders.
//! - `nvidia-smi`'s used memory is its own source, one entry per process
//!   and GPU (its UUID the device), graphics and compute alike.
//!
//! The reclaimable figure means the same on Linux and macOS: resident
//! memory the system may take back without asking the process. Linux:
//! `LazyFree` (pages freed with `MADV_FREE`) + `drm-purgeable-*`. macOS:
//! resident bytes of `PURGE=V` (volatile) and `PURGE=E` (empty) regions.

mod build;
mod residence;
mod show;

pub(crate) use build::build;
pub use residence::{residence, Residence};
pub(crate) use show::show_view;
pub use show::GpuShow;

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::model::gpu::{DrmMemory, NvidiaUse, ProcGpu};
use crate::model::Note;

/// Where an entry's figures come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum GpuSource {
    /// `/proc/PID/fdinfo/N` of DRM fds.
    Fdinfo,
    /// `nvidia-smi -q -x`.
    NvidiaSmi,
}

/// One (device, region) of one process, or of the machine.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GpuEntry {
    /// `drm-pdev` (PCI slot), or the node, or the driver: the device key.
    pub device: String,
    /// `drm-pdev`: the PCI slot; `None` for platform devices and nvidia-smi.
    pub pdev: Option<String>,
    /// `drm-driver` (`i915`, `amdgpu`), or `nvidia` for nvidia-smi.
    pub driver: String,
    /// The memory region (`system0`, `vram`, `gtt`); `vram` for nvidia-smi.
    pub region: String,
    /// The `drm-*` figures of those clients added up, in bytes (nvidia-smi's
    /// used memory as `total`); beside the other keys in JSON.
    #[serde(flatten)]
    pub memory: DrmMemory,
    /// Distinct clients added up here.
    pub clients: usize,
    /// Of those, clients another process holds too.
    pub shared_clients: usize,
    /// Resident (else total) bytes, each client divided among the
    /// processes holding it.
    pub proportional: Option<u64>,
    /// Where the figures come from.
    pub source: GpuSource,
    /// nvidia-smi's `<type>` of a process's entry (graphics, compute);
    /// absent elsewhere (DRM entries, the machine's totals).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nvidia_use: Option<NvidiaUse>,
}

/// A process's dma-bufs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DmaBufShare {
    /// Distinct buffers it holds (fd) or maps.
    pub count: usize,
    /// Their sizes added up.
    pub size: u64,
    /// Σ size ÷ processes holding each buffer.
    pub pss: u64,
}

impl DmaBufShare {
    /// Counts one buffer of `size` bytes, `share` of them this holder's.
    /// Saturating: fdinfo sizes are the driver's word (or crafted), and
    /// two of 8 EiB wrapped the sum to a small figure.
    pub(crate) fn add(&mut self, size: u64, share: u64) {
        self.count += 1;
        self.size = self.size.saturating_add(size);
        self.pss = self.pss.saturating_add(share);
    }
}

/// One DRM client as a process holds it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ClientView {
    /// The device key, as in [`GpuEntry::device`].
    pub device: String,
    /// `drm-driver`.
    pub driver: String,
    /// `drm-client-id`; null when the driver prints none.
    pub client_id: Option<u64>,
    /// The process's fds that are this client (a dup'd fd adds one).
    pub fds: Vec<u32>,
    /// Other processes holding the same client.
    pub shared_with: Vec<u32>,
    /// Every key that is not a memory figure, as printed.
    pub extras: BTreeMap<String, String>,
}

/// One process's GPU picture.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GpuProcess {
    /// The process ID.
    pub pid: u32,
    /// Short name (`comm`).
    pub comm: String,
    /// The command line, or `[comm]` when it has none.
    pub command: String,
    /// One entry per (device, driver, region), sorted.
    pub gpu: Vec<GpuEntry>,
    /// The dma-bufs it holds or maps.
    pub dmabuf: DmaBufShare,
    /// Distinct DRM clients it holds (a driver that prints no memory keys
    /// still shows up here).
    pub drm_clients: usize,
    /// Each DRM client it holds: which fds, who else holds it, and the
    /// keys that are not memory (engine time, driver extras).
    pub clients: Vec<ClientView>,
    /// Resident bytes of GPU device and dma-buf mappings (smaps), when read.
    pub mapped: Option<u64>,
    /// Σ `drm-purgeable-*` of its clients, each divided among the
    /// processes holding it (as `proportional` divides the cost), so it
    /// sums over processes.
    pub purgeable: Option<u64>,
    /// `LazyFree` + Σ `drm-purgeable-*`: see the module docs.
    pub reclaimable: Option<u64>,
    /// The one figure `top` shows: proportional DRM bytes + dma-buf PSS
    /// (buffers exported by a DRM driver seen here are left out: they are
    /// already in that driver's `drm-shared-`) + nvidia-smi bytes.
    pub proportional: u64,
    /// Things the reader must know (an fdinfo that could not be read);
    /// worded by the printer, which serializes them.
    #[serde(skip)]
    pub notes: Vec<Note>,
}

/// The whole view.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct GpuReport {
    /// Processes with any GPU memory, largest `proportional` first.
    pub processes: Vec<GpuProcess>,
    /// Per (device, driver, region), each client counted once.
    pub totals: Vec<GpuEntry>,
    /// Every dma-buf once: `pss` equals `size` here.
    pub dmabuf: DmaBufShare,
    /// Σ `proportional` of the processes shown.
    pub proportional: u64,
    /// Things the reader must know: the shown processes' notes, then (from
    /// `usecase::gpu`) files that could not be read and what nvidia-smi said.
    #[serde(skip)]
    pub notes: Vec<Note>,
    /// Processes whose open files could not be listed (permission): the
    /// view is partial without their GPU memory.
    #[serde(skip)]
    pub restricted: usize,
}

impl GpuReport {
    /// Whether some processes' GPU memory is left out (their open files
    /// could not be listed).
    pub fn partial(&self) -> bool {
        self.restricted > 0
    }
}

/// A process to analyse: who, and what was read.
#[derive(Debug, Clone)]
pub(crate) struct GpuInput {
    pub pid: u32,
    pub comm: String,
    pub command: String,
    pub gpu: ProcGpu,
}

pub(crate) type ClientKey = (String, ClientId);

/// One dma-buf across the machine.
#[derive(Debug, Default)]
pub(crate) struct Buffer {
    pub(crate) size: u64,
    /// The size came from fdinfo (not only from a mapping's extent).
    pub(crate) from_fd: bool,
    pub(crate) holders: BTreeSet<u32>,
    pub(crate) exporter: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum ClientId {
    Id(u64),
    /// No `drm-client-id`: cannot be matched, so each fd is its own client.
    Fd(u32, u32),
}

pub(crate) fn client_key(pid: u32, c: &crate::model::gpu::DrmClient) -> ClientKey {
    let id = match c.client_id {
        Some(id) => ClientId::Id(id),
        None => ClientId::Fd(pid, c.fd),
    };
    (c.device().to_string(), id)
}

pub(crate) fn new_entry(c: &crate::model::gpu::DrmClient, region: &str) -> GpuEntry {
    GpuEntry {
        device: c.device().to_string(),
        pdev: c.pdev.clone(),
        driver: c.driver.clone(),
        region: region.to_string(),
        memory: DrmMemory::default(),
        clients: 0,
        shared_clients: 0,
        proportional: None,
        source: GpuSource::Fdinfo,
        nvidia_use: None,
    }
}

/// Σ of the known figures; `None` when none is known.
pub(crate) fn sum_opt(it: impl Iterator<Item = Option<u64>>) -> Option<u64> {
    it.flatten().fold(None, |acc, v| Some(acc.unwrap_or(0u64).saturating_add(v)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::gpu::{DmaBuf, DmaBufMapping, DrmClient};

    fn client(fd: u32, id: Option<u64>, region: &str, total: u64, resident: u64) -> DrmClient {
        let mut c = DrmClient {
            fd,
            node: Some("/dev/dri/renderD128".into()),
            driver: "i915".into(),
            pdev: Some("0000:00:02.0".into()),
            client_id: id,
            ..Default::default()
        };
        c.regions.insert(
            region.into(),
            DrmMemory {
                total: Some(total),
                resident: Some(resident),
                purgeable: Some(64),
                ..Default::default()
            },
        );
        c
    }

    fn input(pid: u32, gpu: ProcGpu) -> GpuInput {
        GpuInput { pid, comm: format!("p{pid}"), command: format!("p{pid}"), gpu }
    }

    /// `n` DRM regions in one client (a crafted fdinfo), shown within `bound`.
    fn many_drm_regions_are_shown(n: usize, bound: std::time::Duration) {
        let mut c = client(4, Some(7), "r0", 10, 8);
        for i in 1..n {
            c.regions.insert(format!("r{i}"), DrmMemory { total: Some(10), ..Default::default() });
        }
        let other = client(3, Some(7), "r5", 10, 8);
        let a = ProcGpu { pid: 10, drm: vec![c], ..Default::default() };
        let b = ProcGpu { pid: 11, drm: vec![other], ..Default::default() };
        let started = std::time::Instant::now();
        let shown = show::show_view(&[input(10, a), input(11, b)], &|pid| pid == 10).unwrap();
        let took = started.elapsed();
        assert_eq!(shown.entries.len(), n);
        // Client 7 is held by both: each region's share is half its cost.
        assert!(shown.entries.iter().all(|e| e.proportional.is_some()));
        assert!(took < bound, "{n} regions took {took:?}");
    }

    /// 10,000 DRM regions in one client: every one shown, with its share.
    #[test]
    fn ten_thousand_drm_regions_are_shown_with_their_shares() {
        many_drm_regions_are_shown(10_000, std::time::Duration::from_secs(30));
    }

    /// 100,000 DRM regions in one client: the shown view looks each
    /// region's share up instead of searching every machine-wide entry
    /// per region (that was 10^10 comparisons, over 120 s). In debug this
    /// takes a second or more; 30 s is the bound. In the stress run
    /// (`scripts/stress/run.sh`).
    #[test]
    #[ignore = "stress: seconds in debug; scripts/stress/run.sh runs it"]
    fn stress_a_hundred_thousand_drm_regions_are_shown_in_linear_time() {
        many_drm_regions_are_shown(100_000, std::time::Duration::from_secs(30));
    }

    #[test]
    fn clients_count_once_and_share_proportionally() {
        let a = ProcGpu {
            pid: 10,
            // fd 4 and its dup, fd 5: one client.
            drm: vec![
                client(4, Some(7), "system0", 1000, 800),
                client(5, Some(7), "system0", 1000, 800),
            ],
            lazy_free: Some(4096),
            ..Default::default()
        };
        // Same client inherited by pid 11, plus its own client without an id.
        let b = ProcGpu {
            pid: 11,
            drm: vec![client(3, Some(7), "system0", 1000, 800), client(8, None, "system0", 10, 6)],
            ..Default::default()
        };
        let r = build(&[input(10, a), input(11, b)], &|_| true);
        let p10 = r.processes.iter().find(|p| p.pid == 10).unwrap();
        let p11 = r.processes.iter().find(|p| p.pid == 11).unwrap();
        assert_eq!(p10.gpu[0].memory.total, Some(1000));
        assert_eq!(p10.gpu[0].clients, 1);
        assert_eq!(p10.gpu[0].shared_clients, 1);
        assert_eq!(p10.proportional, 400);
        assert_eq!(p11.gpu[0].memory.total, Some(1010));
        assert_eq!(p11.gpu[0].clients, 2);
        assert_eq!(p11.proportional, 406);
        assert_eq!(r.totals.len(), 1);
        assert_eq!(r.totals[0].memory.total, Some(1010));
        assert_eq!(r.totals[0].memory.resident, Some(806));
        assert_eq!(r.totals[0].clients, 2);
        assert_eq!(r.proportional, 806, "proportional figures add up to the total");
        // Client 7's 64 purgeable bytes are halved between its holders,
        // as its cost is; pid 11's own client's are its alone.
        assert_eq!(p10.purgeable, Some(32));
        assert_eq!(p11.purgeable, Some(32 + 64));
        assert_eq!(p10.reclaimable, Some(4096 + 32));
        assert_eq!(p11.reclaimable, Some(96));
        assert_eq!(r.totals[0].memory.purgeable, Some(128), "the machine counts each client once");
        assert_eq!(p10.gpu[0].memory.purgeable, Some(64), "an entry shows its clients whole");
    }

    #[test]
    fn nvidia_smi_memory_counts_once_per_gpu_in_the_machine_table() {
        use crate::model::gpu::{NvidiaMemory, NvidiaUsed};
        let on = |uuid: &str, kind, used| NvidiaMemory { gpu_uuid: uuid.into(), kind, used };
        let a = ProcGpu {
            pid: 10,
            nvidia: vec![
                on("GPU-a", NvidiaUse::Graphics, NvidiaUsed::Bytes(300 << 20)),
                on("GPU-b", NvidiaUse::Graphics, NvidiaUsed::Bytes(50 << 20)),
            ],
            ..Default::default()
        };
        let b = ProcGpu {
            pid: 11,
            nvidia: vec![on("GPU-a", NvidiaUse::Compute, NvidiaUsed::Bytes(100 << 20))],
            ..Default::default()
        };
        let c = ProcGpu {
            pid: 12,
            nvidia: vec![on("GPU-b", NvidiaUse::Compute, NvidiaUsed::Unknown("N/A".into()))],
            ..Default::default()
        };
        let r = build(&[input(10, a), input(11, b), input(12, c)], &|_| true);
        let devices: Vec<&str> = r.totals.iter().map(|t| t.device.as_str()).collect();
        assert_eq!(devices, ["GPU-a", "GPU-b"]);
        assert_eq!(r.totals[0].memory.total, Some(400 << 20));
        assert_eq!(r.totals[0].clients, 2);
        assert_eq!(r.totals[0].proportional, Some(400 << 20));
        assert_eq!(r.totals[1].memory.total, Some(50 << 20), "the unknown figure adds nothing");
        assert_eq!(r.totals[1].clients, 2);
        assert_eq!(r.proportional, 450 << 20);
        let p10 = r.processes.iter().find(|p| p.pid == 10).unwrap();
        assert_eq!(p10.gpu.len(), 2);
        assert_eq!(p10.gpu[0].memory.total, Some(300 << 20));
        assert_eq!(p10.gpu[0].nvidia_use, Some(NvidiaUse::Graphics));
        assert_eq!(p10.proportional, 350 << 20);
        let p12 = r.processes.iter().find(|p| p.pid == 12).expect("shown, its figure unknown");
        assert_eq!(p12.gpu[0].memory.total, None);
        assert_eq!(p12.gpu[0].proportional, None);
        assert_eq!(p12.proportional, 0);
    }

    #[test]
    fn dmabufs_are_shared_by_holders() {
        let buf = |fd, inode, size, exp: &str| DmaBuf {
            fd,
            inode,
            size,
            count: Some(1),
            exporter: Some(exp.into()),
            name: None,
        };
        let a =
            ProcGpu { pid: 1, dmabufs: vec![buf(3, 100, 3000, "system")], ..Default::default() };
        let b = ProcGpu {
            pid: 2,
            dmabufs: vec![buf(4, 100, 3000, "system"), buf(5, 100, 3000, "system")],
            ..Default::default()
        };
        // pid 3 only maps the buffer; it also holds one exported by i915,
        // whose DRM client is on the machine.
        let mut c = ProcGpu {
            pid: 3,
            dmabuf_maps: vec![DmaBufMapping { inode: 100, size: 3000 }],
            dmabufs: vec![buf(6, 200, 500, "i915")],
            ..Default::default()
        };
        c.drm.push(client(9, Some(1), "system0", 0, 0));
        let r = build(&[input(1, a), input(2, b), input(3, c)], &|_| true);
        let get = |pid| r.processes.iter().find(|p| p.pid == pid).unwrap();
        assert_eq!(get(1).dmabuf, DmaBufShare { count: 1, size: 3000, pss: 1000 });
        assert_eq!(get(2).dmabuf, DmaBufShare { count: 1, size: 3000, pss: 1000 });
        assert_eq!(get(3).dmabuf, DmaBufShare { count: 2, size: 3500, pss: 1500 });
        assert_eq!(get(3).proportional, 1000, "the i915 buffer is in drm figures already");
        assert_eq!(r.dmabuf, DmaBufShare { count: 2, size: 3500, pss: 3500 });
        // A selection keeps machine-wide shares.
        let only = build(
            &[
                input(
                    1,
                    ProcGpu {
                        pid: 1,
                        dmabufs: vec![buf(3, 100, 3000, "system")],
                        ..Default::default()
                    },
                ),
                input(
                    2,
                    ProcGpu {
                        pid: 2,
                        dmabufs: vec![buf(3, 100, 3000, "system")],
                        ..Default::default()
                    },
                ),
            ],
            &|pid| pid == 2,
        );
        assert_eq!(only.processes.len(), 1);
        assert_eq!(only.processes[0].dmabuf.pss, 1500);
    }

    /// Two dma-bufs of 8 EiB each (fdinfo `size:` is the driver's word,
    /// or a recorded tree's): the sums wrapped to 0 (a panic with
    /// overflow checks on).
    #[test]
    fn dmabuf_sums_saturate() {
        let buf = |fd, inode| DmaBuf {
            fd,
            inode,
            size: 1 << 63,
            count: Some(1),
            exporter: Some("system".into()),
            name: None,
        };
        let a = ProcGpu { pid: 1, dmabufs: vec![buf(3, 100), buf(4, 101)], ..Default::default() };
        let r = build(&[input(1, a)], &|_| true);
        let want = DmaBufShare { count: 2, size: u64::MAX, pss: u64::MAX };
        assert_eq!(r.processes[0].dmabuf, want);
        assert_eq!(r.dmabuf, want);
        assert_eq!(r.processes[0].proportional, u64::MAX);
    }
}
