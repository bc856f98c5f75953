//! GPU memory as the kernel publishes it per open file: DRM clients
//! (`/proc/PID/fdinfo/N` of a `/dev/dri/*` fd) and dma-buf buffers
//! (fdinfo of a dma-buf fd). Plain data; the dedupe across fds and
//! processes lives in `analyze::gpu`.

use std::collections::BTreeMap;

use serde::Serialize;

/// The memory figures of one region (`drm-*-<region>`) of one DRM client,
/// in bytes. A figure the driver does not print is `None`, never `0`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DrmMemory {
    /// `drm-total-<region>`: private + shared buffers, resident or not.
    pub total: Option<u64>,
    /// `drm-shared-<region>`: buffers shared with another client (exported or imported).
    pub shared: Option<u64>,
    /// `drm-resident-<region>`, or the deprecated `drm-memory-<region>`
    /// (amdgpu) when the driver prints no `drm-resident-`; never both added.
    pub resident: Option<u64>,
    /// `drm-purgeable-<region>`: resident and purgeable.
    pub purgeable: Option<u64>,
    /// `drm-active-<region>`: busy on an engine right now.
    pub active: Option<u64>,
}

impl DrmMemory {
    /// Adds another client's figures; a figure known on either side stays known.
    pub(crate) fn add(&mut self, o: &DrmMemory) {
        use super::sizes::add_opt;
        add_opt(&mut self.total, o.total);
        add_opt(&mut self.shared, o.shared);
        add_opt(&mut self.resident, o.resident);
        add_opt(&mut self.purgeable, o.purgeable);
        add_opt(&mut self.active, o.active);
    }

    /// What the client costs: resident bytes, or the total where the
    /// driver does not say what is resident.
    pub(crate) fn cost(&self) -> Option<u64> {
        self.resident.or(self.total)
    }
}

/// One DRM fd's fdinfo.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DrmClient {
    /// The fd number it was read from.
    pub fd: u32,
    /// The device node the fd points at (`/dev/dri/renderD128`), when known.
    pub node: Option<String>,
    /// `drm-driver` (`i915`, `xe`, `amdgpu`, `panthor`).
    pub driver: String,
    /// `drm-pdev`: the PCI slot (`0000:00:02.0`); platform devices have none.
    pub pdev: Option<String>,
    /// `drm-client-id`: one per open of the device, shared by dup'd and
    /// inherited fds.
    pub client_id: Option<u64>,
    /// Memory by region name (`system`, `vram`, `gtt`, `memory`, `stolen-system`).
    pub regions: BTreeMap<String, DrmMemory>,
    /// Every other key as printed (engine times, cycles, driver-specific
    /// keys such as `amd-evicted-vram`), in file order.
    pub extras: Vec<(String, String)>,
}

impl DrmClient {
    /// The device this client belongs to: the PCI slot, else the node, else the driver.
    pub(crate) fn device(&self) -> &str {
        self.pdev.as_deref().or(self.node.as_deref()).unwrap_or(&self.driver)
    }
}

/// One dma-buf fd's fdinfo.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DmaBuf {
    /// The fd number it was read from.
    pub fd: u32,
    /// `ino`: the buffer's inode, the same in every process holding it.
    pub inode: u64,
    /// `size` in bytes.
    pub size: u64,
    /// `count`: the file's reference count in the kernel.
    pub count: Option<u64>,
    /// `exp_name`: who exported it (`system`, `i915`, `udmabuf`, a v4l2 driver).
    pub exporter: Option<String>,
    /// `name`, when userspace named the buffer.
    pub name: Option<String>,
}

/// A dma-buf a process maps (smaps/maps `/dmabuf:` or `anon_inode:dmabuf`)
/// whether or not it still holds an fd to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(crate) struct DmaBufMapping {
    pub inode: u64,
    /// Bytes of address space the mapping covers.
    pub size: u64,
}

/// Everything read of one process's GPU files.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(crate) struct ProcGpu {
    pub pid: u32,
    /// DRM fds, one per fd (dup'd fds appear more than once here).
    pub drm: Vec<DrmClient>,
    /// dma-buf fds, one per fd.
    pub dmabufs: Vec<DmaBuf>,
    /// dma-buf mappings found in the memory map.
    pub dmabuf_maps: Vec<DmaBufMapping>,
    /// Resident bytes of GPU device mappings (`/dev/dri/*`, `/dev/nvidia*`,
    /// `/dev/kgsl*`, `/dev/mali*`) from smaps, when read.
    pub mapped: Option<u64>,
    /// `LazyFree` from smaps_rollup, when read (for the reclaimable figure).
    pub lazy_free: Option<u64>,
    /// What `nvidia-smi` lists for the process, one entry per GPU; empty
    /// when the tool did not run or did not list it.
    pub nvidia: Vec<NvidiaMemory>,
    /// Why `smaps` was not read (the exporter's guard), if it was not.
    #[serde(skip)]
    pub limited: Option<crate::model::guard::Limited>,
    /// Things the reader must know (an fdinfo that could not be parsed).
    #[serde(skip)]
    pub notes: Vec<crate::model::Note>,
}

impl ProcGpu {
    /// Whether anything GPU-related was found.
    pub(crate) fn is_empty(&self) -> bool {
        self.drm.is_empty()
            && self.dmabufs.is_empty()
            && self.dmabuf_maps.is_empty()
            && self.nvidia.is_empty()
    }
}

/// What a process uses an NVIDIA GPU for: `<type>` in `nvidia-smi -q -x`
/// (`G`, `C`, `C+G`, `M`, `M+C`, as its manual lists them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum NvidiaUse {
    /// `G`: a graphics context (a compositor, a browser, a game).
    Graphics,
    /// `C`: a compute context (CUDA).
    Compute,
    /// `C+G`: both.
    ComputeAndGraphics,
    /// `M`: an MPS (Multi-Process Service) compute context.
    Mps,
    /// `M+C`: MPS and plain compute contexts.
    MpsAndCompute,
}

impl NvidiaUse {
    /// The word the views print (as JSON spells it).
    pub fn word(self) -> &'static str {
        match self {
            NvidiaUse::Graphics => "graphics",
            NvidiaUse::Compute => "compute",
            NvidiaUse::ComputeAndGraphics => "compute-and-graphics",
            NvidiaUse::Mps => "mps",
            NvidiaUse::MpsAndCompute => "mps-and-compute",
        }
    }
}

/// A used-memory figure `nvidia-smi` gave, or why it gave none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum NvidiaUsed {
    /// Bytes.
    Bytes(u64),
    /// No figure: what it printed instead (`N/A`, `[Insufficient Permissions]`).
    Unknown(String),
}

/// One process's memory on one NVIDIA GPU, as `nvidia-smi -q -x` lists it
/// (several `<process_info>` of one process on one GPU, MIG instances, added up).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NvidiaMemory {
    /// The GPU's `<uuid>` (`GPU-…`).
    pub gpu_uuid: String,
    /// What the process uses it for.
    pub kind: NvidiaUse,
    /// Its `<used_memory>`.
    pub used: NvidiaUsed,
}
