//! Swap beside the machine waterfall: swap space (total, used, the swap
//! cache), and the RAM that compressed swap holds: zswap's pool (meminfo
//! `Zswap`) and zram devices (`mm_stat`'s mem_used_total). Neither is in
//! any other meminfo field, so each is a waterfall line of its own (group
//! `swap`), which takes its bytes out of `unexplained`.

use serde::Serialize;

use super::{Line, Machine, MachineLine};
use crate::analyze::signed::bytes as signed;
use crate::model::{MemInfo, ZramStat};

/// Swap as meminfo and the zram devices give it, in bytes.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SwapFigures {
    /// `SwapTotal`: swap space, on disk or in zram.
    pub total: u64,
    /// `SwapTotal − SwapFree`: swap space in use (as `free` prints it).
    pub used: u64,
    /// `SwapCached`: pages in RAM that also have a copy in swap (the
    /// `swap_cache` line).
    pub cached: Option<u64>,
    /// `Zswap`: RAM zswap's compressed pool takes (the `zswap` line);
    /// absent on kernels without zswap.
    pub zswap: Option<u64>,
    /// `Zswapped`: what that pool holds, uncompressed.
    pub zswapped: Option<u64>,
    /// Every zram device's `mm_stat` (swap or not), sorted by number.
    pub zram: Vec<ZramDevice>,
    /// zram devices whose mm_stat could not be read: their RAM stays in
    /// `unexplained`.
    pub zram_unreadable: Vec<String>,
}

/// One zram device: its name and `mm_stat`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ZramDevice {
    /// `zram0`, …
    pub name: String,
    /// Its mm_stat, in bytes.
    #[serde(flatten)]
    pub stat: ZramStat,
}

impl SwapFigures {
    /// Σ mem_used_total over the zram devices: the RAM they use.
    pub fn zram_ram(&self) -> u64 {
        self.zram.iter().map(|d| d.stat.mem_used_total).fold(0, u64::saturating_add)
    }

    /// Σ orig_data_size over the zram devices: what they hold, uncompressed.
    pub fn zram_stored(&self) -> u64 {
        self.zram.iter().map(|d| d.stat.orig_data_size).fold(0, u64::saturating_add)
    }

    /// Σ orig / Σ compr over the zram devices; `None` when they hold nothing.
    pub fn zram_ratio(&self) -> Option<f64> {
        let compr = self.zram.iter().map(|d| d.stat.compr_data_size).fold(0, u64::saturating_add);
        (compr > 0).then(|| self.zram_stored() as f64 / compr as f64)
    }

    /// Zswapped / Zswap; `None` when the pool is empty or absent.
    pub fn zswap_ratio(&self) -> Option<f64> {
        let (pool, held) = (self.zswap?, self.zswapped?);
        (pool > 0).then(|| held as f64 / pool as f64)
    }
}

/// Swap from meminfo; `None` when it has no `SwapTotal`.
pub(super) fn from_meminfo(m: &MemInfo) -> Option<SwapFigures> {
    let total = m.get("SwapTotal")?;
    Some(SwapFigures {
        total,
        used: total.saturating_sub(m.get("SwapFree").unwrap_or(total)),
        cached: m.get("SwapCached"),
        zswap: m.get("Zswap"),
        zswapped: m.get("Zswapped"),
        zram: Vec::new(),
        zram_unreadable: Vec::new(),
    })
}

impl Machine {
    /// Adds the zram devices: their figures to `swap`, and their RAM (Σ
    /// mem_used_total) as the line `zram`, after the other swap lines;
    /// `unexplained` shrinks by as much. No devices: no line.
    pub fn add_zram(&mut self, devices: Vec<(String, ZramStat)>, unreadable: Vec<String>) {
        if devices.is_empty() && unreadable.is_empty() {
            return;
        }
        let swap = self.swap.get_or_insert_with(SwapFigures::default);
        swap.zram = devices.into_iter().map(|(name, stat)| ZramDevice { name, stat }).collect();
        swap.zram_unreadable = unreadable;
        if swap.zram.is_empty() {
            return;
        }
        let names: Vec<&str> = swap.zram.iter().map(|d| d.name.as_str()).collect();
        let ratio = swap
            .zram_ratio()
            .map(|r| format!(", its data compressed {r:.1}:1"))
            .unwrap_or_default();
        let source = format!(
            "Σ mem_used_total of /sys/block/{{{}}}/mm_stat: RAM the zram devices use{ratio}",
            names.join(",")
        );
        let bytes = swap.zram_ram();
        self.insert_line(
            &[Line::Zswap, Line::SwapCache],
            MachineLine::new(Line::Zram, signed(bytes), false, source),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::super::machine;
    use super::Line;
    use crate::model::ZramStat;

    const KB: u64 = 1024;

    fn meminfo(text: &str) -> crate::model::MemInfo {
        crate::source::parse::meminfo::parse(text.as_bytes()).unwrap()
    }

    const BASE: &str = "MemTotal: 1000000 kB\nMemFree: 500000 kB\nBuffers: 1000 kB\nCached: 20000 kB\nSwapCached: 300 kB\nAnonPages: 40000 kB\nShmem: 500 kB\nSlab: 5000 kB\nSReclaimable: 3000 kB\nSUnreclaim: 2000 kB\nSwapTotal: 4194300 kB\nSwapFree: 4000000 kB\nZswap: 2048 kB\nZswapped: 8192 kB\n";

    #[test]
    fn swap_space_and_zswap_from_meminfo() {
        let mm = machine(&meminfo(BASE), &[]).unwrap();
        let s = mm.swap.as_ref().unwrap();
        assert_eq!((s.total, s.used, s.cached), (4194300 * KB, 194300 * KB, Some(300 * KB)));
        assert_eq!(s.zswap_ratio(), Some(4.0));
        assert_eq!(mm.line(Line::Zswap), Some(2048 * 1024));
        let groups: Vec<&str> = mm.groups().iter().map(|g| g.0.name()).collect();
        assert_eq!(groups, ["free", "processes", "cache", "swap", "kernel", "unexplained"]);
        assert_eq!(mm.lines.iter().map(|l| l.bytes).sum::<i64>(), mm.total as i64);
    }

    #[test]
    fn zram_leaves_unexplained_and_sits_with_the_swap_lines() {
        let mut mm = machine(&meminfo(BASE), &[]).unwrap();
        let before = mm.unexplained;
        let dev = |orig: u64, compr: u64, used: u64| ZramStat {
            orig_data_size: orig,
            compr_data_size: compr,
            mem_used_total: used,
            ..Default::default()
        };
        mm.add_zram(
            vec![
                ("zram0".into(), dev(300 << 20, 100 << 20, 110 << 20)),
                ("zram1".into(), dev(0, 0, 4096)),
            ],
            vec!["zram2".into()],
        );
        let want = (110 << 20) + 4096;
        assert_eq!(mm.line(Line::Zram), Some(want));
        assert_eq!(mm.unexplained, before - want);
        assert_eq!(mm.line(Line::Unexplained), Some(before - want));
        assert_eq!(mm.lines.iter().map(|l| l.bytes).sum::<i64>(), mm.total as i64);
        let at = |n: Line| mm.lines.iter().position(|l| l.name == n).unwrap();
        assert_eq!(at(Line::Zram), at(Line::Zswap) + 1);
        let s = mm.swap.as_ref().unwrap();
        assert_eq!(s.zram_ratio(), Some(3.0));
        assert_eq!(s.zram_unreadable, ["zram2"]);
        assert!(
            mm.lines[at(Line::Zram)].source.contains("{zram0,zram1}"),
            "{:?}",
            mm.lines[at(Line::Zram)]
        );
    }

    #[test]
    fn no_zram_device_no_line() {
        let mut mm = machine(&meminfo(BASE), &[]).unwrap();
        let before = mm.clone();
        mm.add_zram(Vec::new(), Vec::new());
        assert_eq!(mm.lines, before.lines);
        assert!(mm.line(Line::Zram).is_none());
    }
}
