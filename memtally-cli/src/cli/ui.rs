//! `memtally ui`: the full-screen explorer (see `crate::ui`).

use std::io::Write;
use std::time::Duration;

use clap::Args;

use memtally_core::analyze::top::TopBy;
use memtally_core::source::ProcRoot;
use memtally_core::{Error, Result};

use crate::cli::choice::choice;
use crate::cli::duration::duration;

#[derive(Debug, Args)]
#[command(after_long_help = KEYS)]
pub struct UiArgs {
    /// Time between refreshes (`500ms`, `1s`, `5s`).
    #[arg(long, default_value = "1s", value_parser = duration)]
    pub interval: Duration,

    /// The share of one core, in percent, the explorer may take: where
    /// reading the process list each refresh costs more (the kernel walks
    /// every resident page for PSS), the list is read less often and the
    /// title says how often; 0 reads it every refresh.
    #[arg(long, value_name = "PERCENT", default_value_t = 5.0, value_parser = max_cpu)]
    pub max_cpu: f64,

    /// How the process level starts grouped (`g` cycles it).
    #[arg(long, value_parser = choice::<TopBy>(), default_value = "process")]
    pub by: TopBy,
}

const KEYS: &str = "\
Keys:
  Enter / Esc      down / up: machine -> processes -> categories -> mappings
  /                filter the processes by name, or one PID
  s                sort: pss, uss, rss, dirty, swap, gpu, growth
  g                group: process, program, user, cgroup, tree (as top --by)
  x                pin the row: EXCL (bytes no other process maps, as top --exact;
                   root) and WSET (working set, as wss: resets the pinned
                   processes' referenced bits each refresh); x again unpins
  w                write a snapshot of what is shown (as memtally snapshot), here
  ?  q             the keys; quit (the terminal is restored, also on SIGTERM)

Needs a terminal; `memtally top` prints the same figures once, for pipes and files.";

/// A percentage from 0 to 100.
fn max_cpu(s: &str) -> std::result::Result<f64, String> {
    match s.trim_end_matches('%').parse::<f64>() {
        Ok(v) if (0.0..=100.0).contains(&v) => Ok(v),
        _ => Err(format!("{s:?} is not a percentage from 0 to 100")),
    }
}

pub fn run(root: &ProcRoot, args: &UiArgs, _out: &mut dyn Write) -> Result<()> {
    if args.interval < Duration::from_millis(100) {
        return Err(Error::Usage("--interval must be at least 100ms".into()));
    }
    crate::ui::run(
        root.clone(),
        crate::ui::Options { interval: args.interval, by: args.by, max_cpu: args.max_cpu },
    )
}
