//! What the analyses' unit tests build their input from.

use crate::model::{ProcInfo, ProcMemory, SizeSource, Sizes};

/// A process read from `smaps_rollup` whose PSS is split into these parts.
pub(crate) fn rollup_process(anon: u64, file: u64, shmem: u64) -> ProcMemory {
    ProcMemory {
        info: ProcInfo::default(),
        source: SizeSource::SmapsRollup,
        sizes: Sizes {
            pss: Some(anon + file + shmem),
            pss_anon: Some(anon),
            pss_file: Some(file),
            pss_shmem: Some(shmem),
            ..Default::default()
        },
    }
}
