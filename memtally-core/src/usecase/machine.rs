//! `machine`: the whole machine's memory as a waterfall (MemTotal split
//! into lines that add up exactly), from meminfo and every process's
//! `smaps_rollup`.

use crate::analyze::machine::{machine as build, Line, MachineView};
use crate::analyze::select::Selection;
use crate::error::{Error, Result};
use crate::model::Needs;
use crate::source::{scan, ProcRoot};
use crate::usecase::select::select;
use crate::usecase::Progress;

/// Reads meminfo and every process, and builds the waterfall.
pub fn machine(root: &ProcRoot, progress: &dyn Progress) -> Result<MachineView> {
    let meminfo = root.meminfo().ok_or_else(|| {
        Error::NotFound(format!(
            "{}/meminfo is missing or has no MemTotal: the waterfall needs the machine's meminfo",
            root.path().display()
        ))
    })?;
    let selected = select(root, &Selection::default(), Needs::default())?;
    progress.start("reading processes", selected.infos.len());
    let mut found =
        scan::read_all(root, selected.infos, scan::default_threads(), &|| progress.step());
    progress.finish();
    // Swapped shared memory once, for swap used to reconcile.
    crate::usecase::shmem_swap::add(root, &mut found.processes);
    let mut machine = build(&meminfo, &found.processes).ok_or_else(|| {
        Error::NotFound(format!("{}/meminfo has no MemTotal or MemFree", root.path().display()))
    })?;
    machine.shmem_mounts = crate::source::mounts::tmpfs_usage(root);
    add_drivers(root, &mut machine);
    Ok(MachineView {
        machine,
        processes: found.processes.iter().filter(|p| p.sizes.pss.is_some()).count(),
        restricted: found.restricted.len(),
        vanished: found.vanished + selected.vanished,
    })
}

/// Adds what the machine's drivers report to the waterfall: the RAM of
/// zram devices (`mm_stat`), amdgpu's GTT.
pub(crate) fn add_drivers(
    root: &crate::source::ProcRoot,
    m: &mut crate::analyze::machine::Machine,
) {
    let zram = crate::source::zram::read(root);
    let unreadable = zram.unreadable.into_iter().map(|(name, _)| name).collect();
    m.add_zram(zram.devices, unreadable);
    let gtt = crate::source::drm_sysfs::gtt_used(root);
    if !gtt.is_empty() {
        let cards: Vec<&str> = gtt.iter().map(|(c, _)| c.as_str()).collect();
        let total = gtt.iter().map(|(_, b)| b).sum();
        m.add_driver_line(
            Line::GpuGtt,
            total,
            format!(
                "GPU driver system memory: Σ /sys/class/drm/{{{}}}/device/mem_info_gtt_used",
                cards.join(",")
            ),
        );
    }
}
