//! Why the kernel refused memtally a process's memory files, as best it
//! can be told from here. `/proc/PID/smaps` (and `smaps_rollup`, `maps`
//! contents, `fd`) pass the kernel's ptrace read check
//! (`PTRACE_MODE_READ_FSCREDS`): the same uids and gids as the target, the
//! target dumpable and its permitted capabilities a subset of memtally's,
//! or else `CAP_SYS_PTRACE` in the target's user namespace; then the
//! security modules (Landlock, AppArmor, SELinux) may still say no. Yama's
//! `ptrace_scope` governs only attaching, never these reads, so it is not a
//! cause. memtally's own credentials are read from `/proc/self/status`.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::OnceLock;

use crate::model::Withheld;
use crate::source::ProcRoot;

const CAP_DAC_OVERRIDE: u32 = 1;
const CAP_DAC_READ_SEARCH: u32 = 2;
const CAP_SYS_PTRACE: u32 = 19;
const CAP_SYS_ADMIN: u32 = 21;
const CAP_PERFMON: u32 = 38;

/// The credentials of a `status` file that matter to the ptrace check.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Creds {
    /// Real, effective, saved and filesystem uid.
    uids: Vec<u32>,
    /// Real, effective, saved and filesystem gid.
    gids: Vec<u32>,
    /// Permitted capabilities.
    cap_prm: u64,
    /// Effective capabilities.
    cap_eff: u64,
}

impl Creds {
    fn parse(status: &str) -> Option<Creds> {
        let field = |key: &str| {
            status.lines().find_map(|l| l.strip_prefix(key)?.strip_prefix(':').map(str::trim))
        };
        let ids = |key: &str| -> Vec<u32> {
            field(key).map_or_else(Vec::new, |v| {
                v.split_whitespace().filter_map(|n| n.parse().ok()).collect()
            })
        };
        let caps = |key: &str| field(key).and_then(|v| u64::from_str_radix(v, 16).ok());
        let uids = ids("Uid");
        (uids.len() == 4).then(|| Creds {
            uids,
            gids: ids("Gid"),
            cap_prm: caps("CapPrm").unwrap_or(0),
            cap_eff: caps("CapEff").unwrap_or(0),
        })
    }

    fn euid(&self) -> u32 {
        self.uids[1]
    }

    fn fsuid(&self) -> u32 {
        self.uids[3]
    }

    fn has(&self, cap: u32) -> bool {
        self.cap_eff & (1 << cap) != 0
    }
}

/// memtally's own standing: credentials, and its user namespace when it is
/// not the initial one.
#[derive(Debug, Clone, Default)]
struct Own {
    creds: Option<Creds>,
    /// `/proc/self/uid_map` when it is not the identity map of the initial
    /// namespace (`0 0 4294967295`).
    user_ns: Option<String>,
}

fn own() -> &'static Own {
    static OWN: OnceLock<Own> = OnceLock::new();
    OWN.get_or_init(|| {
        let read = |p: &str| std::fs::read_to_string(p).ok();
        let user_ns = read("/proc/self/uid_map")
            .map(|m| m.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|m| m != "0 0 4294967295");
        Own { creds: read("/proc/self/status").as_deref().and_then(Creds::parse), user_ns }
    })
}

/// A `hidepid=` option of the procfs mounted at `at`, if any.
fn hidepid(at: &Path) -> Option<String> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").ok()?;
    let at = at.canonicalize().ok()?;
    mounts.lines().rev().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.len() >= 4 && f[2] == "proc" && Path::new(f[1]) == at).then(|| {
            f[3].split(',')
                .find(|o| o.starts_with("hidepid=") && *o != "hidepid=0")
                .map(String::from)
        })?
    })
}

/// The active security modules, where securityfs is readable.
fn security_modules() -> Option<String> {
    std::fs::read_to_string("/sys/kernel/security/lsm").ok().map(|s| s.trim().to_string())
}

/// What memtally is, for messages: `uid 1000`, `root`.
fn who(c: &Creds) -> String {
    if c.euid() == 0 {
        "root".into()
    } else {
        format!("uid {}", c.euid())
    }
}

/// Why process `pid`'s files were refused, and what would let memtally
/// read them: one clause, for the permission-denied message.
pub(crate) fn why_denied(root: &ProcRoot, pid: u32) -> String {
    if !root.is_procfs() {
        return "the recorded file's permissions do not let memtally read it".into();
    }
    let own = own();
    let Some(me) = &own.creds else {
        return "run memtally as that user, as root, or with CAP_SYS_PTRACE".into();
    };
    let dir = root.path().join(pid.to_string());
    let target = std::fs::read_to_string(dir.join("status")).ok();
    let facts = Facts {
        pid,
        me,
        user_ns: own.user_ns.as_deref(),
        target: target.as_deref().and_then(Creds::parse),
        dir_uid: std::fs::metadata(&dir).ok().map(|m| m.uid()),
        hidepid: &|| hidepid(root.path()),
        modules: &security_modules,
        proc_path: root.path(),
    };
    facts.diagnose()
}

/// What is known when a read was refused (the slower facts as functions,
/// asked only when the cheap ones do not explain it).
struct Facts<'a> {
    pid: u32,
    me: &'a Creds,
    user_ns: Option<&'a str>,
    target: Option<Creds>,
    /// Owner of `/proc/PID`: root when the process is not dumpable.
    dir_uid: Option<u32>,
    hidepid: &'a dyn Fn() -> Option<String>,
    modules: &'a dyn Fn() -> Option<String>,
    proc_path: &'a Path,
}

impl Facts<'_> {
    fn diagnose(&self) -> String {
        let (pid, me) = (self.pid, self.me);
        let hidden = match (&self.target, (self.hidepid)()) {
            (None, Some(h)) => {
                format!(
                    " ({} is mounted {h}, so even its status is hidden)",
                    self.proc_path.display()
                )
            }
            _ => String::new(),
        };
        let ptrace = me.has(CAP_SYS_PTRACE);
        // Unmapped uids show as the overflow uid (65534) inside a namespace.
        let outside = self.target.as_ref().is_none_or(|t| t.euid() == 65534);
        if let Some(map) = self.user_ns.filter(|_| ptrace || outside) {
            return format!(
                "memtally runs in a user namespace (uid_map {map}): its uid and capabilities{} count only inside it, not for process {pid}; run memtally in the host's namespace{hidden}",
                if ptrace { ", CAP_SYS_PTRACE too," } else { "" }
            );
        }
        let mut maybe_dumpable = "";
        if !ptrace {
            let Some(t) = &self.target else {
                return format!(
                    "memtally runs as {} without CAP_SYS_PTRACE: run it as the process's user, as root, or with CAP_SYS_PTRACE{hidden}",
                    who(me)
                );
            };
            if !t.uids.iter().all(|&u| u == me.fsuid()) {
                return if me.euid() == 0 {
                    format!(
                        "memtally runs as root but without CAP_SYS_PTRACE (effective capabilities {:#x}: dropped by the container or service manager), which reading another user's process needs; grant it CAP_SYS_PTRACE",
                        me.cap_eff
                    )
                } else {
                    format!(
                        "memtally runs as {} without CAP_SYS_PTRACE: run it as that user, as root, or with CAP_SYS_PTRACE",
                        who(me)
                    )
                };
            }
            if !t.gids.iter().all(|g| me.gids.get(3) == Some(g)) {
                return format!(
                    "process {pid} runs with other group ids (gid {:?}, memtally's {:?}), as a set-gid program does: only CAP_SYS_PTRACE reads it",
                    t.gids, me.gids
                );
            }
            // The kernel gives a process that is not dumpable /proc files
            // owned by root.
            if self.dir_uid.is_some_and(|u| u != t.euid()) {
                return format!(
                    "process {pid} is not dumpable (a set-uid program, one that changed its credentials, or one that called prctl(PR_SET_DUMPABLE, 0)): even its own user needs CAP_SYS_PTRACE to read it"
                );
            }
            let extra = t.cap_prm & !me.cap_eff;
            if extra != 0 {
                return format!(
                    "process {pid} holds capabilities memtally lacks (permitted {:#x}, memtally's {:#x}): only CAP_SYS_PTRACE reads a process with more capabilities",
                    t.cap_prm, me.cap_eff
                );
            }
            // Not every kernel (or sandbox) shows a process that is not
            // dumpable by its files' owner.
            maybe_dumpable = "the process is not dumpable (prctl(PR_SET_DUMPABLE, 0), a set-uid program: CAP_SYS_PTRACE would read it), or ";
        }
        let modules = (self.modules)()
            .unwrap_or_else(|| "unknown: /sys/kernel/security is not readable".into());
        format!(
            "memtally runs as {}{} and its uid and capabilities allow the read, so {maybe_dumpable}a security module or sandbox refused it (a Landlock domain, an AppArmor or SELinux policy; active modules: {modules}){hidden}",
            who(me),
            if ptrace { " with CAP_SYS_PTRACE" } else { "" }
        )
    }
}

/// What would let memtally read processes it was refused, from its own
/// credentials alone (for notes that cover many processes).
pub fn read_hint() -> String {
    match &own().creds {
        Some(me) if own().user_ns.is_some() => format!(
            "memtally runs as {} in a user namespace: run it in the host's namespace to see them",
            who(me)
        ),
        Some(me) if me.has(CAP_SYS_PTRACE) => format!(
            "memtally already runs as {} with CAP_SYS_PTRACE, so a security module or sandbox blocks them (`memtally show PID` names the cause)",
            who(me)
        ),
        Some(me) if me.euid() == 0 => {
            "memtally runs as root without CAP_SYS_PTRACE: grant it CAP_SYS_PTRACE to see them"
                .into()
        }
        _ => "run as root or with CAP_SYS_PTRACE to see them".into(),
    }
}

/// The figures memtally's own privileges leave out of other users'
/// processes, from its credentials alone (nothing is read but
/// `/proc/self`). In a user namespace other than the first, its
/// capabilities count for nothing outside it, so every kind is left out.
pub fn withheld() -> Vec<Withheld> {
    match &own().creds {
        Some(me) => withheld_by(me, own().user_ns.is_some()),
        None => vec![Withheld::Detail, Withheld::Gpu, Withheld::PageFrames],
    }
}

fn withheld_by(me: &Creds, in_user_ns: bool) -> Vec<Withheld> {
    if in_user_ns {
        return vec![Withheld::Detail, Withheld::Gpu, Withheld::PageFrames];
    }
    // The ptrace read check of smaps and smaps_rollup (mm_access) also
    // admits CAP_PERFMON and CAP_SYS_ADMIN on Linux 5.8 and later; fdinfo's
    // check does not (measured on 6.18: tests/cli/privileges.rs).
    let detail = me.has(CAP_SYS_PTRACE) || me.has(CAP_PERFMON) || me.has(CAP_SYS_ADMIN);
    let dac = me.has(CAP_DAC_READ_SEARCH) || me.has(CAP_DAC_OVERRIDE);
    let gpu = me.has(CAP_SYS_PTRACE) && dac;
    let frames = me.has(CAP_SYS_ADMIN) && (dac || me.fsuid() == 0);
    let mut out = Vec::new();
    if !detail {
        out.push(Withheld::Detail);
    }
    if !gpu {
        out.push(Withheld::Gpu);
    }
    if !frames {
        out.push(Withheld::PageFrames);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn withheld_follows_the_capabilities() {
        let cap = |c: u32| 1u64 << c;
        let w = |uid, caps| withheld_by(&creds(uid, caps), false);
        use Withheld::*;
        assert_eq!(w(65534, 0), [Detail, Gpu, PageFrames]);
        assert_eq!(w(65534, cap(CAP_SYS_PTRACE)), [Gpu, PageFrames]);
        assert_eq!(w(65534, cap(CAP_PERFMON)), [Gpu, PageFrames]);
        assert_eq!(w(65534, cap(CAP_DAC_READ_SEARCH)), [Detail, Gpu, PageFrames]);
        assert_eq!(w(65534, cap(CAP_SYS_PTRACE) | cap(CAP_DAC_READ_SEARCH)), [PageFrames]);
        assert_eq!(w(65534, cap(CAP_SYS_ADMIN) | cap(CAP_DAC_READ_SEARCH)), [Gpu]);
        assert_eq!(w(0, cap(CAP_SYS_ADMIN)), [Gpu]);
        assert!(w(0, ALL).is_empty());
        // Root without capabilities (a container that dropped them all).
        assert_eq!(w(0, 0), [Detail, Gpu, PageFrames]);
        assert_eq!(withheld_by(&creds(0, ALL), true), [Detail, Gpu, PageFrames]);
    }

    #[test]
    fn credentials_are_read_from_status() {
        let status = "Name:\tx\nUid:\t1000\t1000\t1000\t1000\nGid:\t100\t100\t100\t100\nCapPrm:\t0000000000080000\nCapEff:\t0000000000080000\n";
        let c = Creds::parse(status).unwrap();
        assert_eq!(c.uids, vec![1000; 4]);
        assert_eq!(c.gids, vec![100; 4]);
        assert!(c.has(CAP_SYS_PTRACE));
        assert_eq!(who(&c), "uid 1000");
        assert!(Creds::parse("Name:\tx\n").is_none());
    }

    fn creds(uid: u32, caps: u64) -> Creds {
        Creds { uids: vec![uid; 4], gids: vec![uid; 4], cap_prm: caps, cap_eff: caps }
    }

    fn diagnose(me: &Creds, user_ns: Option<&str>, target: Option<Creds>, dir_uid: u32) -> String {
        Facts {
            pid: 42,
            me,
            user_ns,
            target,
            dir_uid: Some(dir_uid),
            hidepid: &|| Some("hidepid=invisible".into()),
            modules: &|| Some("capability,landlock,yama".into()),
            proc_path: Path::new("/proc"),
        }
        .diagnose()
    }

    const PTRACE: u64 = 1 << CAP_SYS_PTRACE;
    const ALL: u64 = 0x1ff_ffff_ffff;

    #[test]
    fn each_blocker_is_named() {
        // Another user, no capability.
        let why = diagnose(&creds(1000, 0), None, Some(creds(0, ALL)), 0);
        assert!(why.starts_with("memtally runs as uid 1000 without CAP_SYS_PTRACE"), "{why}");
        // Root whose CAP_SYS_PTRACE was dropped: not "run as root".
        let why = diagnose(&creds(0, ALL & !PTRACE), None, Some(creds(1000, 0)), 1000);
        assert!(why.starts_with("memtally runs as root but without CAP_SYS_PTRACE"), "{why}");
        assert!(!why.contains("as root, or"), "{why}");
        // Same user, but the process is not dumpable (its files are root's).
        let why = diagnose(&creds(1000, 0), None, Some(creds(1000, 0)), 0);
        assert!(why.contains("process 42 is not dumpable"), "{why}");
        // Same user, the process holds capabilities memtally lacks.
        let why = diagnose(&creds(1000, 0), None, Some(creds(1000, 1 << 12)), 1000);
        assert!(why.contains("holds capabilities memtally lacks"), "{why}");
        // A user namespace: root there is nobody here.
        let why = diagnose(&creds(0, ALL), Some("0 100000 65536"), Some(creds(65534, 0)), 65534);
        assert!(why.contains("user namespace (uid_map 0 100000 65536)"), "{why}");
        // Root with CAP_SYS_PTRACE and still refused: a security module.
        let why = diagnose(&creds(0, ALL), None, Some(creds(0, ALL)), 0);
        assert!(why.starts_with("memtally runs as root with CAP_SYS_PTRACE and its uid"), "{why}");
        assert!(why.contains("security module or sandbox") && why.contains("landlock"), "{why}");
        assert!(!why.contains("not dumpable"), "CAP_SYS_PTRACE reads those: {why}");
        // Even the status is hidden: hidepid says why.
        let why = diagnose(&creds(1000, 0), None, None, 0);
        assert!(why.contains("/proc is mounted hidepid=invisible"), "{why}");
    }

    #[test]
    fn own_credentials_are_this_process() {
        let me = own().creds.clone().unwrap();
        assert_eq!(me.euid(), rustix::process::geteuid().as_raw());
    }
}
