//! Selection options shared by every command that reads processes.

use clap::Args;

use memtally_core::analyze::select::Selection;
use memtally_core::usecase::select::SelectOptions;
use memtally_core::Result;

#[derive(Debug, Clone, Default, Args)]
pub struct SelectArgs {
    /// Only these processes (space- or comma-separated PIDs); `-p` as in
    /// ps, top, htop and pmap.
    #[arg(long = "pid", short = 'p', value_name = "PID", num_args = 1.., value_delimiter = ',')]
    pub pids: Vec<u32>,

    /// Only processes whose name or command line matches this regular
    /// expression (memtally's own process is left out; see --include-self).
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

    /// Keep memtally's own process in a selection. By default --name,
    /// --user, --cgroup and --tree leave it out (its command line would
    /// match --name); naming its PID with --pid or --tree keeps it.
    #[arg(long)]
    pub include_self: bool,
}

impl SelectArgs {
    /// The selection these options describe, checked; `pid` (a command's
    /// positional PID) is added to the PIDs.
    pub fn selection(&self, pid: impl IntoIterator<Item = u32>) -> Result<Selection> {
        let mut pids = self.pids.clone();
        pids.extend(pid);
        SelectOptions::default()
            .with_pids(pids)
            .with_name(self.name.clone())
            .with_users(self.user.clone())
            .with_trees(self.tree.clone())
            .with_cgroup(self.cgroup.clone())
            .with_include_self(self.include_self)
            .resolve()
    }
}
