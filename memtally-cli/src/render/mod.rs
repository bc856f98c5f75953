//! Printers: one module per view; each writes tables for people, or JSON
//! and CSV with exact bytes.

pub mod classic;
pub mod diff;
pub mod gpu;
pub mod plot;
pub mod prometheus;
pub mod show;
pub mod table;
pub mod top;
pub mod units;
pub mod vmmap;

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
