//! `memtally plot INPUT -o FILE.svg`: a picture of a `watch` series (memory
//! over time) or of a snapshot (where memory goes, by category).

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use memtally_core::model::series::SeriesFigure;
use memtally_core::usecase::plot::{plot, PlotOptions, Stack};
use memtally_core::write::{write_file_as, Access};
use memtally_core::{Error, Result};

use crate::cli::choice::choice;
use crate::render::plot::chart;

#[derive(Debug, Args)]
pub struct PlotArgs {
    /// A `memtally watch -o` CSV series, a snapshot, `show --format json`
    /// output, or a vmmap report (text or `vmmap --format json`: a histogram of region sizes).
    pub input: PathBuf,

    /// The SVG file to write.
    #[arg(short, long, value_name = "FILE.svg")]
    pub output: PathBuf,

    /// Which figure to draw. The total line of a series of several
    /// processes exists only for figures that add up across them (pss,
    /// pss_dirty, swap_pss, uss, private_dirty, footprint_pss); rss,
    /// dirty, shared_dirty and footprint are drawn per process only.
    #[arg(long, default_value = "pss", value_parser = choice::<SeriesFigure>())]
    pub figure: SeriesFigure,

    /// Processes to draw beside the total (the ones that grew most).
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub top: usize,

    /// vmmap input: histogram only regions whose type contains one of
    /// these: one value, comma-separated (`--types IOAccelerator,IOSurface`),
    /// or the option repeated, as `vmmap --types`; INPUT may come before or
    /// after it.
    #[arg(long, value_delimiter = ',', action = clap::ArgAction::Append, value_name = "TYPE")]
    pub types: Vec<String>,

    /// A watch series as areas stacked by category (what its memory is
    /// made of over time), the total as a line over them. The series needs
    /// category rows: a watch samples them for at most 16 processes, or
    /// with `watch --categories`.
    #[arg(long, value_name = "BY", value_parser = choice::<Stack>())]
    pub stack: Option<Stack>,
}

pub fn run(args: &PlotArgs, out: &mut dyn Write) -> Result<()> {
    let opts = PlotOptions::default()
        .with_figure(args.figure)
        .with_top(args.top)
        .with_types(args.types.clone())
        .with_stack(args.stack);
    let data = plot(&args.input, &opts)?;
    write_file_as(&args.output, Access::Umask, chart(&data).as_bytes())?;
    writeln!(out, "wrote {}", args.output.display()).map_err(|e| Error::io("standard output", e))
}
