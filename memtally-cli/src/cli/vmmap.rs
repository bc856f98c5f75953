//! `memtally vmmap FILE|-` or `memtally vmmap --pid PID`: macOS vmmap
//! output by region type and purgeable state.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use memtally_core::analyze::vmmap::VmmapBy;
use memtally_core::source::parse::vmmap::ParseOptions;
use memtally_core::usecase::vmmap::{read, seed_view, VmmapForm, VmmapInput, VmmapOptions};
use memtally_core::{Error, Result};

use crate::cli::choice::choice;
use crate::cli::duration::duration;
use crate::render::vmmap::{seed, VmmapCsv, VmmapStream, VmmapView};
use crate::render::{print, stdout_error, Format, Screen};

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  memtally vmmap saved.txt                 footprint, GPU memory by purge state
  memtally vmmap saved.txt --types IOAccelerator,IOSurface
                                           the regions of two types
  memtally vmmap saved.txt --histograms=IOSurface
                                           region-size histograms of one type
  memtally vmmap --pid 640 --types IOSurface
                                           run vmmap -noCoalesce 640 (macOS)
  memtally vmmap --pid 640 --summary       run vmmap -summary 640: the summary
                                           table only, much faster (macOS)
  memtally vmmap saved.txt --seed-view     the seed tool's three reports
  vmmap -noCoalesce 640 | memtally vmmap - --format json
                                           vmmap's output piped in, as JSON")]
pub struct VmmapArgs {
    /// Saved `vmmap` output (`vmmap -noCoalesce PID > FILE`); `-` reads standard input.
    #[arg(required_unless_present = "pid", conflicts_with = "pid")]
    pub file: Option<PathBuf>,

    /// Run `vmmap -noCoalesce PID` (found on PATH) and read its output.
    #[arg(long, value_name = "PID")]
    pub pid: Option<u32>,

    /// With --pid: run `vmmap -summary PID` instead, the fast form: the
    /// summary table (footprint, GPU memory by purge state) without the
    /// region lines.
    // (`requires` alone is not enough: clap waives a requirement that
    // conflicts with an argument given, and FILE conflicts with --pid.)
    #[arg(long, requires = "pid", conflicts_with_all = ["file", "regions", "histograms", "pow2"])]
    pub summary: bool,

    /// Select region types whose name contains any of these: one value,
    /// comma-separated (`--types IOAccelerator,IOSurface`), or the option
    /// repeated; FILE may come before or after it.
    #[arg(long, value_delimiter = ',', action = clap::ArgAction::Append, value_name = "TYPE")]
    pub types: Vec<String>,

    /// Group the selected regions by this key instead of by (type, purge).
    #[arg(long, value_parser = choice::<VmmapBy>())]
    pub by: Option<VmmapBy>,

    /// Print a histogram of regions by virtual size for every selected
    /// type, or with `=TYPE,...` for the types containing one of these.
    #[arg(
        long,
        num_args = 0..=1,
        require_equals = true,
        value_delimiter = ',',
        default_missing_value = "",
        value_name = "TYPE"
    )]
    pub histograms: Option<Vec<String>>,

    /// Histograms in power-of-two size buckets instead of exact sizes
    /// (implies --histograms).
    #[arg(long)]
    pub pow2: bool,

    /// List every selected region.
    #[arg(long)]
    pub regions: bool,

    /// Print the seed tool's three reports, byte for byte, from memtally's
    /// parse (default types IOAccelerator IOSurface, as the seed).
    #[arg(long, conflicts_with_all = ["by", "regions", "pow2", "histograms"])]
    pub seed_view: bool,

    /// Fail, listing line numbers, when any region or table row cannot be read.
    #[arg(long)]
    pub strict: bool,

    /// Bytes per page for `-pages` output (default: the `VM page size`
    /// header; 1 reads page counts as bytes, as the seed does).
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..))]
    pub page_size: Option<u64>,

    /// How long to wait for vmmap with --pid (`90s`, `5m`; a bare number is seconds).
    #[arg(long, default_value = "120s", value_name = "DURATION", value_parser = duration)]
    pub timeout: Duration,

    /// With --format csv: which table. Default: the regions, or the
    /// summary table for input without region lines (`vmmap -summary`).
    #[arg(long, value_enum, value_name = "TABLE")]
    pub csv: Option<VmmapCsv>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub fn run(args: &VmmapArgs, screen: Screen, out: &mut dyn Write) -> Result<()> {
    if args.seed_view && args.format != Format::Table {
        return Err(Error::Usage(
            "--seed-view prints the seed's text reports; drop --format".into(),
        ));
    }
    let input = match (&args.pid, &args.file) {
        (Some(pid), _) => {
            let form = if args.summary { VmmapForm::Summary } else { VmmapForm::Regions };
            VmmapInput::Pid(*pid, args.timeout, form)
        }
        (None, Some(p)) if p.as_os_str() == "-" => VmmapInput::Stdin,
        (None, Some(p)) if bare_pid(p).is_some() => return Err(no_such_file(p)),
        (None, Some(p)) => VmmapInput::File(p.clone()),
        (None, None) => {
            return Err(Error::Usage("give a FILE (or - for standard input) or --pid PID".into()))
        }
    };
    // JSON and CSV print regions as they are read; `--by` sums them as
    // they come; only the `--regions` table keeps them (its columns are as
    // wide as their widest cell).
    if args.csv.is_some() && args.format != Format::Csv {
        return Err(Error::Usage(
            "--csv chooses the table of --format csv; add --format csv".into(),
        ));
    }
    let csv = args.csv.unwrap_or_default();
    let mut opts = VmmapOptions::default()
        .with_types(args.types.clone())
        .with_by(args.by)
        .with_keep_regions(args.regions && args.format == Format::Table)
        .with_stream_regions(match args.format {
            Format::Json => true,
            Format::Csv => csv == VmmapCsv::Regions,
            Format::Table => false,
        })
        .with_strict(args.strict)
        .with_parse(ParseOptions { page_size: args.page_size });
    if args.seed_view {
        opts.stream_regions = false;
        let view = seed_view(&input, &args.types, &opts)?;
        if view.entries == 0 {
            // The seed says this on stderr.
            eprintln!("No active regions found for types: {}", view.types().join(", "));
        }
        // A compatibility format: never fitted to the width (no `print`).
        return seed(&view, out).map_err(stdout_error);
    }
    let mut stream = match args.format {
        Format::Json => Some(VmmapStream::new(true)),
        Format::Csv => Some(VmmapStream::new(false)),
        Format::Table => None,
    };
    let report = match stream.as_mut() {
        Some(s) => read(&input, &opts, &mut s.to(out))?,
        None => read(&input, &opts, &mut ())?,
    };
    let histograms = match (&args.histograms, args.pow2) {
        (Some(t), _) => Some(t.iter().filter(|t| !t.is_empty()).cloned().collect()),
        (None, true) => Some(Vec::new()),
        (None, false) => None,
    };
    let view =
        VmmapView { report: &report, pow2: args.pow2, histograms, list_regions: args.regions, csv };
    match stream {
        Some(s) if args.format == Format::Csv => s.finish_csv(&view, out).map_err(stdout_error),
        Some(s) => s.finish(&view, out).map_err(stdout_error),
        None => print(&view, Format::Table, screen, out),
    }
}

/// The PID a FILE argument looks like, where no file has that name
/// (`memtally vmmap 640`): the user meant `--pid 640`.
fn bare_pid(file: &std::path::Path) -> Option<u32> {
    let pid = file.to_str()?.parse().ok()?;
    (!file.exists()).then_some(pid)
}

/// `640: no such file; did you mean --pid 640?` (exit 3, as any missing file).
fn no_such_file(file: &std::path::Path) -> Error {
    let pid = bare_pid(file).map_or(String::new(), |p| format!("; did you mean --pid {p}?"));
    Error::NotFound(format!("{}: no such file{pid}", file.display()))
}
