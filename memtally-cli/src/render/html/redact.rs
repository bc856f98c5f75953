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
    for g in &mut report.groups {
        g.key = if by_user { p.user(&g.key) } else { p.path(&g.key) };
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
}
