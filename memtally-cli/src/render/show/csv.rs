//! `show` as CSV: grouped rows, or with `--regions` every mapping.

use std::io::Write;

use memtally_core::analyze::show::{ShowBy, ShowReport};
use memtally_core::model::Named;

use super::{csv_cell, gpu_rows, RegionStream, CSV_FIGURES};
use crate::render::Format;

/// The grouped rows (or, with `regions`, every mapping) as CSV.
pub fn csv(report: &ShowReport, regions: bool, out: &mut dyn Write) -> std::io::Result<()> {
    if regions {
        let mut stream = RegionStream::new(Format::Csv, true, Default::default());
        stream.start(&report.processes)?;
        for p in &report.processes {
            for r in &p.regions {
                stream.region(p, r, out)?;
            }
        }
        return stream.finish(report, out);
    }
    let mut w = csv::Writer::from_writer(out);
    let mut header = vec![report.by.name(), "regions"];
    header.extend(CSV_FIGURES.iter().map(|f| f.name()));
    w.write_record(&header)?;
    for row in &report.rows {
        let mut rec =
            vec![crate::render::table::csv_text(row.key.clone()), row.regions.to_string()];
        rec.extend(CSV_FIGURES.iter().map(|&f| csv_cell(row.sizes.figure(f))));
        w.write_record(&rec)?;
    }
    // The rows and the rounding add up to the total (docs/json.md).
    if let Some(rounding) = &report.rounding {
        let mut rec = vec!["rounding".to_string(), String::new()];
        rec.extend(CSV_FIGURES.iter().map(|&f| match (rounding.get(f), report.totals.figure(f)) {
            (Some(d), _) => d.to_string(),
            // A figure of the process only (footprint) is in no row: the
            // rows do not add up to it, so no rounding either.
            (None, Some(_)) if report.rows.iter().any(|r| r.sizes.figure(f).is_some()) => {
                "0".to_string()
            }
            _ => String::new(),
        }));
        w.write_record(&rec)?;
    }
    let mut rec = vec!["total".to_string(), report.region_count.to_string()];
    rec.extend(CSV_FIGURES.iter().map(|&f| csv_cell(report.totals.figure(f))));
    w.write_record(&rec)?;
    // GPU rows after the total, which they are not part of (docs/gpu-json.md).
    let gpu = report.gpu.as_ref().filter(|_| report.by == ShowBy::Category);
    for (label, sizes) in gpu.map(gpu_rows).unwrap_or_default() {
        let mut rec = vec![label, String::new()];
        rec.extend(CSV_FIGURES.iter().map(|&f| csv_cell(sizes.figure(f))));
        w.write_record(&rec)?;
    }
    w.flush()
}
