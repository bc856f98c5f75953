//! `memtally faults`: which code made a selection's memory grow. Its page
//! faults are sampled with their call stacks for a time (or until Ctrl-C
//! or SIGTERM, which keep what was recorded), and printed as bytes by
//! category, read or written, with each category's top stacks; or as
//! folded stacks for a flame graph; or as JSON.

use std::io::Write;
use std::time::Duration;

use clap::{Args, ValueEnum};

use memtally_core::source::ProcRoot;
use memtally_core::Result;

use crate::cli::duration::duration;
use crate::cli::select::SelectArgs;
use crate::render::Screen;

/// How `faults` prints.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum FaultsFormat {
    /// Bytes by category and the top stacks of each, for people.
    #[default]
    Table,
    /// One `category;access;outer;...;inner BYTES` line a stack
    /// (flamegraph.pl, inferno, speedscope).
    Folded,
    /// One JSON document, exact bytes (docs/schema/faults.json).
    Json,
    /// A flame graph (SVG): categories at the root, then write (red),
    /// read (blue) or unknown, then the stacks.
    Svg,
}

/// How `faults` finds a fault's call stack.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum UnwindMode {
    /// Copy the user stack (--stack-bytes) and the registers with each
    /// sample and unwind them with the binaries' DWARF call-frame
    /// information: callers of code built without frame pointers (most
    /// distribution binaries) too. The kernel's frame-pointer chain is
    /// kept where it reaches further.
    #[default]
    Dwarf,
    /// The kernel's frame-pointer chain only: less copied a fault; code
    /// built without frame pointers shows only its faulting function.
    Fp,
}

#[derive(Debug, Args)]
pub struct FaultsArgs {
    /// The process to trace; or select several with --pid, --tree,
    /// --name, --user, --cgroup. Threads and children they start while
    /// traced are followed.
    pub pid: Option<u32>,

    #[command(flatten)]
    pub select: SelectArgs,

    /// How long to record (`500ms`, `30s`, `2m`); Ctrl-C ends it sooner
    /// and keeps what was recorded.
    #[arg(long = "for", value_name = "DURATION", default_value = "30s", value_parser = duration)]
    pub duration: Duration,

    /// Sample one fault in N (bytes are scaled by N, and the output says so).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub sample: u64,

    /// Pages of each CPU's sample buffer (a power of two, as perf's -m);
    /// samples that find it full are lost, counted and said. Default:
    /// room for 2,000 samples (4,096 pages with 8K of stack a sample; 512
    /// with --unwind fp), at most 256 MiB for all CPUs. Halved, with a
    /// note, where the locked-memory limit refuses it.
    #[arg(long, value_name = "PAGES")]
    pub buffer_pages: Option<usize>,

    /// How call stacks are found.
    #[arg(long, value_enum, default_value_t = UnwindMode::Dwarf)]
    pub unwind: UnwindMode,

    /// Bytes of user stack each sample copies with `--unwind dwarf` (a
    /// multiple of 8, up to 60K): deeper stacks, but more bytes a fault
    /// through the buffer (a fault storm loses more samples).
    #[arg(long, value_name = "SIZE", default_value = "8K", value_parser = crate::cli::diff::parse_size)]
    pub stack_bytes: u64,

    /// Stacks kept per category.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub top: usize,

    /// Output format.
    #[arg(long, value_enum, default_value_t = FaultsFormat::Table)]
    pub format: FaultsFormat,
}

pub fn run(root: &ProcRoot, args: &FaultsArgs, screen: Screen, out: &mut dyn Write) -> Result<()> {
    use memtally_core::usecase::faults::{faults, FaultOptions, Unwind};
    use memtally_core::Error;

    use crate::render::{faults as render, stdout_error};
    use crate::signal::{self, Finishing};

    if args.sample == 0 {
        return Err(Error::Usage("--sample must be at least 1".into()));
    }
    if args.buffer_pages.is_some_and(|p| !p.is_power_of_two()) {
        return Err(Error::Usage(
            "--buffer-pages must be a power of two (1, 2, 4, ... 512)".into(),
        ));
    }
    if !args.stack_bytes.is_multiple_of(8)
        || !(8..=Unwind::MAX_STACK_BYTES as u64).contains(&args.stack_bytes)
    {
        return Err(Error::Usage("--stack-bytes must be a multiple of 8, from 8 to 60K".into()));
    }
    if args.duration.is_zero() {
        return Err(Error::Usage("--for must be longer than 0".into()));
    }
    let sel = args.select.selection(args.pid)?;
    let opts = FaultOptions {
        period: args.sample,
        duration: args.duration,
        top: args.top,
        ring_pages: args.buffer_pages,
        unwind: match args.unwind {
            UnwindMode::Dwarf => Unwind::Dwarf { stack_bytes: args.stack_bytes as u32 },
            UnwindMode::Fp => Unwind::FramePointer,
        },
    };
    // The recording is the promise: after Ctrl-C it ends within 50 ms by
    // itself, then names its stacks (seconds for a large binary's DWARF)
    // and prints them; a second signal still ends it at once.
    let _promise = Finishing::hold();
    let started = std::sync::Once::new();
    let stop = || {
        started.call_once(|| {
            eprintln!(
                "recording page faults for {}s; Ctrl-C ends it and prints what was recorded",
                args.duration.as_secs_f64()
            )
        });
        signal::received().is_some()
    };
    let report = faults(root, &sel, &opts, &stop)?;
    match args.format {
        FaultsFormat::Table => render::table(&report, screen.width, out),
        FaultsFormat::Folded => render::folded(&report, out),
        FaultsFormat::Json => render::json(&report, out),
        FaultsFormat::Svg => render::svg(&report, out),
    }
    .map_err(stdout_error)
}
