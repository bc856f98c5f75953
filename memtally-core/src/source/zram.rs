//! The zram devices' `mm_stat`: the RAM each compressed block device
//! (most often swap) holds, which no meminfo field counts, so that without
//! it a zram pool is in the machine waterfall's remainder. Live:
//! `/sys/block/zramN/mm_stat`; a recording: `DIR/sys/block/zramN/mm_stat`.

use std::path::Path;

use crate::model::ZramStat;
use crate::source::parse::zram_mm_stat;
use crate::source::ProcRoot;

/// What the zram devices say, sorted by number (zram0, zram1, … zram10).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ZramDevices {
    /// (device name, its mm_stat) of each device that could be read.
    pub devices: Vec<(String, ZramStat)>,
    /// Devices whose mm_stat could not be read or made no sense, with why.
    pub unreadable: Vec<(String, String)>,
}

/// The device's number, for `zramN` names only.
fn number(name: &str) -> Option<u32> {
    let n = name.strip_prefix("zram")?;
    (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).then(|| n.parse().ok()).flatten()
}

/// The zram device names under `root` (`zram0`, …), sorted by number.
pub fn names(root: &ProcRoot) -> Vec<String> {
    let mut out: Vec<(u32, String)> = root
        .sys_list("block")
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
pub(crate) fn read_raw(root: &ProcRoot, name: &str) -> std::io::Result<Vec<u8>> {
    root.sys_read(&Path::new("block").join(name).join("mm_stat"), MAX_MM_STAT)
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
