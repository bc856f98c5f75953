//! The one parser of every duration flag (`--interval`, `--timeout`,
//! `--nvidia-timeout`, `--read-budget`, `--min-interval`, `--wss`): a
//! humantime duration (`500ms`, `5s`, `2m`, `1h 30m`), or a bare whole
//! number of seconds (`5`), as `--timeout` and `--nvidia-timeout` took
//! before they took durations.

use std::time::Duration;

/// A duration flag's value.
pub fn duration(s: &str) -> Result<Duration, String> {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s.parse().map(Duration::from_secs).map_err(|e| format!("{s}: {e}"));
    }
    humantime::parse_duration(s).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::{Cli, Command};

    #[test]
    fn a_duration_or_whole_seconds() {
        assert_eq!(duration("5s"), Ok(Duration::from_secs(5)));
        assert_eq!(duration("5"), Ok(Duration::from_secs(5)));
        assert_eq!(duration("0"), Ok(Duration::ZERO));
        assert_eq!(duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(duration("1m 30s"), Ok(Duration::from_secs(90)));
        for bad in ["", "soon", "15 parsecs", "-5", "1.5", "99999999999999999999"] {
            assert!(duration(bad).is_err(), "{bad:?}");
        }
    }

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(["memtally"].iter().chain(args))
    }

    /// Every duration flag takes `5s` and, where a bare number was taken
    /// before, a bare number as seconds.
    #[test]
    fn every_duration_flag_takes_a_duration() {
        let five = Duration::from_secs(5);
        let vmmap = |t: &str| match parse(&["vmmap", "--pid", "1", "--timeout", t]) {
            Ok(Cli { command: Some(Command::Vmmap(a)), .. }) => Ok(a.timeout),
            other => Err(format!("{other:?}")),
        };
        assert_eq!(vmmap("5s"), Ok(five));
        assert_eq!(vmmap("5"), Ok(five));
        assert!(vmmap("5 parsecs").is_err());
        let Ok(Cli { command: Some(Command::Vmmap(a)), .. }) = parse(&["vmmap", "f"]) else {
            panic!("vmmap f")
        };
        assert_eq!(a.timeout, Duration::from_secs(120), "the default");
        let gpu = |t: &str| match parse(&["gpu", "--nvidia-timeout", t]) {
            Ok(Cli { command: Some(Command::Gpu(a)), .. }) => Ok(a.nvidia_timeout),
            other => Err(format!("{other:?}")),
        };
        assert_eq!(gpu("5s"), Ok(five));
        assert_eq!(gpu("5"), Ok(five));
        assert_eq!(gpu("1500ms"), Ok(Duration::from_millis(1500)));
        let Ok(Cli { command: Some(Command::Gpu(a)), .. }) = parse(&["gpu"]) else { panic!("gpu") };
        assert_eq!(a.nvidia_timeout, five, "the default");
        for (command, flag) in [
            ("ui", "--interval"),
            ("watch", "--interval"),
            ("wss", "--interval"),
            ("export", "--read-budget"),
            ("serve", "--read-budget"),
            ("serve", "--min-interval"),
            ("snapshot", "--wss"),
        ] {
            for value in ["5s", "5"] {
                let parsed = parse(&[command, flag, value]);
                assert!(parsed.is_ok(), "{command} {flag} {value}: {parsed:?}");
            }
            assert!(parse(&[command, flag, "soon"]).is_err(), "{command} {flag} soon");
        }
    }
}
