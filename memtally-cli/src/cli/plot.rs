//! `memtally plot INPUT -o FILE.svg`: a picture of a `watch` series (memory
//! over time) or of a snapshot (where memory goes, by category).

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use memtally_core::usecase::plot::{plot, PlotOptions};
use memtally_core::usecase::watch::SERIES_FIGURES;
use memtally_core::write::write_file;
use memtally_core::{Error, Result};

use crate::render::plot::chart;

#[derive(Debug, Args)]
pub struct PlotArgs {
    /// A `memtally watch -o` CSV series, a snapshot, `show --format json`
    /// output, or a vmmap report (text or `vmmap --format json`: a histogram of region sizes).
    pub input: PathBuf,

    /// The SVG file to write.
    #[arg(short, long, value_name = "FILE.svg")]
    pub output: PathBuf,

    /// Which figure to draw: pss, rss, uss, dirty, private_dirty, swap_pss.
    #[arg(long, default_value = "pss")]
    pub figure: String,

    /// Processes to draw beside the total (the ones that grew most).
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub top: usize,

    /// vmmap input: histogram only regions whose type contains one of
    /// these: one value, comma-separated (`--types IOAccelerator,IOSurface`),
    /// or the option repeated, as `vmmap --types`; INPUT may come before or
    /// after it.
    #[arg(long, value_delimiter = ',', action = clap::ArgAction::Append, value_name = "TYPE")]
    pub types: Vec<String>,
}

pub fn run(args: &PlotArgs, out: &mut dyn Write) -> Result<()> {
    if !SERIES_FIGURES.contains(&args.figure.as_str()) {
        return Err(Error::Usage(format!(
            "--figure {}: use one of {}",
            args.figure,
            SERIES_FIGURES.join(", ")
        )));
    }
    let opts =
        PlotOptions { figure: args.figure.clone(), top: args.top, types: args.types.clone() };
    let data = plot(&args.input, &opts)?;
    let svg = chart(&data).map_err(|message| Error::Parse { path: args.input.clone(), message })?;
    write_file(&args.output, svg.as_bytes())?;
    writeln!(out, "wrote {}", args.output.display()).map_err(|e| Error::io("standard output", e))
}
