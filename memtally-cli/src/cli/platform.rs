//! Which commands this system can run: most read Linux's `/proc`, which
//! macOS does not have. Decided here, once, before any command runs, as a
//! pure function of the system and the parsed command line (so Linux's
//! tests can ask it about a Mac): a refused command exits with one line
//! that says what it reads and what to use instead (exit 2, as a request
//! that cannot be met here), never with `/proc: No such file or directory`.

use crate::cli::{Cli, Command};

/// The operating system memtally runs on, as far as commands care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum System {
    Linux,
    MacOs,
    /// Neither: only the commands that read files work.
    Other,
}

impl System {
    /// The system this binary was built for.
    pub fn current() -> System {
        if cfg!(target_os = "linux") {
            System::Linux
        } else if cfg!(target_os = "macos") {
            System::MacOs
        } else {
            System::Other
        }
    }
}

/// What a command needs of the system it runs on.
enum Needs {
    /// Files only (vmmap text, snapshots, series): every system.
    Files,
    /// Linux's live `/proc` (or a recording of it, `--proc-root`).
    Proc,
    /// The process list: Linux's `/proc`, or libproc on macOS;
    /// `linux_only` names the option given that needs `/proc` even there.
    Processes { linux_only: Option<&'static str> },
}

/// The one line refusing `cli` on `system` (after `memtally: `), or
/// `None` when it can run there.
pub fn refusal(system: System, cli: &Cli) -> Option<String> {
    if system == System::Linux || cli.proc_root.is_some() {
        // A recorded tree is read the same everywhere.
        return None;
    }
    let (name, needs) = needs(cli.command.as_ref());
    let what = match needs {
        Needs::Files => return None,
        Needs::Processes { linux_only: None } if system == System::MacOs => return None,
        Needs::Processes { linux_only: Some(option) } => format!("memtally {name} {option}"),
        Needs::Processes { .. } | Needs::Proc => format!("memtally {name}"),
    };
    let instead = match (system, name) {
        (System::MacOs, "report") => {
            "on a Mac, memtally report --input FILE draws a saved vmmap report (vmmap -noCoalesce PID > FILE)"
        }
        (System::MacOs, "top") => "on a Mac, memtally top lists every process by footprint without it",
        (System::MacOs, "snapshot") => {
            "on a Mac, memtally vmmap --pid PID --format json > a.json is a snapshot of one process that diff, plot and report read"
        }
        (System::MacOs, _) => {
            "on a Mac, use memtally (every process by footprint) or memtally vmmap --pid PID (one process's regions); --proc-root DIR reads a recording made on Linux"
        }
        _ => "--proc-root DIR reads a recording made on Linux (memtally capture)",
    };
    let here = match system {
        System::MacOs => "macOS",
        _ => "this system",
    };
    Some(format!("{what} reads Linux's /proc, which {here} does not have: {instead}"))
}

/// The command's name and what it needs.
fn needs(command: Option<&Command>) -> (&'static str, Needs) {
    use Needs::{Files, Proc, Processes};
    let Some(command) = command else { return ("top", Processes { linux_only: None }) };
    match command {
        Command::Top(a) => ("top", Processes { linux_only: top_linux_only(a) }),
        Command::Vmmap(_) => ("vmmap", Files),
        Command::Diff(_) => ("diff", Files),
        #[cfg(feature = "plot")]
        Command::Plot(_) => ("plot", Files),
        Command::Completions(_) => ("completions", Files),
        Command::Man(_) => ("man", Files),
        #[cfg(feature = "schema")]
        Command::Schema(_) => ("schema", Files),
        // A saved report or snapshot drawn (`--input`, `--diff`) is a file.
        Command::Report(a) if a.input.is_some() || !a.diff.is_empty() => ("report", Files),
        Command::Report(_) => ("report", Proc),
        Command::Files(_) => ("files", Proc),
        #[cfg(feature = "ui")]
        Command::Ui(_) => ("ui", Proc),
        Command::Show(_) => ("show", Proc),
        Command::Shared(_) => ("shared", Proc),
        Command::Snapshot(_) => ("snapshot", Proc),
        Command::Watch(_) => ("watch", Proc),
        Command::Wss(_) => ("wss", Proc),
        Command::Faults(_) => ("faults", Proc),
        Command::Capture(_) => ("capture", Proc),
        #[cfg(feature = "serve")]
        Command::Serve(_) => ("serve", Proc),
        #[cfg(feature = "serve")]
        Command::Export(_) => ("export", Proc),
        Command::Gpu(_) => ("gpu", Proc),
        Command::Machine(_) => ("machine", Proc),
        Command::Cgroup(_) => ("cgroup", Proc),
    }
}

/// The option of `top` that needs Linux's `/proc` even where the process
/// list comes from elsewhere: cgroups, page frames, OOM scores.
fn top_linux_only(a: &crate::cli::top::TopArgs) -> Option<&'static str> {
    use memtally_core::analyze::top::{TopBy, TopSort};
    let oom = |s: &[TopSort]| s.contains(&TopSort::Oom);
    if a.by == TopBy::Cgroup {
        Some("--by cgroup")
    } else if a.select.cgroup.is_some() {
        Some("--cgroup")
    } else if a.exact {
        Some("--exact")
    } else if a.oom || oom(&a.sort) || a.columns.as_deref().is_some_and(oom) {
        Some("--oom")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn refused(system: System, args: &[&str]) -> Option<String> {
        let cli = Cli::try_parse_from(std::iter::once("memtally").chain(args.iter().copied()))
            .unwrap_or_else(|e| panic!("{args:?}: {e}"));
        refusal(system, &cli)
    }

    #[test]
    fn linux_runs_everything() {
        for args in [&["show", "1"][..], &["wss", "1"], &["ui"], &[], &["top", "--exact"]] {
            assert_eq!(refused(System::Linux, args), None, "{args:?}");
        }
    }

    #[test]
    fn a_mac_reads_files_and_lists_processes() {
        for args in [
            &[][..],
            &["top", "--by", "program", "--sort", "footprint"],
            &["top", "--tree", "1", "--format", "json"],
            &["vmmap", "--pid", "640", "--summary"],
            &["vmmap", "saved.txt"],
            &["diff", "a.txt", "b.txt"],
            &["report", "--input", "saved.txt", "-o", "r.html"],
            &["completions", "zsh"],
            &["man", "top"],
            &["plot", "s.csv", "-o", "s.svg"],
        ] {
            assert_eq!(refused(System::MacOs, args), None, "{args:?}");
        }
    }

    #[test]
    fn a_mac_refuses_what_reads_proc_in_one_line_that_says_what_instead() {
        let line = refused(System::MacOs, &["show", "640"]).unwrap();
        assert_eq!(
            line,
            "memtally show reads Linux's /proc, which macOS does not have: on a Mac, use memtally (every process by footprint) or memtally vmmap --pid PID (one process's regions); --proc-root DIR reads a recording made on Linux"
        );
        for args in [
            &["files"][..],
            &["shared", "1"],
            &["snapshot", "-o", "a.json"],
            &["watch", "1"],
            &["wss", "1"],
            &["capture", "1", "-o", "d"],
            &["gpu"],
            &["machine"],
            &["cgroup"],
            &["serve"],
            &["export"],
            &["ui"],
            &["report", "-o", "r.html"],
        ] {
            let line = refused(System::MacOs, args).unwrap_or_else(|| panic!("{args:?}"));
            assert!(
                line.starts_with(&format!("memtally {} reads Linux's /proc", args[0])),
                "{line}"
            );
            assert!(!line.contains('\n'), "{line}");
        }
        let line = refused(System::MacOs, &["snapshot", "640"]).unwrap();
        assert!(line.ends_with("memtally vmmap --pid PID --format json > a.json is a snapshot of one process that diff, plot and report read"), "{line}");
        let line = refused(System::MacOs, &["report"]).unwrap();
        assert!(line.ends_with("memtally report --input FILE draws a saved vmmap report (vmmap -noCoalesce PID > FILE)"), "{line}");
    }

    #[test]
    fn top_options_that_need_proc_are_named() {
        for (args, option) in [
            (&["top", "--exact"][..], "--exact"),
            (&["top", "--by", "cgroup"], "--by cgroup"),
            (&["top", "--cgroup", "/system.slice"], "--cgroup"),
            (&["top", "--sort", "oom"], "--oom"),
            (&["top", "--columns", "footprint,oom"], "--oom"),
        ] {
            let line = refused(System::MacOs, args).unwrap();
            assert!(
                line.starts_with(&format!("memtally top {option} reads Linux's /proc")),
                "{line}"
            );
            assert!(line.ends_with("memtally top lists every process by footprint without it"));
        }
    }

    #[test]
    fn a_recording_is_read_anywhere_and_other_systems_read_files() {
        assert_eq!(refused(System::MacOs, &["--proc-root", "rec", "show", "1"]), None);
        assert_eq!(refused(System::Other, &["vmmap", "saved.txt"]), None);
        let line = refused(System::Other, &[]).unwrap();
        assert_eq!(
            line,
            "memtally top reads Linux's /proc, which this system does not have: --proc-root DIR reads a recording made on Linux (memtally capture)"
        );
    }
}
