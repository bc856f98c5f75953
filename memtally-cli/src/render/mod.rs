//! Printers: one module per view. Every view implements [`Printer`]: a
//! table for people, JSON and CSV with exact bytes (docs/json.md and its
//! siblings). Views whose regions stream past (one process's `show`,
//! `vmmap`) print regions as they come and then finish through the same
//! printer.

pub mod blocks;
pub mod cgroup;
pub mod classic;
pub mod diff;
mod diff_columns;
mod diff_exact;
mod diff_footprint;
mod diff_json;
pub mod errors;
#[cfg(feature = "serve")]
pub mod exporter_metrics;
pub mod faults;
pub mod files;
pub mod folded;
pub mod gpu;
pub mod html;
pub mod json;
pub mod machine;
pub mod notes;
pub mod pages;
#[cfg(feature = "plot")]
pub mod plot;
#[cfg(feature = "serve")]
pub mod prometheus;
#[cfg(feature = "schema")]
pub mod schema;
pub mod show;
pub mod stream_doc;
// The report draws with part of the writer; `plot` with all of it.
#[cfg_attr(not(feature = "plot"), allow(dead_code))]
pub mod svg;
pub mod table;
pub mod top;
pub mod top_folded;
pub mod top_json;
pub mod top_screen;
pub mod units;
pub mod vmmap;
pub mod watch;
pub mod watch_perfetto;
pub mod width;
pub mod wss;

use std::io::{self, Write};

use memtally_core::{Error, Result};

/// Output format chosen with `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// Aligned columns with readable units.
    #[default]
    Table,
    /// One JSON document, exact bytes (see docs/json.md).
    Json,
    /// Comma-separated values with a header row, exact bytes.
    Csv,
}

pub use width::Screen;

/// A view that prints itself in each [`Format`].
pub trait Printer {
    /// Aligned columns with units chosen for people, and notes, fitted to
    /// `screen`.
    fn table(&self, out: &mut dyn Write, screen: Screen) -> io::Result<()>;
    /// One JSON document, exact bytes.
    fn json(&self, out: &mut dyn Write) -> io::Result<()>;
    /// CSV with a header row, exact bytes.
    fn csv(&self, out: &mut dyn Write) -> io::Result<()>;
}

/// Prints `view` in `format`; a failed write is an error on standard output.
/// A table's lines are fitted to the screen's width where there is one
/// ([`width::fit_lines`]: free text wraps, rules are cut; the tables have
/// fitted themselves already).
pub fn print(
    view: &dyn Printer,
    format: Format,
    screen: Screen,
    out: &mut dyn Write,
) -> Result<()> {
    match format {
        Format::Table => match screen.width {
            Some(w) => {
                let mut text = Vec::new();
                view.table(&mut text, screen).map_err(stdout_error)?;
                out.write_all(&width::fit_bytes(&text, Some(w)))
            }
            None => view.table(out, screen),
        },
        Format::Json => view.json(out),
        Format::Csv => view.csv(out),
    }
    .map_err(stdout_error)
}

/// A failed write to standard output, as the error main reports.
pub fn stdout_error(e: io::Error) -> Error {
    Error::io("standard output", e)
}
