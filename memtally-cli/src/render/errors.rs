//! The words of an error on the command line. The library's errors say
//! what failed as data; where the remedy is an option of this command
//! line (`--name`, `--include-self`, `--strict`, `--timeout`), it is
//! named here, once, and every other error reads as the library words it.

use std::fmt;

use memtally_core::error::{LiveOnly, Selector, Uncomparable, Unmatched, UseCase};
use memtally_core::Error;

/// An error as memtally prints it: `Worded(&e).to_string()`.
pub struct Worded<'a>(pub &'a Error);

impl fmt::Display for Worded<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Error::BadPattern { pattern, why } => {
                write!(f, "--name {pattern:?}: not a valid regular expression: {why}")
            }
            Error::NoSuchUser { user } => write!(
                f,
                "--user {user}: no such user in /etc/passwd (give a name or a numeric uid)"
            ),
            Error::NoSelection { use_case: UseCase::Show } => f.write_str(
                "show needs a PID, or a selection (--pid, --tree, --name, --user, --cgroup); `memtally top` shows every process",
            ),
            Error::NoSelection { use_case: UseCase::Wss } => f.write_str(
                "wss needs a PID or a selection (--pid, --tree, --name, --user, --cgroup): it resets the referenced bits of the processes it measures, so it never measures every process unasked",
            ),
            Error::NoSelection { use_case: UseCase::Faults } => f.write_str(
                "faults needs a PID or a selection (--pid, --tree, --name, --user, --cgroup)",
            ),
            Error::NoSelection { use_case: UseCase::Capture } => f.write_str(
                "capture needs a PID or a selection (--pid, --tree, --name, --user, --cgroup)",
            ),
            Error::NoMatch { asked, why } => {
                write!(f, "no process matches {}", selection(asked))?;
                let why: Vec<String> = why.iter().map(unmatched).collect();
                if !why.is_empty() {
                    write!(f, ": {}", why.join("; "))?;
                }
                Ok(())
            }
            Error::NoneRead { asked, first_failure } => {
                write!(f, "no process of {} was read: ", selection(asked))?;
                match first_failure {
                    Some((pid, e)) => write!(f, "process {pid} could not be read: {e}"),
                    None => f.write_str("every selected process exited while being read; run again"),
                }
            }
            Error::UnreadableLines { path, count, samples } => write!(
                f,
                "{}: {count} unreadable line(s) (--strict): {}",
                path.display(),
                samples.join("; ")
            ),
            Error::NotComparable { path, input: Uncomparable::Json } => write!(
                f,
                "{}: a JSON document memtally cannot compare: expected `memtally snapshot`, `memtally show --format json` or `memtally vmmap --format json` output",
                path.display()
            ),
            Error::NotComparable { path, input: Uncomparable::Text } => write!(
                f,
                "{}: neither JSON nor vmmap output: give a file written by `memtally snapshot`, `memtally show --format json`, `memtally vmmap --format json`, or saved vmmap text",
                path.display()
            ),
            Error::NoVmmap => f.write_str(
                "vmmap not found on PATH: --pid runs macOS's vmmap (part of the Xcode command line tools); elsewhere, save `vmmap -noCoalesce PID > FILE` on the Mac and run `memtally vmmap FILE`",
            ),
            Error::TimedOut { what, limit } => write!(
                f,
                "{what} did not finish within {limit:?} and was stopped; a large process can take longer: raise --timeout"
            ),
            Error::LiveOnly { root, what: what @ LiveOnly::WorkingSet } => write!(
                f,
                "{what} is measured on live processes only: {} is a recorded tree (--proc-root); run `memtally wss` on the machine itself, without --proc-root",
                root.display()
            ),
            Error::LiveOnly { root, what: what @ LiveOnly::Pages(_) } => write!(
                f,
                "{what} is read from the live page tables (pagemap, kpagecount, kpageflags): {} is a recorded tree (--proc-root), which has none; run it on the machine itself, without --proc-root",
                root.display()
            ),
            Error::LiveOnly { root, what: LiveOnly::Faults } => {
                write!(f, "faults records live processes only: {} is a recorded tree", root.display())
            }
            // The rest name no option: the library's own words.
            e => write!(f, "{e}"),
        }
    }
}

/// A selection as the command line states it (`--pid 1 --name "x"`).
fn selection(asked: &[Selector]) -> String {
    if asked.is_empty() {
        return "every process".into();
    }
    let list = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    let words: Vec<String> = asked
        .iter()
        .map(|s| match s {
            Selector::Pids(pids) => format!("--pid {}", list(pids)),
            Selector::Name(re) => format!("--name {re:?}"),
            Selector::Uids(uids) => format!("--user {}", list(uids)),
            Selector::Tree(t) => format!("--tree {t}"),
            Selector::Cgroup(c) => format!("--cgroup {c}"),
        })
        .collect();
    words.join(" ")
}

/// One reason a narrowed selection matched nothing.
fn unmatched(why: &Unmatched) -> String {
    match why {
        Unmatched::Missing(pids) => {
            let list: Vec<String> = pids.iter().map(u32::to_string).collect();
            format!("no process {} exists", list.join(", "))
        }
        Unmatched::KernelThreads(n) => {
            format!("{n} kernel thread{} left out (no memory map)", if *n == 1 { "" } else { "s" })
        }
        Unmatched::Vanished(n) => format!("{n} processes exited while being listed"),
        Unmatched::OnlySelf => {
            "only memtally itself matched (left out; --include-self keeps it)".into()
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn worded(e: Error) -> String {
        Worded(&e).to_string()
    }

    #[test]
    fn a_selection_reads_as_its_options_in_the_order_given() {
        let asked = vec![
            Selector::Pids(vec![1, 2]),
            Selector::Name("py.*".into()),
            Selector::Uids(vec![0]),
            Selector::Tree(7),
            Selector::Tree(8),
            Selector::Cgroup("/a".into()),
        ];
        let why = vec![
            Unmatched::Missing(vec![1, 2]),
            Unmatched::KernelThreads(1),
            Unmatched::Vanished(3),
            Unmatched::OnlySelf,
        ];
        assert_eq!(
            worded(Error::NoMatch { asked, why }),
            "no process matches --pid 1,2 --name \"py.*\" --user 0 --tree 7 --tree 8 --cgroup /a: \
             no process 1, 2 exists; 1 kernel thread left out (no memory map); \
             3 processes exited while being listed; \
             only memtally itself matched (left out; --include-self keeps it)"
        );
        assert_eq!(
            worded(Error::NoneRead { asked: Vec::new(), first_failure: Some((9, "gone".into())) }),
            "no process of every process was read: process 9 could not be read: gone"
        );
    }

    #[test]
    fn remedies_name_the_option_and_other_errors_keep_the_library_words() {
        let e =
            Error::TimedOut { what: "vmmap -noCoalesce 5".into(), limit: Duration::from_secs(3) };
        assert_eq!(
            worded(e),
            "vmmap -noCoalesce 5 did not finish within 3s and was stopped; a large process can take longer: raise --timeout"
        );
        let e = Error::TimedOut {
            what: "vmmap -noCoalesce 5".into(),
            limit: Duration::from_millis(1500),
        };
        assert!(worded(e).contains(" within 1.5s and was stopped"), "a part of a second is kept");
        let e = Error::UnreadableLines {
            path: "f.txt".into(),
            count: 2,
            samples: vec!["line 4: x".into(), "line 5: y".into()],
        };
        assert_eq!(worded(e), "f.txt: 2 unreadable line(s) (--strict): line 4: x; line 5: y");
        let e = Error::Usage("bad sort".into());
        assert_eq!(worded(e), "bad sort");
    }
}
