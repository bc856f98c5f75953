//! System memory GPU drivers report in sysfs: amdgpu's GTT (system pages
//! the GPU maps), `DEVICE/mem_info_gtt_used` per card. Nothing in meminfo
//! counts these pages, so without this they are in the waterfall's
//! remainder. Live: `/sys/class/drm`; a recording: `DIR/sys/class/drm`.

use std::path::Path;

use crate::source::ProcRoot;

/// (card, bytes) of every card that reports GTT use, sorted by card.
pub(crate) fn gtt_used(root: &ProcRoot) -> Vec<(String, u64)> {
    let mut out: Vec<(String, u64)> = root
        .sys_list("class/drm")
        .into_iter()
        .filter_map(|name| {
            let name = name.to_string_lossy().into_owned();
            // card0, not card0-DP-1 (connectors) or renderD128.
            if !name
                .strip_prefix("card")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            {
                return None;
            }
            let file = Path::new("class/drm").join(&name).join("device/mem_info_gtt_used");
            let text = root.sys_read(&file, MAX_NUMBER).ok()?;
            Some((name, String::from_utf8_lossy(&text).trim().parse().ok()?))
        })
        .collect();
    out.sort();
    out
}

/// A file holding one number is a few bytes.
const MAX_NUMBER: usize = 4096;
