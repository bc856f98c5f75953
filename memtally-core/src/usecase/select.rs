//! Which processes a command looks at: the options as given (PIDs, a name
//! pattern, user names, trees, a cgroup), checked and resolved into a
//! [`Selection`], and the processes of the tree that it takes.

use regex::Regex;

use crate::analyze::select::Selection;
use crate::error::{Error, Result};
use crate::model::{Needs, ProcInfo};
use crate::source::{scan, users, ProcRoot};

/// A selection as a user states it; [`SelectOptions::resolve`] checks it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
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
}

impl SelectOptions {
    /// The selection these options describe: the pattern compiled and the
    /// user names looked up, or a usage error that says which is wrong.
    pub fn resolve(&self) -> Result<Selection> {
        let name = match &self.name {
            Some(re) => Some(Regex::new(re).map_err(|e| {
                Error::Usage(format!(
                    "--name {re:?}: not a valid regular expression: {}",
                    one_line(&e.to_string())
                ))
            })?),
            None => None,
        };
        let uids = self
            .users
            .iter()
            .map(|u| {
                u.parse::<u32>().ok().or_else(|| users::uid_of(u)).ok_or_else(|| {
                    Error::Usage(format!(
                        "--user {u}: no such user in /etc/passwd (give a name or a numeric uid)"
                    ))
                })
            })
            .collect::<Result<Vec<u32>>>()?;
        Ok(Selection {
            pids: self.pids.clone(),
            name,
            uids,
            trees: self.trees.clone(),
            cgroup: self.cgroup.clone(),
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
    /// Selected PIDs that had exited (or never existed) when looked at.
    pub vanished: usize,
}

/// Lists and selects processes. With only PIDs, just those are looked at;
/// otherwise every process is listed (trees need parents).
pub(crate) fn select(root: &ProcRoot, sel: &Selection, mut needs: Needs) -> Result<Selected> {
    let wanted = sel.needs();
    needs.cmdline |= wanted.cmdline;
    needs.cgroup |= wanted.cgroup;
    if !sel.pids.is_empty() && sel.trees.is_empty() {
        let (mut infos, mut kernel_threads, mut vanished) = (Vec::new(), 0, 0);
        for &pid in &sel.pids {
            match scan::identify(root, pid, needs) {
                Ok(Some(info)) => infos.push(info),
                Ok(None) => kernel_threads += 1,
                Err(Error::NoSuchProcess { .. }) => vanished += 1,
                Err(e) => return Err(e),
            }
        }
        return Ok(Selected { infos: sel.apply(infos), kernel_threads, vanished });
    }
    let (all, kernel_threads, vanished) = scan::list(root, needs)?;
    Ok(Selected { infos: sel.apply(all), kernel_threads, vanished })
}
