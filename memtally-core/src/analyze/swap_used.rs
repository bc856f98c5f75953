//! The machine's swap used (`SwapTotal − SwapFree`), taken apart so it
//! reconciles with what the processes' SWAP PSS adds up to: every swap
//! slot in use is either a process's (SwapPss, and swapped shared memory
//! counted once: `shmem_swap`), a page in swap and in RAM at once (the
//! swap cache, whose slot a process that maps the page no longer counts
//! as `Swap`), or the rest: swapped shared memory that no process maps
//! (a tmpfs file, a SysV segment nobody attaches) and the swap of the
//! processes that could not be read. Pure: meminfo and the processes in.

use serde::Serialize;

use crate::model::{MemInfo, ProcMemory};

/// One part of swap used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SwapPart {
    /// What the part is.
    pub name: &'static str,
    /// Bytes, never below 0; the parts add up to `used` exactly.
    pub bytes: u64,
    /// Where the figure comes from.
    pub source: String,
}

/// Swap used, by part.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SwapUsed {
    /// `SwapTotal − SwapFree`.
    pub used: u64,
    /// Σ (SwapPss + shmem_swap) of the processes read, as they gave it
    /// (it may pass `used` by what changed between the reads: then the
    /// `processes` part stops at `used`).
    pub processes_swap: u64,
    /// The parts: `processes`, `swap_cache`, `unmapped_or_unread`.
    pub parts: Vec<SwapPart>,
}

/// Swap used taken apart; `None` where meminfo has no swap figures or
/// no swap is in use.
pub fn swap_used(m: &MemInfo, processes: &[ProcMemory]) -> Option<SwapUsed> {
    let used = m.get("SwapTotal")?.saturating_sub(m.get("SwapFree")?);
    if used == 0 {
        return None;
    }
    let read: Vec<&ProcMemory> = processes.iter().filter(|p| p.sizes.pss.is_some()).collect();
    let unread = processes.len() - read.len();
    let counted = read
        .iter()
        .map(|p| p.sizes.swap_pss.unwrap_or(0).saturating_add(p.sizes.shmem_swap.unwrap_or(0)))
        .fold(0u64, u64::saturating_add);
    let mine = counted.min(used);
    let cache = m.get("SwapCached").unwrap_or(0).min(used - mine);
    let rest = used - mine - cache;
    let parts = vec![
        SwapPart {
            name: "processes",
            bytes: mine,
            source: format!(
                "Σ SwapPss + shmem_swap of the {} processes read (their SWAP PSS)",
                read.len()
            ),
        },
        SwapPart {
            name: "swap_cache",
            bytes: cache,
            source: "SwapCached: in swap and in RAM at once".into(),
        },
        SwapPart {
            name: "unmapped_or_unread",
            bytes: rest,
            source: format!(
                "the rest: swapped shared memory no process maps (tmpfs files, SysV segments), and the swap of {unread} processes not read"
            ),
        },
    ];
    Some(SwapUsed { used, processes_swap: counted, parts })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::test_support::rollup_process;

    fn meminfo(text: &str) -> MemInfo {
        crate::source::parse::meminfo::parse(text.as_bytes()).unwrap()
    }

    #[test]
    fn the_parts_add_up_to_swap_used_and_none_is_negative() {
        let m = meminfo("SwapTotal: 1000 kB\nSwapFree: 400 kB\nSwapCached: 50 kB\n");
        let mut a = rollup_process(1, 0, 0);
        a.sizes.swap_pss = Some(300 << 10);
        a.sizes.shmem_swap = Some(100 << 10);
        let s = swap_used(&m, &[a.clone()]).unwrap();
        assert_eq!(s.used, 600 << 10);
        let bytes: Vec<u64> = s.parts.iter().map(|p| p.bytes).collect();
        assert_eq!(bytes, vec![400 << 10, 50 << 10, 150 << 10]);
        // Figures read a moment apart may pass swap used: parts stop there.
        a.sizes.swap_pss = Some(900 << 10);
        let s = swap_used(&m, &[a]).unwrap();
        assert_eq!(s.parts.iter().map(|p| p.bytes).sum::<u64>(), s.used);
        assert_eq!(s.parts[1].bytes, 0);
        let none = meminfo("SwapTotal: 1000 kB\nSwapFree: 1000 kB\n");
        assert_eq!(swap_used(&none, &[]), None);
    }
}
