//! Selection options shared by `top`, `show` and `capture`.

use clap::Args;
use regex::Regex;

use crate::analyze::select::Selection;
use crate::error::{Error, Result};
use crate::source::scan::{self, Needs, ProcInfo};
use crate::source::{users, ProcRoot};

#[derive(Debug, Clone, Default, Args)]
pub struct SelectArgs {
    /// Only these processes (space- or comma-separated PIDs).
    #[arg(long = "pid", value_name = "PID", num_args = 1.., value_delimiter = ',')]
    pub pids: Vec<u32>,

    /// Only processes whose name or command line matches this regular expression.
    #[arg(long, value_name = "REGEX")]
    pub name: Option<String>,

    /// Only processes of this user (name or uid); repeat for several.
    #[arg(long, value_name = "USER")]
    pub user: Vec<String>,

    /// A process and all its descendants (a browser with its renderers); repeat for several.
    #[arg(long, value_name = "PID")]
    pub tree: Vec<u32>,

    /// Only processes in this cgroup or below it (`/system.slice/nginx.service`).
    #[arg(long, value_name = "PATH")]
    pub cgroup: Option<String>,
}

impl SelectArgs {
    /// The selection these options describe.
    pub fn selection(&self) -> Result<Selection> {
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
            .user
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
            trees: self.tree.clone(),
            cgroup: self.cgroup.clone(),
        })
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What a selection found: the processes, plus what was left out.
pub struct Selected {
    pub infos: Vec<ProcInfo>,
    pub kernel_threads: usize,
    pub vanished: usize,
}

/// Lists and selects processes. With only `--pid`, just those PIDs are
/// looked at; otherwise every process is listed (trees need parents).
pub fn select(root: &ProcRoot, sel: &Selection, mut needs: Needs) -> Result<Selected> {
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
