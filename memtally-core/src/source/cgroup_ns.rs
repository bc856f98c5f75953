//! The cgroup path of a process: which line of `/proc/PID/cgroup` names
//! the cgroup memory is charged to, and that path as the host names it,
//! read from inside a private cgroup namespace (a pod on cgroup v2,
//! `unshare -C`).
//!
//! The kernel's rule (Documentation/admin-guide/cgroup-v2.rst, "Namespace",
//! and cgroup_namespaces(7)): the third field of each `/proc/PID/cgroup`
//! line is the path of PID's cgroup *relative to the reader's* cgroup
//! namespace root in that hierarchy, whoever PID is: a cgroup at or below
//! the root reads `/` or `/a/b`, one outside it climbs with one `..` per
//! level up to the common ancestor and then goes down
//! (`0::/../container_id2/sub_cgroup_1`). So the host's path is the
//! namespace root's host path `R` joined with that text, each `..` taking
//! one name off. Nothing prints `R` by name; two things tell it:
//!
//! - its depth: host PID 1's cgroup is the hierarchy's root (v1, or no
//!   systemd) or a child of it (systemd's `/init.scope`), so its line read
//!   from inside the namespace is `k` times `..` then at most that one
//!   name, and `R` is `k` levels down; `k = 0` is the host's namespace
//!   (nothing to do);
//! - its names: the directory `k` levels down the host's tree
//!   (`--cgroup-root`) under which, at the reader's own path `S` (its own
//!   line, inside its namespace), `cgroup.procs` lists the reader's PID
//!   (`cgroup.procs` is written in the reader's PID namespace, so this
//!   holds without the host's PIDs).
//!
//! Where the tree given is the namespace's own view (a container's
//! `/sys/fs/cgroup`, rooted at `R`), or a recording, no such directory is
//! found and paths stay as read: one inside the namespace then names the
//! right directory of that view, one outside it (`/..`) none.

use std::path::PathBuf;

use crate::source::bounded::Kind;
use crate::source::cgroup::{CgroupRoot, Layout};
use crate::source::ProcRoot;

/// The cgroup path of `/proc/PID/cgroup` that memory is charged to: the
/// v1 `memory` controller's line when there is one (hybrid and v1 hosts,
/// where the unified `0::` line says `/` or names a tree with no memory
/// controller), else the v2 line (`0::/path`), else the first v1
/// hierarchy's path.
pub(crate) fn cgroup_path(text: &str) -> Option<String> {
    let (mut unified, mut first) = (None, None);
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        // Longer than a path can be: crafted, not the kernel's (each of
        // its ancestors would be a row).
        if path.len() > crate::source::cgroup::MAX_PATH {
            continue;
        }
        if controllers.split(',').any(|c| c == "memory") {
            return Some(path.to_string());
        }
        if id == "0" && controllers.is_empty() {
            unified.get_or_insert_with(|| path.to_string());
        }
        first.get_or_insert_with(|| path.to_string());
    }
    unified.or(first)
}

/// The most names listed (files and directories) looking for the
/// namespace root: a node's tree a few levels down is some thousands.
const MAX_WALK: usize = 1 << 16;

/// `path` (the third field of a `/proc/PID/cgroup` line of `root`) as the
/// host's tree names it: rebased on the reader's namespace root where the
/// reader is in a private cgroup namespace and the host's tree is there;
/// as read otherwise.
pub(crate) fn to_host(root: &ProcRoot, path: String) -> String {
    match root.cgroup_ns().get_or_init(|| ns_root(root)) {
        Some(base) => rebase(base, &path).unwrap_or(path),
        None => path,
    }
}

/// `path` read from inside a namespace whose root is `base` on the host:
/// `base` joined with it, each `..` taking one name off; `None` when it
/// climbs above the host's root (no path the kernel writes).
fn rebase(base: &str, path: &str) -> Option<String> {
    let mut parts: Vec<&str> = base.split('/').filter(|c| !c.is_empty()).collect();
    for c in path.split('/').filter(|c| !c.is_empty()) {
        if c == ".." {
            parts.pop()?;
        } else {
            parts.push(c);
        }
    }
    Some(format!("/{}", parts.join("/")))
}

/// How many levels below the host's root the reader's namespace root is,
/// from host PID 1's path as the reader reads it: its leading `..`.
fn depth_of_root(pid1: &str) -> usize {
    pid1.split('/').filter(|c| !c.is_empty()).take_while(|&c| c == "..").count()
}

/// Where the reader's cgroup namespace root lies on the host's tree (see
/// the module's comment); `None` in the host's namespace, or where it
/// cannot be found.
fn ns_root(root: &ProcRoot) -> Option<String> {
    if !root.is_procfs() {
        return None;
    }
    let line = |raw: Vec<u8>| cgroup_path(&String::from_utf8_lossy(&raw));
    let depth = depth_of_root(&line(root.read(1, "cgroup").ok()?)?);
    if depth == 0 {
        return None;
    }
    let me = std::process::id();
    // The reader's own line, from its own /proc (its PID namespace's).
    let own = line(ProcRoot::live().read(me, "cgroup").ok()?)?;
    if own.split('/').any(|c| c == "..") {
        return None;
    }
    let croot = CgroupRoot::for_proc(root);
    let layout = croot.layout()?;
    let (Layout::V1(top) | Layout::V2(top)) = &layout;
    let mut level = vec![String::new()];
    let mut walked = 0;
    for _ in 0..depth {
        let mut next = Vec::new();
        for rel in &level {
            let dir = CgroupRoot::dir(&layout, rel);
            for name in croot.list(&dir).unwrap_or_default() {
                let Some(name) = name.to_str() else { continue };
                walked += 1;
                if walked > MAX_WALK {
                    return None;
                }
                if croot.kind(&dir.join(name)) == Some(Kind::Dir) {
                    next.push(format!("{rel}/{name}"));
                }
            }
        }
        level = next;
    }
    let holds_me = |dir: PathBuf| {
        croot
            .read_file(&dir.join("cgroup.procs"))
            .is_ok_and(|b| String::from_utf8_lossy(&b).lines().any(|l| l.trim().parse() == Ok(me)))
    };
    let own = own.trim_end_matches('/');
    level.into_iter().find(|r| {
        let dir = CgroupRoot::dir(&layout, &format!("{r}{own}"));
        dir.starts_with(top) && holds_me(dir)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cgroup_is_the_memory_controllers_path() {
        assert_eq!(
            cgroup_path("0::/user.slice/session-1.scope\n").as_deref(),
            Some("/user.slice/session-1.scope")
        );
        // Hybrid: memory is charged in the v1 memory hierarchy.
        assert_eq!(
            cgroup_path("12:memory:/docker/abc\n11:cpu:/docker/abc\n0::/init.scope\n").as_deref(),
            Some("/docker/abc")
        );
        // This kind of host: the unified line says nothing (`0::/`).
        let here = "9:name=systemd:/\n4:memory:/process_api/84c2\n1:cpu:/\n0::/\n";
        assert_eq!(cgroup_path(here).as_deref(), Some("/process_api/84c2"));
        assert_eq!(cgroup_path("5:cpu,memory:/a\n0::/\n").as_deref(), Some("/a"));
        assert_eq!(cgroup_path("12:cpu:/docker/abc\n").as_deref(), Some("/docker/abc"));
        assert_eq!(cgroup_path("3:cpu:/x\n0::/y\n").as_deref(), Some("/y"));
        assert_eq!(cgroup_path("garbage\n0::/y\n").as_deref(), Some("/y"));
        assert_eq!(cgroup_path(""), None);
    }

    #[test]
    fn paths_climb_from_the_namespace_root() {
        let base = "/kubepods.slice/pod1.slice/cri-c1.scope";
        assert_eq!(rebase(base, "/").as_deref(), Some(base));
        assert_eq!(
            rebase(base, "/sub").as_deref(),
            Some("/kubepods.slice/pod1.slice/cri-c1.scope/sub")
        );
        assert_eq!(
            rebase(base, "/../cri-c2.scope").as_deref(),
            Some("/kubepods.slice/pod1.slice/cri-c2.scope")
        );
        assert_eq!(rebase(base, "/../../../init.scope").as_deref(), Some("/init.scope"));
        assert_eq!(rebase(base, "/../../..").as_deref(), Some("/"));
        assert_eq!(rebase(base, "/../../../.."), None, "above the host's root");
    }

    #[test]
    fn host_pid_1_tells_the_depth() {
        // v1 (PID 1 at the root) and v2 with systemd (PID 1 in /init.scope).
        assert_eq!(depth_of_root("/../.."), 2);
        assert_eq!(depth_of_root("/../../../init.scope"), 3);
        assert_eq!(depth_of_root("/init.scope"), 0, "the host's namespace");
        assert_eq!(depth_of_root("/"), 0);
    }

    #[test]
    fn a_recording_is_read_as_it_is() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("1")).unwrap();
        std::fs::write(d.path().join("1/cgroup"), "0::/../..\n").unwrap();
        let root = ProcRoot::new(d.path());
        assert_eq!(to_host(&root, "/../x".into()), "/../x");
    }
}
