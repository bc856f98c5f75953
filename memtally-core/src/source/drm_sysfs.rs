//! System memory GPU drivers report in sysfs: amdgpu's GTT (system pages
//! the GPU maps), `DEVICE/mem_info_gtt_used` per card. Nothing in meminfo
//! counts these pages, so without this they are in the waterfall's
//! remainder. Live: `/sys/class/drm`; a recording: `DIR/sys/class/drm`.

use crate::source::ProcRoot;

/// (card, bytes) of every card that reports GTT use, sorted by card.
pub fn gtt_used(root: &ProcRoot) -> Vec<(String, u64)> {
    let dir = if root.is_live() {
        std::path::PathBuf::from("/sys/class/drm")
    } else {
        root.path().join("sys/class/drm")
    };
    let Ok(entries) = std::fs::read_dir(&dir) else { return Vec::new() };
    let mut out: Vec<(String, u64)> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            // card0, not card0-DP-1 (connectors) or renderD128.
            if !name
                .strip_prefix("card")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            {
                return None;
            }
            let text = std::fs::read_to_string(e.path().join("device/mem_info_gtt_used")).ok()?;
            Some((name, text.trim().parse().ok()?))
        })
        .collect();
    out.sort();
    out
}
