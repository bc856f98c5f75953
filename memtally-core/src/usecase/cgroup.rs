//! `cgroup`: every cgroup that holds processes (or one and those below
//! it), its charge, limits and memory.stat from the cgroup filesystem,
//! beside its processes' PSS, with the difference named.

use crate::analyze::cgroup::{is_within, rows, CgroupRow, CgroupView};
use crate::analyze::select::Selection;
use crate::error::{Error, Result};
use crate::model::Needs;
use crate::source::cgroup::{CgroupRoot, Layout};
use crate::source::{scan, ProcRoot};
use crate::usecase::select::select;
use crate::usecase::Progress;
use crate::write::Dir;
use std::path::{Path, PathBuf};

/// Which cgroups. Built from `default()` (every cgroup) and the `with_*` setters.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct CgroupOptions {
    /// This cgroup and those below it (a path as /proc/PID/cgroup names it).
    pub path: Option<String>,
}

setters!(CgroupOptions { with_path: path: Option<String> });

/// Reads every process's cgroup and memory, then the cgroups' files.
pub fn cgroups(
    root: &ProcRoot,
    opts: &CgroupOptions,
    progress: &dyn Progress,
) -> Result<CgroupView> {
    let selected = select(root, &Selection::default(), Needs { cgroup: true, ..Needs::default() })?;
    progress.start("reading processes", selected.infos.len());
    let found = scan::read_all(root, selected.infos, scan::default_threads(), &|| progress.step());
    progress.finish();
    let croot = CgroupRoot::for_proc(root);
    let layout = croot.layout();
    let mut paths: Vec<String> = found
        .processes
        .iter()
        .filter_map(|p| p.info.cgroup.clone())
        .filter(|c| opts.path.as_deref().is_none_or(|want| is_within(c, want)))
        .collect();
    // A pod or slice between the processes' cgroups and the top is a row
    // too (its charge covers them all).
    let within_path = |c: &str| opts.path.as_deref().is_none_or(|want| is_within(c, want));
    for p in paths.clone() {
        let mut at = p.as_str();
        while let Some((parent, _)) = at.rsplit_once('/') {
            if parent.is_empty() || !within_path(parent) {
                break;
            }
            paths.push(parent.to_string());
            at = parent;
        }
    }
    if let Some(p) = &opts.path {
        let p = p.trim_end_matches('/');
        paths.push(if p.is_empty() { "/".into() } else { p.to_string() });
    }
    paths.sort();
    paths.dedup();
    let read = |path: &str| layout.as_ref().and_then(|l| croot.read(l, path));
    let mut rows = rows(&paths, &found.processes, &read);
    if let Some(p) = &opts.path {
        if rows.iter().all(|r| r.processes == 0 && r.memory.is_none()) {
            return Err(Error::NotFound(format!(
                "cgroup {p}: no process is in it and {} has no such memory cgroup",
                croot.path().display()
            )));
        }
    }
    rows.sort_by(|a, b| {
        let usage = |r: &CgroupRow| r.memory.as_ref().and_then(|m| m.usage);
        usage(b).cmp(&usage(a)).then(b.sizes.pss.cmp(&a.sizes.pss)).then(a.path.cmp(&b.path))
    });
    let layout = layout.map(|l| match l {
        Layout::V1(d) => (1, d),
        Layout::V2(d) => (2, d),
    });
    Ok(CgroupView {
        rows,
        layout,
        processes: found.processes.len(),
        restricted: found.restricted.len(),
    })
}

/// What [`record`] wrote, and (file, why) for what it could not read.
pub type Recorded = (Vec<PathBuf>, Vec<(PathBuf, String)>);

/// Records the memory cgroup files of the processes in `pids` (their
/// cgroups and every ancestor) from `from`'s cgroup tree into
/// `out/sys/fs/cgroup/...`, laid out like the tree itself, so that
/// a root over `out` reads them back. Every directory is made beneath
/// `out`'s descriptor and none is followed through a link (see
/// [`Dir::beneath`]). Returns the files written and (file, why) for the
/// ones that could not be; nothing when no hierarchy has the memory
/// controller.
pub fn record(from: &ProcRoot, pids: &[u32], out: &Dir) -> Result<Recorded> {
    use crate::source::cgroup::{FILES, RECORDED};
    let croot = CgroupRoot::for_proc(from);
    let (mut written, mut skipped) = (Vec::new(), Vec::new());
    let Some(layout) = croot.layout() else { return Ok((written, skipped)) };
    let mut paths: Vec<String> = Vec::new();
    for &pid in pids {
        let Some(path) = from
            .read(pid, "cgroup")
            .ok()
            .and_then(|b| crate::source::cgroup_ns::cgroup_path(&String::from_utf8_lossy(&b)))
        else {
            continue;
        };
        let mut at = path.trim_end_matches('/').to_string();
        loop {
            paths.push(if at.is_empty() { "/".into() } else { at.clone() });
            match at.rsplit_once('/') {
                Some((parent, _)) => at = parent.to_string(),
                None => break,
            }
        }
    }
    paths.sort();
    paths.dedup();
    let base = Path::new(RECORDED);
    let rel = |dir: &Path| dir.strip_prefix(croot.path()).map(|p| p.to_path_buf());
    let (Layout::V1(top) | Layout::V2(top)) = &layout;
    let Ok(top_rel) = rel(top) else { return Ok((written, skipped)) };
    if let Layout::V2(_) = layout {
        let (rel, name) = (base.join(&top_rel), "cgroup.controllers");
        keep(&croot, &top.join(name), (out, &rel, name), &mut written, &mut skipped)?;
    }
    for path in &paths {
        let dir = CgroupRoot::dir(&layout, path);
        let Ok(dir_rel) = rel(&dir) else { continue };
        for file in FILES {
            let src = dir.join(file);
            if croot.kind(&src).is_some() {
                let rel = base.join(&dir_rel);
                keep(&croot, &src, (out, &rel, file), &mut written, &mut skipped)?;
            }
        }
    }
    Ok((written, skipped))
}

/// Copies `src` to `out/rel/name` (the directories made beneath `out`).
fn keep(
    croot: &CgroupRoot,
    src: &std::path::Path,
    (out, rel, name): (&Dir, &Path, &str),
    written: &mut Vec<std::path::PathBuf>,
    skipped: &mut Vec<(std::path::PathBuf, String)>,
) -> Result<()> {
    // Bounded, regular files only, through no link (source::bounded).
    match croot.read_file(src) {
        Ok(bytes) => {
            let dir = out.beneath(rel)?;
            dir.write_file(name.as_ref(), &bytes)?;
            written.push(dir.path().join(name));
        }
        Err(e) => skipped.push((src.to_path_buf(), e.to_string())),
    }
    Ok(())
}
