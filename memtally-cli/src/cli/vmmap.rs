//! `memtally vmmap FILE|-` or `memtally vmmap --pid PID`: macOS vmmap
//! output by region type and purgeable state.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};

use crate::analyze::group::{add_region, sort_groups, Group};
use crate::analyze::vmmap::{SeedView, Tally, TypeFilter};
use crate::error::{Error, Result};
use crate::model::Region;
use crate::render::vmmap::VmmapStream;
use crate::render::{self, Format};
use crate::source::vmmap::{self, runner, Document, ParseOptions, Record};

/// Keys for `--by`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum VmmapBy {
    /// The REGION TYPE column.
    Type,
    /// Purge state: N, V, E or -.
    Purge,
    /// The region detail (path, zone, thread).
    Detail,
    /// The SM= share mode.
    ShareMode,
}

impl VmmapBy {
    fn name(self) -> &'static str {
        match self {
            VmmapBy::Type => "type",
            VmmapBy::Purge => "purge",
            VmmapBy::Detail => "detail",
            VmmapBy::ShareMode => "share-mode",
        }
    }

    fn key(self, r: &Region) -> String {
        match self {
            VmmapBy::Type => r.region_type.clone().unwrap_or_default(),
            VmmapBy::Purge => r.purge.label().to_string(),
            VmmapBy::Detail => r.path.clone().unwrap_or_else(|| "(none)".into()),
            VmmapBy::ShareMode => r.share_mode.clone().unwrap_or_else(|| "(none)".into()),
        }
    }
}

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  memtally vmmap saved.txt                         every region type
  memtally vmmap saved.txt --types IOAccelerator IOSurface
  memtally vmmap --pid 640 --types IOSurface       run vmmap -noCoalesce 640 (macOS)
  memtally vmmap saved.txt --seed-view             the seed tool's three reports
  vmmap -noCoalesce 640 | memtally vmmap - --format json")]
pub struct VmmapArgs {
    /// Saved `vmmap` output (`vmmap -noCoalesce PID > FILE`); `-` reads standard input.
    #[arg(required_unless_present = "pid", conflicts_with = "pid")]
    pub file: Option<PathBuf>,

    /// Run `vmmap -noCoalesce PID` (found on PATH) and read its output.
    #[arg(long, value_name = "PID")]
    pub pid: Option<u32>,

    /// Select region types whose name contains any of these (put FILE before this option).
    #[arg(long, num_args = 1.., value_name = "TYPE")]
    pub types: Vec<String>,

    /// Group the selected regions by this key instead of by (type, purge).
    #[arg(long, value_enum)]
    pub by: Option<VmmapBy>,

    /// Histograms in power-of-two size buckets instead of exact sizes.
    #[arg(long)]
    pub pow2: bool,

    /// List every selected region.
    #[arg(long)]
    pub regions: bool,

    /// Print the seed tool's three reports, byte for byte, from memtally's
    /// parse (default types IOAccelerator IOSurface, as the seed).
    #[arg(long, conflicts_with_all = ["by", "regions", "pow2"])]
    pub seed_view: bool,

    /// Fail, listing line numbers, when any region or table row cannot be read.
    #[arg(long)]
    pub strict: bool,

    /// Bytes per page for `-pages` output (default: the `VM page size`
    /// header; 1 reads page counts as bytes, as the seed does).
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..))]
    pub page_size: Option<u64>,

    /// Seconds to wait for vmmap with --pid.
    #[arg(long, default_value_t = 120, value_name = "SECONDS")]
    pub timeout: u64,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub fn run(args: &VmmapArgs, out: &mut dyn Write) -> Result<()> {
    if args.seed_view && args.format != Format::Table {
        return Err(Error::Usage(
            "--seed-view prints the seed's text reports; drop --format".into(),
        ));
    }
    let (source, reader): (String, Box<dyn Read>) = match (&args.pid, &args.file) {
        (Some(pid), _) => {
            let bytes = runner::run_vmmap(*pid, Duration::from_secs(args.timeout))?;
            (format!("vmmap -noCoalesce {pid}"), Box::new(std::io::Cursor::new(bytes)))
        }
        (None, Some(p)) if p.as_os_str() == "-" => {
            ("standard input".to_string(), Box::new(std::io::stdin()))
        }
        (None, Some(p)) => {
            let f = File::open(p).map_err(|e| Error::io(p, e))?;
            (p.display().to_string(), Box::new(f))
        }
        (None, None) => {
            return Err(Error::Usage("give a FILE (or - for standard input) or --pid PID".into()))
        }
    };
    let opts = ParseOptions { page_size: args.page_size };
    let read_err = |e: std::io::Error| Error::io(source.clone(), e);

    if args.seed_view {
        let mut view = SeedView::new(args.types.clone());
        let doc =
            vmmap::parse(reader, opts, |n, raw, rec| view.line(n, raw, rec)).map_err(read_err)?;
        check(&source, &doc, args.strict)?;
        if view.entries == 0 {
            // The seed says this on stderr.
            eprintln!("No active regions found for types: {}", view.types().join(", "));
        }
        return render::vmmap::seed(&view, out).map_err(|e| Error::io("standard output", e));
    }

    let mut tally = Tally::new(TypeFilter::new(args.types.clone()));
    // JSON and CSV print regions as they are read; `--by` sums them as
    // they come; only the `--regions` table keeps them (its columns are as
    // wide as their widest cell).
    let keep = args.regions && args.format == Format::Table;
    let mut stream = match args.format {
        Format::Json => Some(VmmapStream::new(true)),
        Format::Csv => Some(VmmapStream::new(false)),
        Format::Table => None,
    };
    let mut kept: Vec<(usize, Region)> = Vec::new();
    let mut grouping: Option<(VmmapBy, Vec<Group>, HashMap<String, usize>)> =
        args.by.map(|by| (by, Vec::new(), HashMap::new()));
    let mut failed: Option<std::io::Error> = None;
    let split = match (&args.file, &args.pid) {
        (Some(p), None) if !keep && stream.is_none() && grouping.is_none() => {
            split_point(p).map(|at| (p, at))
        }
        _ => None,
    };
    let doc = if let Some((path, at)) = split {
        // Only the tally is kept: the file is read on both cores.
        drop(reader);
        let second = Tally::new(tally.filter.clone());
        let (doc, _) =
            vmmap::split::parse_file_split(path, opts, at, &mut tally, second).map_err(read_err)?;
        doc
    } else {
        vmmap::parse(reader, opts, |n, _, rec| {
            if let Some(Record::Region(r)) = rec {
                tally.add(n, r);
                if !tally.filter.matches(r.region_type) {
                    return;
                }
                if !keep && stream.is_none() && grouping.is_none() {
                    return;
                }
                let region = r.to_region();
                if let Some((by, groups, index)) = grouping.as_mut() {
                    let k = by.key(&region);
                    let i = *index.entry(k.clone()).or_insert_with(|| {
                        groups.push(Group { key: k, regions: 0, sizes: Default::default() });
                        groups.len() - 1
                    });
                    groups[i].regions += 1;
                    add_region(&mut groups[i].sizes, &region);
                }
                if let Some(s) = stream.as_mut() {
                    if failed.is_none() {
                        failed = s.region(n, &region, out).err();
                    }
                }
                if keep {
                    kept.push((n, region));
                }
            }
        })
        .map_err(read_err)?
    };
    if let Some(e) = failed {
        return Err(Error::io("standard output", e));
    }
    tally.finish();
    check(&source, &doc, args.strict)?;
    let groups = grouping.map(|(by, mut g, _)| {
        sort_groups(&mut g, &["dirty", "swap", "size"]);
        (by.name(), g)
    });
    let mismatches = tally.count_check(&doc);
    let report = render::vmmap::Report {
        source,
        doc: &doc,
        tally: &tally,
        regions: &kept,
        groups,
        mismatches,
        pow2: args.pow2,
        list_regions: args.regions,
    };
    let written = match stream {
        Some(s) => s.finish(&report, out),
        None => render::vmmap::table(&report, out),
    };
    written.map_err(|e| Error::io("standard output", e))
}

/// Where to cut `path` for a parse on two threads: its middle, when it is
/// a regular file of at least [`MIN_SPLIT_BYTES`](vmmap::split::MIN_SPLIT_BYTES)
/// and there are two CPUs.
fn split_point(path: &std::path::Path) -> Option<u64> {
    if path.as_os_str() == "-" {
        return None;
    }
    let meta = std::fs::metadata(path).ok()?;
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    (meta.is_file() && meta.len() >= vmmap::split::MIN_SPLIT_BYTES && cpus >= 2)
        .then_some(meta.len() / 2)
}

/// Refuses input that is not vmmap output, and unreadable lines under --strict.
fn check(source: &str, doc: &Document, strict: bool) -> Result<()> {
    if doc.regions == 0 && doc.summary.is_empty() && doc.summary_totals.is_empty() {
        let d = &doc.diagnostics;
        let why = match d.unreadable_samples.first() {
            Some(p) => format!(" (line {}: {})", p.line, p.reason),
            None => String::new(),
        };
        return Err(Error::Parse {
            path: source.into(),
            message: format!(
                "no vmmap region lines or summary table found in {} line(s){why}: is this `vmmap` output?",
                d.lines
            ),
        });
    }
    let d = &doc.diagnostics;
    if strict && d.unreadable > 0 {
        let list: Vec<String> = d
            .unreadable_samples
            .iter()
            .take(10)
            .map(|p| format!("line {}: {}", p.line, p.reason))
            .collect();
        return Err(Error::Parse {
            path: source.into(),
            message: format!("{} unreadable line(s) (--strict): {}", d.unreadable, list.join("; ")),
        });
    }
    Ok(())
}
