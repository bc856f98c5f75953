//! Which processes a command looks at: by PID, name, user, process tree or
//! cgroup. Different selectors narrow together (AND); several values of
//! one selector widen it (OR).

use std::collections::{HashMap, HashSet};

use regex::Regex;

use crate::error::Selector;
use crate::model::{Needs, ProcInfo};

/// Which processes to look at. Empty fields do not narrow; the default
/// selects every process. Outside this crate it is made by the use
/// cases' `SelectOptions::resolve` (a user's words checked) or
/// [`Selection::of_pids`].
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Selection {
    /// These PIDs.
    pub pids: Vec<u32>,
    /// Command name or command line matches this.
    pub name: Option<Regex>,
    /// Owned by one of these uids.
    pub uids: Vec<u32>,
    /// These processes and all their descendants.
    pub trees: Vec<u32>,
    /// In this cgroup or below it.
    pub cgroup: Option<String>,
    /// Keep memtally's own process in a narrowed selection (it is left out
    /// unless named by `pids` or `trees`: a name pattern `python` must not
    /// match memtally's own command line, user root must not sum memtally).
    pub include_self: bool,
}

impl Selection {
    /// These processes only (their PIDs need no checking, unlike a user's
    /// words, which go through `SelectOptions`).
    pub fn of_pids(pids: Vec<u32>) -> Selection {
        Selection { pids, ..Selection::default() }
    }

    /// Whether nothing narrows the selection (every process is in it).
    pub fn is_everything(&self) -> bool {
        self.pids.is_empty() && self.pids_alone()
    }

    /// The one process the selection names, when it is exactly one PID
    /// and nothing else narrows it (`show PID`: that process alone).
    pub fn single_pid(&self) -> Option<u32> {
        match self.pids.as_slice() {
            [pid] if self.pids_alone() => Some(*pid),
            _ => None,
        }
    }

    /// Whether nothing but `pids` narrows the selection.
    fn pids_alone(&self) -> bool {
        self.name.is_none()
            && self.uids.is_empty()
            && self.trees.is_empty()
            && self.cgroup.is_none()
    }

    /// The selectors that narrow, with their values, for a message to
    /// state what was asked (empty: every process).
    pub(crate) fn selectors(&self) -> Vec<Selector> {
        let mut out = Vec::new();
        if !self.pids.is_empty() {
            out.push(Selector::Pids(self.pids.clone()));
        }
        if let Some(re) = &self.name {
            out.push(Selector::Name(re.as_str().to_string()));
        }
        if !self.uids.is_empty() {
            out.push(Selector::Uids(self.uids.clone()));
        }
        out.extend(self.trees.iter().map(|&t| Selector::Tree(t)));
        if let Some(c) = &self.cgroup {
            out.push(Selector::Cgroup(c.clone()));
        }
        out
    }

    /// Whether the process `pid` is named outright (among `pids` or as the
    /// root of one of `trees`), not just matched.
    pub fn names(&self, pid: u32) -> bool {
        self.pids.contains(&pid) || self.trees.contains(&pid)
    }

    /// Which identity files the selection has to read.
    pub(crate) fn needs(&self) -> Needs {
        Needs { cmdline: self.name.is_some(), cgroup: self.cgroup.is_some(), start_time: false }
    }

    /// Keeps the selected processes. `infos` must hold every process, so
    /// that `trees` can follow parents.
    pub(crate) fn apply(&self, infos: Vec<ProcInfo>) -> Vec<ProcInfo> {
        let in_trees = (!self.trees.is_empty()).then(|| descendants(&infos, &self.trees));
        infos
            .into_iter()
            .filter(|p| self.pids.is_empty() || self.pids.contains(&p.pid))
            .filter(|p| {
                self.name.as_ref().is_none_or(|re| re.is_match(&p.comm) || re.is_match(&p.cmdline))
            })
            .filter(|p| self.uids.is_empty() || p.uid.is_some_and(|u| self.uids.contains(&u)))
            .filter(|p| in_trees.as_ref().is_none_or(|set| set.contains(&p.pid)))
            .filter(|p| {
                self.cgroup.as_deref().is_none_or(|want| {
                    let want = want.trim_end_matches('/');
                    p.cgroup.as_deref().is_some_and(|c| {
                        want.is_empty()
                            || c == want
                            || c.strip_prefix(want).is_some_and(|r| r.starts_with('/'))
                    })
                })
            })
            .collect()
    }
}

/// `roots` and every process below them.
fn descendants(infos: &[ProcInfo], roots: &[u32]) -> HashSet<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for p in infos {
        children.entry(p.ppid).or_default().push(p.pid);
    }
    let mut set: HashSet<u32> = HashSet::new();
    let mut stack: Vec<u32> = roots.to_vec();
    while let Some(pid) = stack.pop() {
        if set.insert(pid) {
            if let Some(kids) = children.get(&pid) {
                stack.extend(kids);
            }
        }
    }
    set
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(pid: u32, ppid: u32, uid: u32, comm: &str, cgroup: &str) -> ProcInfo {
        ProcInfo {
            pid,
            ppid,
            uid: Some(uid),
            comm: comm.into(),
            cmdline: format!("/usr/bin/{comm} --flag"),
            program: comm.into(),
            cgroup: Some(cgroup.into()),
            status_sizes: None,
            start_time: None,
        }
    }

    fn all() -> Vec<ProcInfo> {
        vec![
            p(1, 0, 0, "init", "/init.scope"),
            p(10, 1, 1000, "chromium", "/user.slice/app.scope"),
            p(11, 10, 1000, "chromium", "/user.slice/app.scope"),
            p(12, 11, 1000, "renderer", "/user.slice/app.scope/sub"),
            p(20, 1, 0, "sshd", "/system.slice/ssh.service"),
        ]
    }

    fn pids(sel: &Selection) -> Vec<u32> {
        sel.apply(all()).iter().map(|p| p.pid).collect()
    }

    #[test]
    fn a_single_pid_is_one_pid_and_nothing_else() {
        assert_eq!(Selection::of_pids(vec![10]).single_pid(), Some(10));
        assert_eq!(Selection::of_pids(vec![10, 11]).single_pid(), None);
        assert_eq!(Selection::default().single_pid(), None);
        for narrowed in [
            Selection { trees: vec![10], ..Selection::of_pids(vec![10]) },
            Selection { uids: vec![0], ..Selection::of_pids(vec![10]) },
            Selection { cgroup: Some("/".into()), ..Selection::of_pids(vec![10]) },
            Selection { name: Regex::new("x").ok(), ..Selection::of_pids(vec![10]) },
        ] {
            assert_eq!(narrowed.single_pid(), None, "{narrowed:?}");
            assert!(!narrowed.is_everything());
        }
    }

    #[test]
    fn tree_follows_every_generation() {
        let sel = Selection { trees: vec![10], ..Default::default() };
        assert_eq!(pids(&sel), vec![10, 11, 12]);
    }

    #[test]
    fn selectors_narrow_together_values_widen() {
        let sel = Selection { uids: vec![0], ..Default::default() };
        assert_eq!(pids(&sel), vec![1, 20]);
        let sel = Selection {
            uids: vec![0],
            name: Some(Regex::new("ssh").unwrap()),
            ..Default::default()
        };
        assert_eq!(pids(&sel), vec![20]);
        let sel = Selection { pids: vec![1, 12], ..Default::default() };
        assert_eq!(pids(&sel), vec![1, 12]);
        let sel = Selection { name: Some(Regex::new("--flag").unwrap()), ..Default::default() };
        assert_eq!(pids(&sel).len(), 5, "the regex sees the command line");
    }

    #[test]
    fn cgroup_matches_the_path_and_below_but_not_a_prefix_of_a_name() {
        let sel = Selection { cgroup: Some("/user.slice/app.scope".into()), ..Default::default() };
        assert_eq!(pids(&sel), vec![10, 11, 12]);
        let sel = Selection { cgroup: Some("/user.slice/app".into()), ..Default::default() };
        assert!(pids(&sel).is_empty());
    }
}
