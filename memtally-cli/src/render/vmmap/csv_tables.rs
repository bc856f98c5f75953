//! `memtally vmmap --format csv --csv TABLE`: the report's other tables
//! as CSV, exact bytes: the summary table (also what input without region
//! lines prints by default), the (type, purge) breakdown and the
//! footprint per type with vmmap's own figure beside it.

use std::io::{self, Write};

use memtally_core::analyze::vmmap::{
    bucket_footprint, bucket_reclaimable, row_footprint, row_reclaimable, total_footprint,
};
use memtally_core::model::vmmap::SummaryRow;

use super::VmmapView;
use crate::render::table::csv_text;

/// Which table `--format csv` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum VmmapCsv {
    /// One row per selected region (input without region lines: the summary table).
    #[default]
    Regions,
    /// The summary table's rows of the selected types, then its TOTAL rows, with footprint and reclaimable.
    Summary,
    /// The selected regions by (region type, purge state), with footprint and reclaimable.
    Breakdown,
    /// Footprint and reclaimable per selected type, their total, and vmmap's Physical footprint.
    Footprint,
}

fn cell(v: Option<u64>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

/// The summary table: `kind` is `row` or `total`.
pub(super) fn summary(r: &VmmapView, out: &mut dyn Write) -> io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record([
        "kind",
        "region_type",
        "count",
        "virtual",
        "resident",
        "dirty",
        "swapped",
        "volatile",
        "nonvol",
        "empty",
        "footprint",
        "reclaimable",
        "line",
    ])?;
    let rows = r.selected_summary().map(|s| ("row", s));
    let totals = r.report.doc.summary_totals.iter().map(|s| ("total", s));
    for (kind, s) in rows.chain(totals) {
        let mut rec = summary_record(kind, s);
        if kind == "total" {
            // As the headline counts it (see `total_footprint`).
            rec[10] = cell(total_footprint(&r.report.doc));
        }
        w.write_record(rec)?;
    }
    w.flush()
}

fn summary_record(kind: &str, s: &SummaryRow) -> Vec<String> {
    vec![
        kind.to_string(),
        csv_text(s.region_type.clone()),
        cell(s.count),
        cell(s.virtual_size),
        cell(s.resident),
        cell(s.dirty),
        cell(s.swapped),
        cell(s.volatile),
        cell(s.nonvol),
        cell(s.empty),
        cell(row_footprint(s)),
        cell(row_reclaimable(s)),
        s.line.to_string(),
    ]
}

/// The (type, purge) breakdown of the selected regions.
pub(super) fn breakdown(r: &VmmapView, out: &mut dyn Write) -> io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record([
        "region_type",
        "purge",
        "regions",
        "vsize",
        "resident",
        "dirty",
        "swap",
        "footprint",
        "reclaimable",
    ])?;
    for (&(ref t, purge), b) in &r.report.tally.breakdown {
        w.write_record([
            csv_text(t.clone()),
            purge.code().to_string(),
            b.regions.to_string(),
            cell(b.sizes.size),
            cell(b.sizes.rss),
            cell(b.sizes.dirty),
            cell(b.sizes.swap),
            cell(bucket_footprint(t, purge, b)),
            cell(bucket_reclaimable(purge, b)),
        ])?;
    }
    w.flush()
}

/// Footprint per selected type (from the region lines, else the summary
/// rows), `total`, and `physical_footprint`: vmmap's header figure, with
/// memtally's of every type in `reclaimable`'s place left empty.
pub(super) fn footprint(r: &VmmapView, out: &mut dyn Write) -> io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record([
        "kind",
        "region_type",
        "regions",
        "footprint",
        "reclaimable",
        "volatile_vsize",
        "empty_vsize",
        "nonvol_vsize",
    ])?;
    let rep = r.report;
    if rep.tally.regions_read > 0 {
        for (t, f) in &rep.tally.footprint {
            w.write_record([
                "type".to_string(),
                csv_text(t.clone()),
                f.regions.to_string(),
                cell(f.footprint),
                cell(f.reclaimable),
                f.volatile_vsize.to_string(),
                f.empty_vsize.to_string(),
                f.nonvol_vsize.to_string(),
            ])?;
        }
    } else {
        for s in r.selected_summary() {
            w.write_record([
                "type".to_string(),
                csv_text(s.region_type.clone()),
                cell(s.count),
                cell(row_footprint(s)),
                cell(row_reclaimable(s)),
                cell(s.volatile),
                cell(s.empty),
                cell(s.nonvol),
            ])?;
        }
    }
    let f = &rep.footprint;
    w.write_record([
        "total".to_string(),
        String::new(),
        f.regions.to_string(),
        cell(f.footprint),
        cell(f.reclaimable),
        f.volatile_vsize.to_string(),
        f.empty_vsize.to_string(),
        f.nonvol_vsize.to_string(),
    ])?;
    if let Some(c) = &rep.footprint_check {
        w.write_record([
            "physical_footprint".to_string(),
            String::new(),
            String::new(),
            c.vmmap.to_string(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
        ])?;
    }
    w.flush()
}
