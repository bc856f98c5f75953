//! Cgroups read from inside a private cgroup namespace (issue 38.1): what
//! a pod on cgroup v2 gets, made here with `unshare -C -m`. The namespace
//! sees its own cgroup view at /sys/fs/cgroup (as a container runtime
//! mounts it) and the host's cgroup filesystem bind-mounted elsewhere (the
//! DaemonSet's hostPath); with `--cgroup-root` there, memtally names every
//! cgroup by its host path and reads its charge from the host's tree. On
//! the v1 memory controller and on a v2 tree holding the memory
//! controller, where the machine has them.

use std::path::{Path, PathBuf};
use std::process::Command;

/// One hierarchy holding the memory controller.
struct Hierarchy {
    /// Where it is mounted (`/sys/fs/cgroup/memory`, `/sys/fs/cgroup`).
    mount: PathBuf,
    /// Its mount point below `/sys/fs/cgroup` (`memory`, `` for v2 alone).
    below: &'static str,
    /// How the namespace mounts its own view there.
    mount_view: &'static str,
    /// The charge file.
    usage: &'static str,
    v2: bool,
}

fn v1() -> Result<Hierarchy, String> {
    let mount = PathBuf::from("/sys/fs/cgroup/memory");
    if !mount.join("memory.usage_in_bytes").is_file() {
        return Err("no v1 memory controller at /sys/fs/cgroup/memory".into());
    }
    Ok(Hierarchy {
        mount,
        below: "memory",
        mount_view: "mount -t cgroup -o memory cgroup",
        usage: "memory.usage_in_bytes",
        v2: false,
    })
}

fn v2() -> Result<Hierarchy, String> {
    for below in ["", "unified"] {
        let mount = Path::new("/sys/fs/cgroup").join(below);
        let controllers = std::fs::read_to_string(mount.join("cgroup.controllers"));
        if controllers.is_ok_and(|c| c.split_whitespace().any(|w| w == "memory")) {
            return Ok(Hierarchy {
                mount,
                below,
                mount_view: "mount -t cgroup2 cgroup2",
                usage: "memory.current",
                v2: true,
            });
        }
    }
    Err("no v2 cgroup tree holds the memory controller here (/sys/fs/cgroup, /sys/fs/cgroup/unified)".into())
}

/// The cgroups a test made, removed on drop (their processes killed first),
/// the deepest first.
struct Made(Vec<PathBuf>, Vec<std::process::Child>);

impl Drop for Made {
    fn drop(&mut self) {
        for c in &mut self.1 {
            let _ = c.kill();
            let _ = c.wait();
        }
        for dir in self.0.iter().rev() {
            // A process just killed may take a moment to leave the cgroup.
            for _ in 0..50 {
                if std::fs::remove_dir(dir).is_ok() || !dir.exists() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
    }
}

fn reason_to_skip() -> Option<String> {
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root: making cgroups and namespaces needs it".into());
    }
    if Command::new("unshare").arg("--version").output().is_err() {
        return Some("no unshare(1) here".into());
    }
    None
}

/// How the namespace sees the cgroup filesystem.
#[derive(Clone, Copy, PartialEq)]
enum View {
    /// Its own view at /sys/fs/cgroup (as a container runtime mounts it),
    /// the host's tree bind-mounted elsewhere and given as `--cgroup-root`.
    OwnAndHosts,
    /// `unshare -C` alone: the host's tree still at /sys/fs/cgroup, no option.
    Hosts,
    /// Its own view alone (a pod without the host's tree): cgroups outside
    /// the namespace cannot be named from the host's tree, and a note says so.
    OwnOnly,
}

/// Makes `top/ns/inner` (the namespace's root, three levels down) and
/// `top/t` (a cgroup outside it, holding a sleeping child); runs memtally
/// inside a new cgroup namespace rooted at `top/ns/inner`, seeing the
/// cgroup filesystem as `view` says; checks the names and charges against
/// the host's own reads.
fn names_and_charges_are_the_hosts(h: &Hierarchy, view: View) {
    let tag = match view {
        View::Hosts => "plain",
        View::OwnAndHosts => "own",
        View::OwnOnly => "alone",
    };
    let top_name = format!("memtally-cgns-{tag}-{}", std::process::id());
    let top = h.mount.join(&top_name);
    let (ns, inner, t) = (top.join("ns"), top.join("ns/inner"), top.join("t"));
    let mut made = Made(Vec::new(), Vec::new());
    for dir in [&top, &ns, &inner, &t] {
        if let Err(e) = std::fs::create_dir(dir) {
            println!("skipped: cannot make {}: {e}", dir.display());
            return;
        }
        made.0.push(dir.clone());
        if h.v2 && (dir == &top || dir == &ns) {
            std::fs::write(dir.join("cgroup.subtree_control"), "+memory").unwrap();
        }
    }
    let child = Command::new("sh")
        .arg("-c")
        .arg(format!("echo $$ > {}/cgroup.procs && exec sleep 120", t.display()))
        .spawn()
        .unwrap();
    let child_pid = child.id();
    made.1.push(child);
    // The child is in its cgroup once its line says so.
    let want = format!("/{top_name}/t");
    let in_t = || {
        std::fs::read_to_string(format!("/proc/{child_pid}/cgroup"))
            .is_ok_and(|c| c.lines().any(|l| l.ends_with(&format!(":{want}"))))
    };
    for _ in 0..100 {
        if in_t() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(in_t(), "the child moved into {want}");

    let host = tempfile::tempdir().unwrap();
    let host_view = host.path().join("cgroup");
    std::fs::create_dir(&host_view).unwrap();
    let own_view = Path::new("/sys/fs/cgroup").join(h.below);
    let bin = env!("CARGO_BIN_EXE_memtally");
    // Inside: the host's cgroup filesystem bind-mounted at host_view, then
    // the namespace's own view mounted over /sys/fs/cgroup/... (rooted at
    // the namespace's root, as a container runtime mounts it).
    let inside = match view {
        View::OwnAndHosts => format!(
            "mount --rbind /sys/fs/cgroup {hv} && umount -l {own} && {mv} {own} && cat /proc/{child_pid}/cgroup >&2 && exec {bin} --cgroup-root {hv} top --by cgroup --all --format json",
            hv = host_view.display(),
            own = own_view.display(),
            mv = h.mount_view,
        ),
        View::Hosts => format!(
            "cat /proc/{child_pid}/cgroup >&2 && exec {bin} top --by cgroup --all --format json"
        ),
        View::OwnOnly => format!(
            "umount -l {own} && {mv} {own} && cat /proc/{child_pid}/cgroup >&2 && exec {bin} top --by cgroup --all --format json",
            own = own_view.display(),
            mv = h.mount_view,
        ),
    };
    let unshare = if view == View::Hosts { "unshare -C" } else { "unshare -C -m" };
    let before = std::fs::read_to_string(t.join(h.usage)).unwrap();
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "echo $$ > {}/cgroup.procs && exec {unshare} sh -c '{inside}'",
            inner.display()
        ))
        .output()
        .unwrap();
    let after = std::fs::read_to_string(t.join(h.usage)).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // The namespace is real: the child's own line, read inside, climbs.
    assert!(stderr.contains(":/../../t"), "read inside the namespace: {stderr}");
    let top_json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = top_json["rows"].as_array().unwrap();
    let keys: Vec<&str> = rows.iter().map(|r| r["key"].as_str().unwrap()).collect();
    let notes = top_json["notes"].to_string();
    if view == View::OwnOnly {
        // The child's cgroup as the namespace names it, without a charge,
        // and a note that says why and what to give.
        let t_row = rows.iter().find(|r| r["key"] == "/../../t");
        assert!(t_row.is_some_and(|r| r["processes"] == 1), "/../../t in {keys:?}");
        assert!(t_row.is_some_and(|r| r["cgroup"]["usage"].is_null()), "{t_row:?}");
        assert!(
            notes.contains("outside this cgroup namespace") && notes.contains("--cgroup-root"),
            "{notes}"
        );
        return;
    }
    assert!(keys.iter().all(|k| !k.starts_with("/..")), "host paths only: {keys:?}");
    assert!(!notes.contains("outside this cgroup namespace"), "{notes}");
    let row = |key: &str| {
        rows.iter().find(|r| r["key"] == key).unwrap_or_else(|| panic!("{key} in {keys:?}"))
    };
    // The child's cgroup, outside the namespace: its host path and the
    // charge the host reads.
    let t_row = row(&want);
    assert_eq!(t_row["processes"], 1, "{t_row}");
    let usage = t_row["cgroup"]["usage"].as_u64().expect("a charge read from the host's tree");
    let (before, after): (u64, u64) =
        (before.trim().parse().unwrap(), after.trim().parse().unwrap());
    assert!(usage > 0);
    assert!(
        (before.min(after)..=before.max(after)).contains(&usage),
        "{want}: {usage} read inside, {before}..{after} on the host"
    );
    let child_row = top_json["processes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["pid"] == child_pid)
        .unwrap_or_else(|| panic!("the child {child_pid} listed"));
    assert_eq!(child_row["cgroup"], want.as_str());
    // The namespace's own root, where memtally runs: its host path.
    let inner_row = row(&format!("/{top_name}/ns/inner"));
    assert!(inner_row["processes"].as_u64().unwrap() >= 1, "{inner_row}");
    assert!(inner_row["cgroup"]["usage"].as_u64().is_some(), "{inner_row}");
}

#[test]
fn inside_a_cgroup_namespace_v1_names_and_charges_are_the_hosts() {
    if let Some(why) = reason_to_skip() {
        println!("skipped: {why}");
        return;
    }
    match v1() {
        Ok(h) => names_and_charges_are_the_hosts(&h, View::OwnAndHosts),
        Err(why) => println!("skipped: {why}"),
    }
}

/// `unshare -C memtally top --by cgroup` as the issue ran it: the host's
/// tree still at /sys/fs/cgroup. Before, the names were `/../…`, the
/// charges blank, and the reader's own row (`/`) had the host root's.
#[test]
fn unshare_c_alone_names_and_charges_are_the_hosts() {
    if let Some(why) = reason_to_skip() {
        println!("skipped: {why}");
        return;
    }
    match v1().or_else(|e1| v2().map_err(|e2| format!("{e1}; {e2}"))) {
        Ok(h) => names_and_charges_are_the_hosts(&h, View::Hosts),
        Err(why) => println!("skipped: {why}"),
    }
}

/// A pod given no host tree: the cgroups outside its namespace keep the
/// names the kernel writes (`/../…`), without a charge, and a note says
/// so and names `--cgroup-root`. Before, nothing was said.
#[test]
fn without_the_hosts_tree_cgroups_outside_the_namespace_are_noted() {
    if let Some(why) = reason_to_skip() {
        println!("skipped: {why}");
        return;
    }
    match v1() {
        Ok(h) => names_and_charges_are_the_hosts(&h, View::OwnOnly),
        Err(why) => println!("skipped: {why}"),
    }
}

#[test]
fn inside_a_cgroup_namespace_v2_names_and_charges_are_the_hosts() {
    if let Some(why) = reason_to_skip() {
        println!("skipped: {why}");
        return;
    }
    match v2() {
        Ok(h) => names_and_charges_are_the_hosts(&h, View::OwnAndHosts),
        Err(why) => println!("skipped: {why}"),
    }
}

/// The DaemonSet's arguments as written (the node's /proc and cgroup tree
/// at the test's paths, a free loopback port, every row published) serve
/// every cgroup series the recording rules, alerts and dashboard read, for
/// a cgroup of the test's own with a limit, named by its host path. Before
/// issue 38.1 the manifest published per program only: no cgroup series.
#[test]
fn daemonset_arguments_serve_the_cgroup_series_the_rules_read() {
    if let Some(why) = reason_to_skip() {
        println!("skipped: {why}");
        return;
    }
    let h = match v1().or_else(|e1| v2().map_err(|e2| format!("{e1}; {e2}"))) {
        Ok(h) => h,
        Err(why) => return println!("skipped: {why}"),
    };
    let name = format!("memtally-cgds-{}", std::process::id());
    let dir = h.mount.join(&name);
    if let Err(e) = std::fs::create_dir(&dir) {
        return println!("skipped: cannot make {}: {e}", dir.display());
    }
    let mut made = Made(vec![dir.clone()], Vec::new());
    let limit = 256 * 1024 * 1024u64;
    let limit_file = if h.v2 { "memory.max" } else { "memory.limit_in_bytes" };
    std::fs::write(dir.join(limit_file), limit.to_string()).unwrap();
    made.1.push(
        Command::new("sh")
            .arg("-c")
            .arg(format!("echo $$ > {}/cgroup.procs && exec sleep 120", dir.display()))
            .spawn()
            .unwrap(),
    );
    std::thread::sleep(std::time::Duration::from_millis(100));

    let (_, args) = crate::deploy::daemonset();
    let host = tempfile::tempdir().unwrap();
    let (host_proc, host_cgroup) = (host.path().join("proc"), host.path().join("cgroup"));
    std::os::unix::fs::symlink("/proc", &host_proc).unwrap();
    std::os::unix::fs::symlink("/sys/fs/cgroup", &host_cgroup).unwrap();
    let mut run_args: Vec<String> = args[1..].to_vec();
    for (flag, value) in [
        ("--proc-root", host_proc.display().to_string()),
        ("--cgroup-root", host_cgroup.display().to_string()),
        ("--listen", "127.0.0.1:0".into()),
        ("--top", "100000".into()),
    ] {
        let i = run_args.iter().position(|a| a == flag).unwrap_or_else(|| panic!("{flag}"));
        run_args[i + 1] = value;
    }
    let refs: Vec<&str> = run_args.iter().map(String::as_str).collect();
    let server = crate::support::Server::start(&refs);
    let text = crate::deploy::scrape(server.addr);
    let served = crate::deploy::exposed(&text);

    // Every memtally_cgroup_* name the rules, alerts and dashboard read.
    let mut exprs: Vec<String> = crate::prom_rules::rule_files()
        .iter()
        .flat_map(|f| crate::prom_rules::rules(f))
        .filter_map(|r| r["expr"].as_str().map(String::from))
        .collect();
    crate::deploy::queries(&crate::deploy::dashboard(), &mut exprs);
    let re = regex::Regex::new(r"memtally_cgroup_[a-z_]+").unwrap();
    let read: std::collections::BTreeSet<&str> =
        exprs.iter().flat_map(|e| re.find_iter(e).map(|m| m.as_str())).collect();
    assert!(read.len() >= 5, "the rules read cgroup series: {read:?}");
    let missing: Vec<&&str> = read.iter().filter(|n| !served.contains(**n)).collect();
    assert!(missing.is_empty(), "read but not served: {missing:?}");

    // The test's cgroup, by its host path, with its limit; and the
    // per-program series still there.
    let samples = crate::prometheus::parse(&text);
    let key = ("memtally_cgroup_charge_limit_bytes".to_string(), format!("cgroup=/{name}"));
    assert_eq!(samples.get(&key), Some(&(limit as f64)), "{key:?}");
    assert!(served.contains("memtally_program_pss_bytes"));
    assert!(!served.contains("memtally_process_pss_bytes"), "no per-process series");
}

/// A `--cgroup-root` that is not there is one clear line and exit 3 (an
/// I/O error, as a missing `--proc-root`), not blank charges.
#[test]
fn a_missing_cgroup_root_is_said() {
    let out =
        crate::support::run(&["--cgroup-root", "/nonexistent/cgroup", "top", "--by", "cgroup"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--cgroup-root /nonexistent/cgroup"), "{err}");
    let help = crate::support::run(&["top", "--help"]);
    assert!(String::from_utf8_lossy(&help.stdout).contains("--cgroup-root <DIR>"));
}
