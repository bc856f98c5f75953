//! Printers for `memtally vmmap`: tables for people, JSON and CSV with
//! exact bytes (docs/vmmap-json.md), and the seed's three reports byte for
//! byte (`--seed-view`).

mod csv;
mod csv_tables;
mod detail;
mod json;
mod notes;
mod seed;
mod table;

pub(crate) use table::{footprint_check_line, warning_lines};

use std::io::{self, Write};

use memtally_core::analyze::vmmap::VmmapReport;
use memtally_core::model::vmmap::SummaryRow;
use memtally_core::model::Sizes;

use crate::render::blocks::{write_text, Block};
use crate::render::units::human_opt;
use crate::render::{Printer, Screen};

pub use csv_tables::VmmapCsv;
#[cfg(feature = "schema")]
pub(crate) use json::schemas;
pub use json::VmmapStream;
pub use seed::seed;

/// A report and how to print it.
#[derive(Debug)]
pub struct VmmapView<'a> {
    pub report: &'a VmmapReport,
    /// Histograms in power-of-two buckets.
    pub pow2: bool,
    /// Print histograms (table): of every selected type (empty), or of the
    /// types containing one of these.
    pub histograms: Option<Vec<String>>,
    /// List the kept regions.
    pub list_regions: bool,
    /// Which table `--format csv` prints.
    pub csv: VmmapCsv,
}

impl VmmapView<'_> {
    /// The table view's blocks for an output `width` columns wide. Its
    /// tables are fitted as the Linux tables are ([`Table::fit`]): text
    /// columns (region type, purge state, group key, detail) narrow and
    /// are cut with `…`, then whole columns on the right are left out (the
    /// row ends in `  …`); a figure is never cut. Whole when there is no
    /// width (piped without `COLUMNS`).
    ///
    /// [`Table::fit`]: crate::render::table::Table::fit
    pub(crate) fn blocks(&self, width: Option<usize>) -> Vec<Block> {
        table::blocks(self, width)
    }

    fn selected_summary(&self) -> impl Iterator<Item = &SummaryRow> {
        let t = &self.report.tally;
        self.report.doc.summary.iter().filter(|s| t.filter.matches(&s.region_type))
    }
}

impl Printer for VmmapView<'_> {
    fn table(&self, out: &mut dyn Write, screen: Screen) -> io::Result<()> {
        let width = screen.width;
        write_text(self.blocks(width), width, out)
    }

    fn json(&self, out: &mut dyn Write) -> io::Result<()> {
        json::json(self, out)
    }

    fn csv(&self, out: &mut dyn Write) -> io::Result<()> {
        csv::csv(self, out)
    }
}

/// REGIONS, VSIZE, RESIDENT, DIRTY, SWAP cells.
fn count_and_sizes(regions: u64, s: &Sizes) -> [String; 5] {
    [
        regions.to_string(),
        human_opt(s.size),
        human_opt(s.rss),
        human_opt(s.dirty),
        human_opt(s.swap),
    ]
}
