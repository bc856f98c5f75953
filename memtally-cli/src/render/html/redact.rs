//! `--redact`: a report to share without what about:memory's dumps leak.
//! Command-line arguments, user names and paths under home directories
//! become placeholders (`<arg1>`, `<user1>`, `~/<path1>`) numbered in the
//! order they first appear, the same value always the same placeholder
//! within one report, so a reader can still tell processes and mappings
//! apart. Program names (a command's first word outside a home
//! directory), `root` and system paths stay: they say what runs, not who.

use std::collections::HashMap;

use memtally_core::analyze::diff::Diff;
use memtally_core::usecase::report::Report;

/// Placeholders handed out so far, per kind of secret.
#[derive(Debug, Default)]
struct Placeholders {
    args: HashMap<String, usize>,
    users: HashMap<String, usize>,
    paths: HashMap<String, usize>,
    uids: HashMap<String, usize>,
    units: HashMap<String, usize>,
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

impl Placeholders {
    fn user(&mut self, name: &str) -> String {
        if name == "root" || name.is_empty() || name == "?" {
            return name.to_string();
        }
        format!("<user{}>", number(&mut self.users, name))
    }

    fn path(&mut self, path: &str) -> String {
        if !under_home(path) {
            return path.to_string();
        }
        format!("~/<path{}>", number(&mut self.paths, path))
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
    for proc in &mut report.snapshot.processes {
        proc.command = p.command(&proc.command);
        proc.user = proc.user.as_deref().map(|u| p.user(u));
        for r in &mut proc.regions {
            r.path = r.path.as_deref().map(|x| p.path(x));
        }
    }
    for u in &mut report.unread {
        u.command = p.command(&u.command);
        u.user = u.user.as_deref().map(|x| p.user(x));
    }
    let by_cgroup = report.by == memtally_core::analyze::report::ReportBy::Cgroup;
    for u in &mut report.unread {
        u.cgroup = u.cgroup.as_deref().map(|c| p.cgroup(c));
    }
    for g in &mut report.groups {
        g.key = match (by_user, by_cgroup) {
            (true, _) => p.user(&g.key),
            (_, true) => p.cgroup(&g.key),
            _ => p.path(&g.key),
        };
    }
    if let Some(Ok(c)) = &mut report.cgroups {
        for row in &mut c.rows {
            row.path = p.cgroup(&row.path);
        }
    }
    if let Some(Ok(g)) = &mut report.gpu {
        for x in &mut g.processes {
            x.command = p.command(&x.command);
        }
    }
    report.snapshot.proc_root = report.snapshot.proc_root.as_deref().map(|x| p.path(x));
}

/// Redacts a watch series' labels (its processes' command lines).
pub fn redact_series(s: &mut memtally_core::usecase::report::SeriesReport) {
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
