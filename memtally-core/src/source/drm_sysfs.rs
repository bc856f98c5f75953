//! System memory GPU drivers report in sysfs: amdgpu's GTT (system pages
//! the GPU maps), `DEVICE/mem_info_gtt_used` per card. Nothing in meminfo
//! counts these pages, so without this they are in the waterfall's
//! remainder. Live: `/sys/class/drm`; a recording: `DIR/sys/class/drm`.

use std::path::Path;

use crate::source::bounded::read_bounded;
use crate::source::ProcRoot;

/// (card, bytes) of every card that reports GTT use, sorted by card.
pub fn gtt_used(root: &ProcRoot) -> Vec<(String, u64)> {
    // Live, `card0` is a link into /sys/devices (the kernel's own); in a
    // recording nothing is followed and every file is bounded.
    let live = root.is_live();
    let dir = Path::new(if live { "/sys/class/drm" } else { "sys/class/drm" });
    let names = if live {
        std::fs::read_dir(dir)
            .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name()).collect())
            .unwrap_or_default()
    } else {
        root.list(dir).unwrap_or_default()
    };
    let mut out: Vec<(String, u64)> = names
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
            let file = dir.join(&name).join("device/mem_info_gtt_used");
            let text = if live {
                let mut f = std::fs::File::open(&file).ok()?;
                let mut out = Vec::new();
                read_bounded(&mut f, &mut out, MAX_NUMBER).ok()?;
                out
            } else {
                root.read_rel(&file, MAX_NUMBER).ok()?
            };
            Some((name, String::from_utf8_lossy(&text).trim().parse().ok()?))
        })
        .collect();
    out.sort();
    out
}

/// A file holding one number is a few bytes.
const MAX_NUMBER: usize = 4096;
