//! Which processes a command looks at: the options as given (PIDs, a name
//! pattern, user names, trees, a cgroup), checked and resolved into a
//! [`Selection`], and the processes of the tree that it takes.

use regex::Regex;

use crate::analyze::select::Selection;
use crate::error::{Error, Result, Unmatched, UseCase};
use crate::model::{Needs, ProcInfo, Scan};
use crate::source::closes::Closes;
use crate::source::{scan, users, ProcRoot};

/// A selection as a user states it; [`SelectOptions::resolve`] checks it.
/// Built from `default()` (every process) and the `with_*` setters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SelectOptions {
    /// These PIDs.
    pub pids: Vec<u32>,
    /// Command name or command line matches this regular expression.
    pub name: Option<String>,
    /// Owned by one of these users (names or numeric uids).
    pub users: Vec<String>,
    /// These processes and all their descendants.
    pub trees: Vec<u32>,
    /// In this cgroup or below it.
    pub cgroup: Option<String>,
    /// Keep memtally's own process in a narrowed selection (by default it
    /// is left out unless its PID is named).
    pub include_self: bool,
}

setters!(SelectOptions {
    with_pids: pids: Vec<u32>,
    with_name: name: Option<String>,
    with_users: users: Vec<String>,
    with_trees: trees: Vec<u32>,
    with_cgroup: cgroup: Option<String>,
    with_include_self: include_self: bool,
});

impl SelectOptions {
    /// The selection these options describe: the pattern compiled and the
    /// user names looked up, or a usage error that says which is wrong.
    pub fn resolve(&self) -> Result<Selection> {
        let name = match &self.name {
            Some(re) => Some(Regex::new(re).map_err(|e| Error::BadPattern {
                pattern: re.clone(),
                why: one_line(&e.to_string()),
            })?),
            None => None,
        };
        let uids = self
            .users
            .iter()
            .map(|u| {
                u.parse::<u32>()
                    .ok()
                    .or_else(|| users::uid_of(u))
                    .ok_or_else(|| Error::NoSuchUser { user: u.clone() })
            })
            .collect::<Result<Vec<u32>>>()?;
        Ok(Selection {
            pids: self.pids.clone(),
            name,
            uids,
            trees: self.trees.clone(),
            cgroup: self.cgroup.clone(),
            include_self: self.include_self,
        })
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What a selection found: the processes, plus what was left out.
#[derive(Debug, Clone, Default)]
pub(crate) struct Selected {
    pub infos: Vec<ProcInfo>,
    pub kernel_threads: usize,
    /// Processes that were listed, then had exited when looked at.
    pub vanished: usize,
    /// PIDs named, or named as a tree's root, that were not there at all (a
    /// wrong PID, or one that had exited before memtally started).
    pub missing: Vec<u32>,
    /// Whether memtally's own process matched and was left out.
    pub left_out_self: bool,
    /// With only PIDs named: those that are kernel threads.
    pub kernel_pids: Vec<u32>,
}

impl Selected {
    /// An error when a selection that narrows found no process: what was
    /// asked for and why nothing matched. Every process
    /// (`top` with no selector) is never an error, even when empty.
    pub(crate) fn require_any(&self, root: &ProcRoot, sel: &Selection) -> Result<()> {
        if sel.is_everything() || !self.infos.is_empty() {
            return Ok(());
        }
        let named = sel.pids.len() + sel.trees.len();
        if let [pid] = self.missing[..] {
            if named == 1 {
                return Err(Error::NoSuchProcess { pid, path: root.path().join(pid.to_string()) });
            }
        }
        // One named PID that is a kernel thread: bad input, as for `show PID`.
        if let [pid] = self.kernel_pids[..] {
            if named == 1 && sel.pids == [pid] {
                let comm = root.read(pid, "comm").map_or_else(
                    |_| String::new(),
                    |b| String::from_utf8_lossy(&b).trim_end().to_string(),
                );
                return Err(Error::KernelThread { pid, comm });
            }
        }
        let mut why = Vec::new();
        if !self.missing.is_empty() {
            why.push(Unmatched::Missing(self.missing.clone()));
        }
        if self.kernel_threads > 0 && !sel.pids.is_empty() {
            why.push(Unmatched::KernelThreads(self.kernel_threads));
        }
        if self.vanished > 0 && self.missing.is_empty() {
            why.push(Unmatched::Vanished(self.vanished));
        }
        if self.left_out_self {
            why.push(Unmatched::OnlySelf);
        }
        Err(Error::NoMatch { asked: sel.selectors(), why })
    }
}

/// The error when every process a narrowed selection found exited (or
/// could not be read at all) before its memory was read.
pub(crate) fn require_read(sel: &Selection, scan: &Scan) -> Result<()> {
    if sel.is_everything() || !scan.processes.is_empty() {
        return Ok(());
    }
    Err(Error::NoneRead { asked: sel.selectors(), first_failure: scan.failed.first().cloned() })
}

/// A refusal unless the selection narrows: `use_case` reads only
/// processes chosen for it.
pub fn require_selection(sel: &Selection, use_case: UseCase) -> Result<()> {
    if sel.is_everything() {
        return Err(Error::NoSelection { use_case });
    }
    Ok(())
}

/// Lists and selects processes. With only PIDs, just those are looked at;
/// otherwise every process is listed (trees need parents). On the live
/// `/proc`, memtally's own process is left out of a narrowed selection
/// unless named or [`Selection::include_self`] says so.
pub(crate) fn select(root: &ProcRoot, sel: &Selection, mut needs: Needs) -> Result<Selected> {
    let wanted = sel.needs();
    needs.cmdline |= wanted.cmdline;
    needs.cgroup |= wanted.cgroup;
    // A narrowed selection chose these processes: what is read or reset
    // later must be they (see `stamp::same_life`).
    needs.start_time |= root.is_procfs() && !sel.is_everything();
    let mut selected = Selected::default();
    if !sel.pids.is_empty() && sel.trees.is_empty() {
        let mut infos = Vec::new();
        let closes = Closes::default();
        for &pid in &sel.pids {
            match scan::identify(root, pid, needs, &closes) {
                Ok(Some(info)) => infos.push(info),
                Ok(None) => {
                    selected.kernel_threads += 1;
                    selected.kernel_pids.push(pid);
                }
                Err(Error::NoSuchProcess { .. }) => selected.missing.push(pid),
                Err(e) => return Err(e),
            }
        }
        selected.infos = sel.apply(infos);
    } else {
        let (all, kernel_threads, vanished) = scan::list(root, needs)?;
        // A named PID (or tree root) not in the list was never there;
        // one that vanished between the listing and its read is `vanished`.
        for &pid in sel.pids.iter().chain(&sel.trees) {
            if !all.iter().any(|p| p.pid == pid) && !selected.missing.contains(&pid) {
                selected.missing.push(pid);
            }
        }
        selected.kernel_threads = kernel_threads;
        // A process that exited between the listing and its identity has
        // none: it counts as the selection's only when the selection is
        // every process (a narrowed one cannot tell whether it was one of
        // its own, and on a busy machine some unrelated process always is).
        selected.vanished = if sel.is_everything() { vanished } else { 0 };
        selected.infos = sel.apply(all);
    }
    if root.is_live() && !sel.is_everything() && !sel.include_self {
        let me = std::process::id();
        if !sel.names(me) {
            let before = selected.infos.len();
            selected.infos.retain(|p| p.pid != me);
            selected.left_out_self = selected.infos.len() < before;
        }
    }
    Ok(selected)
}
