//! Which number a shell sees: the exit code of each error, as the README's
//! table lists them. The library's [`Error`] says what failed; the number
//! for it is the command line's choice, made here and nowhere else.

use memtally_core::Error;

/// Success.
pub const OK: i32 = 0;
/// An I/O or other runtime failure.
pub const FAILURE: i32 = 1;
/// Bad command-line usage (clap uses 2 as well).
pub const USAGE: i32 = 2;
/// The process or file named does not exist.
pub const NOT_FOUND: i32 = 3;
/// Not allowed to read what was asked for.
pub const PERMISSION: i32 = 4;
/// The input is not what it claims to be (parse error).
pub const BAD_INPUT: i32 = 5;
/// An external tool (vmmap, nvidia-smi) failed or timed out.
pub const TOOL_FAILED: i32 = 6;
/// Ended by a signal: this plus the signal's number (129 SIGHUP, 130
/// SIGINT, 143 SIGTERM), as a shell reports a process the signal killed.
pub const SIGNAL_BASE: i32 = 128;

/// The exit code for `e`.
pub fn exit_code(e: &Error) -> i32 {
    match e {
        Error::NoSuchProcess { .. }
        | Error::Exited { .. }
        | Error::Changed { .. }
        | Error::Unsteady { .. }
        | Error::NotFound(_)
        | Error::NoMatch { .. }
        | Error::NoneRead { .. }
        | Error::NoProcessDirs { .. } => NOT_FOUND,
        Error::PermissionDenied { .. } | Error::ResetDenied { .. } | Error::FramesHidden { .. }
        | Error::FaultsDenied { .. } => PERMISSION,
        Error::NoIdleTracking { denied: true, .. } => PERMISSION,
        Error::NoIdleTracking { denied: false, .. } => USAGE,
        Error::KernelThread { .. }
        | Error::Parse { .. }
        | Error::UnreadableLines { .. }
        | Error::NotComparable { .. }
        | Error::KindsDiffer { .. } => BAD_INPUT,
        Error::Io { source, .. } => match source.kind() {
            std::io::ErrorKind::NotFound => NOT_FOUND,
            std::io::ErrorKind::PermissionDenied => PERMISSION,
            _ => FAILURE,
        },
        Error::Usage(_)
        | Error::BadPattern { .. }
        | Error::NoSuchUser { .. }
        | Error::NoSelection { .. }
        // A live-only figure asked of a recording, or a Linux-only one of
        // another system: the request is wrong.
        | Error::LiveOnly { .. }
        | Error::LinuxOnly { .. } => USAGE,
        Error::Tool(_) | Error::NoVmmap | Error::TimedOut { .. } => TOOL_FAILED,
        Error::ThreadPanicked { .. } => FAILURE,
        // An error a newer library adds and this table does not know yet.
        _ => FAILURE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panicked_reader_is_a_failure_and_two_kinds_are_bad_input() {
        let e = Error::ThreadPanicked { what: "a pagemap reader" };
        assert_eq!(exit_code(&e), FAILURE);
        assert_eq!(
            e.to_string(),
            "a pagemap reader stopped with a panic: a bug in memtally; please report it with the command that ran"
        );
        let e = Error::KindsDiffer {
            before: "a.json".into(),
            before_kind: "linux",
            after: "b.txt".into(),
            after_kind: "vmmap",
        };
        assert_eq!(exit_code(&e), BAD_INPUT);
        let e = Error::NoProcessDirs { root: "fixtures/x".into(), nested: 1 };
        assert_eq!(exit_code(&e), NOT_FOUND);
        let e =
            Error::LinuxOnly { what: "faults samples page faults with Linux's perf_event_open" };
        assert_eq!(exit_code(&e), USAGE);
        assert_eq!(
            e.to_string(),
            "faults samples page faults with Linux's perf_event_open: Linux only"
        );
    }
}
