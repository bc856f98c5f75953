//! Where GPU memory lives, as the driver names the region it reports it
//! in (`drm-resident-<region>`, Documentation/gpu/drm-usage-stats.rst):
//! in the machine's RAM (inside MemTotal) or on the device (VRAM, or
//! stolen memory the firmware set aside: outside MemTotal either way).

use super::{GpuEntry, GpuProcess, GpuReport};

/// Where a region's bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Residence {
    /// The machine's RAM: i915 `system0`, xe `system` and `gtt`, amdgpu
    /// `gtt` and `cpu`, and the one `memory` region of the drivers of
    /// GPUs that share the machine's RAM (panthor, panfrost, msm, v3d,
    /// lima, etnaviv).
    SystemRam,
    /// Memory of the device: `vram*`, `local*` (i915 lmem), nvidia-smi's
    /// `vram`, and `stolen*` (set aside by the firmware, outside MemTotal).
    Device,
    /// A region name these rules do not know.
    Unknown,
}

impl Residence {
    /// Words for people.
    pub fn label(self) -> &'static str {
        match self {
            Residence::SystemRam => "system RAM",
            Residence::Device => "device memory",
            Residence::Unknown => "where the driver does not say",
        }
    }
}

/// Where `entry`'s bytes live, from its driver and region names.
pub fn residence(entry: &GpuEntry) -> Residence {
    let region = entry.region.as_str();
    let numbered = |prefix: &str| {
        region.strip_prefix(prefix).is_some_and(|n| n.chars().all(|c| c.is_ascii_digit()))
    };
    if region.starts_with("stolen") || numbered("vram") || numbered("local") {
        return Residence::Device;
    }
    if numbered("system") || region == "gtt" || region == "cpu" {
        return Residence::SystemRam;
    }
    let shares_ram =
        ["panthor", "panfrost", "msm", "v3d", "lima", "etnaviv"].contains(&entry.driver.as_str());
    if region == "memory" && shares_ram {
        return Residence::SystemRam;
    }
    Residence::Unknown
}

/// Proportional bytes by where they live, largest first; dma-buf bytes
/// (the rest of `proportional`: buffers no DRM driver seen here exported)
/// apart, as `None`.
fn split(entries: &[GpuEntry], proportional: u64) -> Vec<(Option<Residence>, u64)> {
    let mut by: Vec<(Option<Residence>, u64)> = Vec::new();
    let mut counted = 0u64;
    for e in entries {
        let bytes = e.proportional.unwrap_or(0);
        counted = counted.saturating_add(bytes);
        let r = Some(residence(e));
        match by.iter_mut().find(|(k, _)| *k == r) {
            Some((_, b)) => *b = b.saturating_add(bytes),
            None => by.push((r, bytes)),
        }
    }
    by.push((None, proportional.saturating_sub(counted)));
    by.retain(|(_, b)| *b > 0);
    by.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    by
}

impl GpuProcess {
    /// This process's GPU bytes (its `proportional`) by where they live.
    pub fn by_residence(&self) -> Vec<(Option<Residence>, u64)> {
        split(&self.gpu, self.proportional)
    }
}

impl GpuReport {
    /// The selection's GPU bytes (its `proportional`) by where they live.
    pub fn by_residence(&self) -> Vec<(Option<Residence>, u64)> {
        split(&self.totals, self.proportional)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(driver: &str, region: &str) -> GpuEntry {
        GpuEntry {
            device: "d".into(),
            pdev: None,
            driver: driver.into(),
            region: region.into(),
            memory: Default::default(),
            clients: 1,
            shared_clients: 0,
            proportional: Some(1),
            source: super::super::GpuSource::Fdinfo,
            nvidia_use: None,
        }
    }

    #[test]
    fn regions_live_where_their_driver_says() {
        for (driver, region, want) in [
            ("i915", "system0", Residence::SystemRam),
            ("i915", "local0", Residence::Device),
            ("i915", "stolen-system0", Residence::Device),
            ("xe", "vram0", Residence::Device),
            ("xe", "gtt", Residence::SystemRam),
            ("xe", "system", Residence::SystemRam),
            ("amdgpu", "vram", Residence::Device),
            ("amdgpu", "cpu", Residence::SystemRam),
            ("nvidia", "vram", Residence::Device),
            ("panthor", "memory", Residence::SystemRam),
            ("somegpu", "memory", Residence::Unknown),
            ("xe", "vramish", Residence::Unknown),
        ] {
            assert_eq!(residence(&entry(driver, region)), want, "{driver} {region}");
        }
    }
}
