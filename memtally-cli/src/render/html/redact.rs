//! `--redact`: a report to share without what about:memory's dumps leak.
//! Command-line arguments, user names, the host name, paths under home
//! directories, the names of temporary files and shared memory objects
//! (`/tmp/…`, `/dev/shm/…`, `memfd:…`) and the names of programs that are
//! not installed system programs become placeholders (`<arg1>`,
//! `<user1>`, `<host>`, `~/<path1>`, `/tmp/<path2>`, `<prog1>`) numbered
//! in the order they first appear, the same value always the same
//! placeholder within one report, so a reader can still tell processes
//! and mappings apart. What stays: `root`, kernel threads, system paths,
//! and the names of programs run from an absolute path outside home and
//! temporary directories (`/usr/bin/python3`): they say what runs, not who.

use std::collections::HashMap;

use memtally_core::analyze::diff::Diff;
use memtally_core::analyze::report::Report;

/// Placeholders handed out so far, per kind of secret.
#[derive(Debug, Default)]
struct Placeholders {
    args: HashMap<String, usize>,
    users: HashMap<String, usize>,
    paths: HashMap<String, usize>,
    uids: HashMap<String, usize>,
    units: HashMap<String, usize>,
    programs: HashMap<String, usize>,
}

fn number(map: &mut HashMap<String, usize>, value: &str) -> usize {
    let next = map.len() + 1;
    *map.entry(value.to_string()).or_insert(next)
}

/// Whether `path` lies in a home directory (Linux `/home`, `/root`,
/// macOS `/Users`, `/var/home` of image-based systems).
fn under_home(path: &str) -> bool {
    ["/home/", "/root/", "/Users/", "/var/home/"].iter().any(|h| path.starts_with(h))
}

/// Directories outside home whose entries are named after a user, a
/// session or a document: temporary files, shared memory objects, the
/// per-user runtime directory. The directory stays, the name goes.
const PRIVATE_DIRS: &[&str] = &["/tmp/", "/var/tmp/", "/dev/shm/", "/run/user/"];

/// The name prefix of a `memfd_create` file as maps shows it.
const MEMFD: &str = "/memfd:";

/// What the kernel appends to the path of a mapping whose file is gone.
const DELETED: &str = " (deleted)";

/// Whether `command` runs an installed program: its first word is an
/// absolute path outside home and the private directories (a kernel
/// thread, `[name]`, too). Its name then says what runs, not who.
fn system_program(command: &str) -> bool {
    if command.starts_with('[') {
        return true;
    }
    let first = command.split(' ').next().unwrap_or("");
    first.starts_with('/')
        && !under_home(first)
        && !PRIVATE_DIRS.iter().any(|d| first.starts_with(d))
        && !first.starts_with(MEMFD)
}

impl Placeholders {
    fn user(&mut self, name: &str) -> String {
        if name == "root" || name.is_empty() || name == "?" {
            return name.to_string();
        }
        format!("<user{}>", number(&mut self.users, name))
    }

    fn path(&mut self, path: &str) -> String {
        let (name, deleted) = match path.strip_suffix(DELETED) {
            Some(name) => (name, DELETED),
            None => (path, ""),
        };
        if under_home(name) {
            return format!("~/<path{}>{deleted}", number(&mut self.paths, name));
        }
        if let Some(dir) = PRIVATE_DIRS.iter().find(|d| name.starts_with(*d)) {
            return format!("{dir}<path{}>{deleted}", number(&mut self.paths, name));
        }
        if name.starts_with(MEMFD) {
            return format!("{MEMFD}<path{}>{deleted}", number(&mut self.paths, name));
        }
        path.to_string()
    }

    /// A program's name (a comm, a `--by program` group): kept when the
    /// program is installed ([`system_program`] of its `command`), else
    /// `<progN>`, numbered by the name.
    fn program(&mut self, name: &str, system: bool) -> String {
        if system || name.is_empty() {
            return name.to_string();
        }
        format!("<prog{}>", number(&mut self.programs, name))
    }

    /// A cgroup path with its user parts replaced, its structure kept:
    /// below `/user.slice`, the uid of `user-UID.slice` and
    /// `user@UID.service` becomes `<uidN>`, and every unit under them
    /// (`session-3.scope`, `app-firefox-1234.scope`, `app.slice`) is
    /// `<unitN>` with its unit type kept (`.scope`, `.slice`,
    /// `.service`), as systemd names what a user runs after it. Paths
    /// outside `/user.slice` (system services) stay: they say what runs.
    fn cgroup(&mut self, path: &str) -> String {
        let mut parts = path.split('/');
        let mut out = Vec::new();
        let mut in_user = false;
        for part in parts.by_ref() {
            if in_user {
                out.push(self.cgroup_unit(part));
                continue;
            }
            in_user = part == "user.slice";
            out.push(part.to_string());
        }
        out.join("/")
    }

    /// One name below `/user.slice` (see [`Placeholders::cgroup`]).
    fn cgroup_unit(&mut self, part: &str) -> String {
        for (head, tail) in [("user-", ".slice"), ("user@", ".service")] {
            if let Some(uid) = part.strip_prefix(head).and_then(|r| r.strip_suffix(tail)) {
                return format!("{head}<uid{}>{tail}", number(&mut self.uids, uid));
            }
        }
        if part.is_empty() {
            return String::new();
        }
        let kind = [".scope", ".slice", ".service", ".socket", ".mount"]
            .into_iter()
            .find(|k| part.ends_with(k))
            .unwrap_or("");
        format!("<unit{}>{kind}", number(&mut self.units, part))
    }

    /// The program (its path redacted if under a home directory), each
    /// argument a placeholder. A kernel thread's `[name]` stays.
    fn command(&mut self, command: &str) -> String {
        if command.starts_with('[') {
            return command.to_string();
        }
        let mut words = command.split(' ');
        let mut out = self.path(words.next().unwrap_or(""));
        for w in words.filter(|w| !w.is_empty()) {
            out.push(' ');
            out.push_str(&format!("<arg{}>", number(&mut self.args, w)));
        }
        out
    }
}

/// Redacts the report in place: its snapshot (which the page embeds),
/// its unreadable processes and its group keys; and the diff drawn
/// beside it (process labels, paths, the regions that came and went).
pub fn redact(report: &mut Report, diff: Option<&mut Diff>) {
    let mut p = Placeholders::default();
    // The mappings' paths before they are replaced: the faults section's
    // frames name their files by them.
    let paths: Vec<String> = match report.faults {
        Some(_) => report
            .snapshot
            .processes
            .iter()
            .flat_map(|s| s.regions.iter().filter_map(|r| r.path.clone()))
            .collect(),
        None => Vec::new(),
    };
    if let Some(d) = diff {
        for c in &mut d.processes {
            c.label = p.command(&c.label);
        }
        for c in &mut d.paths {
            c.key = p.path(&c.key);
            c.label = p.path(&c.label);
        }
        for r in &mut d.regions {
            r.region.path = r.region.path.as_deref().map(|x| p.path(x));
        }
        for r in &mut d.purge_changes {
            r.before.path = r.before.path.as_deref().map(|x| p.path(x));
            r.after.path = r.after.path.as_deref().map(|x| p.path(x));
        }
    }
    let by_user = report.by == memtally_core::analyze::report::ReportBy::User;
    let by_cgroup = report.by == memtally_core::analyze::report::ReportBy::Cgroup;
    // A program group keeps its name when every process in it runs an
    // installed program (decided before the commands are redacted).
    for g in &mut report.groups {
        g.key = match (by_user, by_cgroup) {
            (true, _) => p.user(&g.key),
            (_, true) => p.cgroup(&g.key),
            _ => {
                let procs = &report.snapshot.processes;
                let system = g.processes.iter().all(|&i| system_program(&procs[i].command))
                    && g.unread.iter().all(|&i| system_program(&report.unread[i].command));
                p.program(&g.key, system)
            }
        };
    }
    for g in &mut report.programs {
        let procs = &report.snapshot.processes;
        let system = g.processes.iter().all(|&i| system_program(&procs[i].command))
            && g.unread.iter().all(|&i| system_program(&report.unread[i].command));
        g.key = p.program(&g.key, system);
    }
    if let Some(host) = &mut report.snapshot.host {
        *host = "<host>".into();
    }
    for proc in &mut report.snapshot.processes {
        proc.comm = p.program(&proc.comm, system_program(&proc.command));
        proc.command = p.command(&proc.command);
        proc.user = proc.user.as_deref().map(|u| p.user(u));
        for r in &mut proc.regions {
            r.path = r.path.as_deref().map(|x| p.path(x));
        }
    }
    for u in &mut report.unread {
        u.comm = p.program(&u.comm, system_program(&u.command));
        u.command = p.command(&u.command);
        u.user = u.user.as_deref().map(|x| p.user(x));
        u.cgroup = u.cgroup.as_deref().map(|c| p.cgroup(c));
    }
    if let Some(Ok(c)) = &mut report.cgroups {
        for row in &mut c.rows {
            row.path = p.cgroup(&row.path);
        }
    }
    if let Some(Ok(g)) = &mut report.gpu {
        for x in &mut g.processes {
            x.comm = p.program(&x.comm, system_program(&x.command));
            x.command = p.command(&x.command);
        }
    }
    // A saved vmmap text's own view: its `Process:` and `Path:`, and the
    // regions it keeps (the tables draw types and figures only).
    if let Some(v) = &mut report.vmmap {
        let h = &mut v.doc.header;
        let system = h.path.as_deref().is_some_and(system_program);
        h.process = h.process.as_deref().map(|x| p.program(x, system));
        h.path = h.path.as_deref().map(|x| p.command(x));
        h.command = None;
        h.facts.clear();
        for (_, r) in &mut v.regions {
            r.path = r.path.as_deref().map(|x| p.path(x));
        }
    }
    report.snapshot.proc_root = report.snapshot.proc_root.as_deref().map(|x| p.path(x));
    if let Some(f) = &mut report.faults {
        redact_faults(&mut p, f, &report.snapshot.processes, paths);
    }
}

/// The faults section's private strings, as the rest of the page's: the
/// processes' names, the mappings' paths (the same placeholder as the
/// treemap's box, so the box still links to its entry), and in the
/// stacks a frame without a symbol (`FILE+0xOFFSET`) whose file is one
/// of those paths (or of `paths`, the snapshot's before redaction), or
/// its name. Function names stay: they say what code
/// ran (docs/report.md says so).
fn redact_faults(
    p: &mut Placeholders,
    f: &mut memtally_core::analyze::fault_report::FaultReport,
    processes: &[memtally_core::model::snapshot::SnapProcess],
    paths: Vec<String>,
) {
    for x in &mut f.processes {
        let command = processes.iter().find(|s| s.pid == Some(x.pid)).map(|s| s.command.as_str());
        x.command = p.program(&x.command, command.is_some_and(system_program));
    }
    // The private files by the name a frame gives them (its last part),
    // and by their whole path.
    let mut private: HashMap<String, String> = HashMap::new();
    let mapped = f.categories.iter().flat_map(|c| c.mappings.iter().map(|m| m.mapping.clone()));
    for path in mapped.chain(paths).collect::<Vec<_>>() {
        let hidden = p.path(&path);
        if hidden != path {
            let base = path.rsplit('/').next().unwrap_or(&path).to_string();
            private.insert(base, hidden.clone());
            private.insert(path, hidden);
        }
    }
    let mut frame = |name: &str| -> String {
        let Some((file, offset)) = name.rsplit_once("+0x") else { return name.to_string() };
        match private.get(file) {
            Some(hidden) => format!("{hidden}+0x{offset}"),
            None if file.starts_with('/') => format!("{}+0x{offset}", p.path(file)),
            None => name.to_string(),
        }
    };
    for c in &mut f.categories {
        let stacks = c.stacks.iter_mut().chain(c.mappings.iter_mut().flat_map(|m| &mut m.stacks));
        for s in stacks {
            for name in &mut s.frames {
                *name = frame(name);
            }
        }
    }
    for c in &mut f.categories {
        for m in &mut c.mappings {
            m.mapping = p.path(&m.mapping);
        }
    }
}

/// Redacts a watch series' labels (its processes' command lines).
pub fn redact_series(s: &mut memtally_core::analyze::report::SeriesReport) {
    let mut p = Placeholders::default();
    for l in s.plot.totals.iter_mut().chain(s.plot.processes.iter_mut()) {
        l.label = p.command(&l.label);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_secret_gets_the_same_placeholder() {
        let mut p = Placeholders::default();
        assert_eq!(
            p.command("/usr/bin/python3 /home/ann/x.py --token s3cret"),
            "/usr/bin/python3 <arg1> <arg2> <arg3>"
        );
        assert_eq!(p.command("/home/ann/bin/tool --token"), "~/<path1> <arg2>");
        assert_eq!(p.command("[kworker/0:1]"), "[kworker/0:1]");
        assert_eq!(p.user("ann"), "<user1>");
        assert_eq!(p.user("bob"), "<user2>");
        assert_eq!(p.user("ann"), "<user1>");
        assert_eq!(p.user("root"), "root");
        assert_eq!(p.path("/usr/lib/libc.so.6"), "/usr/lib/libc.so.6");
        assert_eq!(p.path("/home/ann/bin/tool"), "~/<path1>");
        assert_eq!(p.path("/Users/ann/Library/x.dylib"), "~/<path2>");
    }

    #[test]
    fn temporary_files_shared_memory_and_home_programs_lose_their_names() {
        let mut p = Placeholders::default();
        assert_eq!(p.path("/dev/shm/ann-session.42"), "/dev/shm/<path1>");
        assert_eq!(p.path("/tmp/report-q3.pdf (deleted)"), "/tmp/<path2> (deleted)");
        assert_eq!(p.path("/memfd:ann-wayland-shm (deleted)"), "/memfd:<path3> (deleted)");
        assert_eq!(p.path("/run/user/1000/pulse/x"), "/run/user/<path4>");
        assert_eq!(p.path("/dev/shm/ann-session.42"), "/dev/shm/<path1>");
        assert_eq!(p.path("/usr/lib/libc.so.6"), "/usr/lib/libc.so.6");
        assert_eq!(p.path("/SYSV00000000 (deleted)"), "/SYSV00000000 (deleted)");
        assert!(system_program("/usr/bin/python3 -c x"));
        assert!(system_program("[kworker/0:1]"));
        assert!(!system_program("/home/ann/bin/secret-tool --x"));
        assert!(!system_program("/tmp/a.out"));
        assert!(!system_program("postgres: checkpointer"));
        assert_eq!(p.program("python3", true), "python3");
        assert_eq!(p.program("secret-tool", false), "<prog1>");
        assert_eq!(p.program("secret-tool", false), "<prog1>");
    }

    #[test]
    fn user_cgroups_keep_their_shape_and_lose_their_names() {
        let mut p = Placeholders::default();
        assert_eq!(
            p.cgroup(
                "/user.slice/user-1000.slice/user@1000.service/app.slice/app-firefox-4242.scope"
            ),
            "/user.slice/user-<uid1>.slice/user@<uid1>.service/<unit1>.slice/<unit2>.scope"
        );
        assert_eq!(
            p.cgroup("/user.slice/user-1001.slice/session-3.scope"),
            "/user.slice/user-<uid2>.slice/<unit3>.scope"
        );
        assert_eq!(p.cgroup("/user.slice/user-1000.slice"), "/user.slice/user-<uid1>.slice");
        assert_eq!(p.cgroup("/system.slice/ssh.service"), "/system.slice/ssh.service");
        assert_eq!(p.cgroup("/user.slice"), "/user.slice");
        assert_eq!(p.cgroup("/"), "/");
    }
}
