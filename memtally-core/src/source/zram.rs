//! The zram devices' `mm_stat`: the RAM each compressed block device
//! (most often swap) holds, which no meminfo field counts, so that without
//! it a zram pool is in the machine waterfall's remainder. Live:
//! `/sys/block/zramN/mm_stat`; a recording: `DIR/sys/block/zramN/mm_stat`.

use std::ffi::OsString;
use std::path::Path;

use crate::model::ZramStat;
use crate::source::bounded::read_bounded;
use crate::source::parse::zram_mm_stat;
use crate::source::ProcRoot;

/// What the zram devices say, sorted by number (zram0, zram1, … zram10).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ZramDevices {
    /// (device name, its mm_stat) of each device that could be read.
    pub devices: Vec<(String, ZramStat)>,
    /// Devices whose mm_stat could not be read or made no sense, with why.
    pub unreadable: Vec<(String, String)>,
}

/// The `sys/block` directory of `root`: the live one, or a recording's.
fn block_dir(root: &ProcRoot) -> &'static Path {
    Path::new(if root.is_live() { "/sys/block" } else { "sys/block" })
}

/// The device's number, for `zramN` names only.
fn number(name: &str) -> Option<u32> {
    let n = name.strip_prefix("zram")?;
    (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).then(|| n.parse().ok()).flatten()
}

/// The zram device names under `root` (`zram0`, …), sorted by number.
pub fn names(root: &ProcRoot) -> Vec<String> {
    let dir = block_dir(root);
    let entries: Vec<OsString> = if root.is_live() {
        std::fs::read_dir(dir)
            .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name()).collect())
            .unwrap_or_default()
    } else {
        root.list(dir).unwrap_or_default()
    };
    let mut out: Vec<(u32, String)> = entries
        .into_iter()
        .filter_map(|n| {
            let n = n.to_string_lossy().into_owned();
            Some((number(&n)?, n))
        })
        .collect();
    out.sort();
    out.into_iter().map(|(_, n)| n).collect()
}

/// The raw `mm_stat` of one device (bounded, in a recording a regular
/// file beneath the tree).
pub fn read_raw(root: &ProcRoot, name: &str) -> std::io::Result<Vec<u8>> {
    let file = block_dir(root).join(name).join("mm_stat");
    if root.is_live() {
        // `/sys/block/zramN` is a link into /sys/devices (the kernel's own).
        let mut f = std::fs::File::open(&file)?;
        let mut out = Vec::new();
        read_bounded(&mut f, &mut out, MAX_MM_STAT)?;
        Ok(out)
    } else {
        root.read_rel(&file, MAX_MM_STAT)
    }
}

/// Every zram device's mm_stat.
pub fn read(root: &ProcRoot) -> ZramDevices {
    let mut out = ZramDevices::default();
    for name in names(root) {
        match read_raw(root, &name)
            .map_err(|e| e.to_string())
            .and_then(|raw| zram_mm_stat::parse(&raw).map_err(|e| format!("mm_stat: {e}")))
        {
            Ok(stat) => out.devices.push((name, stat)),
            Err(why) => out.unreadable.push((name, why)),
        }
    }
    out
}

/// mm_stat is one line of nine numbers: well under this.
const MAX_MM_STAT: usize = 4096;
