//! The grouped table of `show`.

use std::io::Write;

use memtally_core::analyze::show::{Report, ShowBy};
use memtally_core::model::{Named, Sizes};

use super::{figures, gpu_rows, heading, COLUMNS};
use crate::render::table::{Align, Table};
use crate::render::units::human_opt;

/// The grouped table.
pub fn table(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    let first = report.by.name().to_uppercase();
    let mut headers: Vec<(&str, Align)> = vec![(first.as_str(), Align::Left)];
    headers.extend(COLUMNS.iter().map(|(h, _)| (*h, Align::Right)));
    headers.push(("REGIONS", Align::Right));
    // Paths are long: put them last so the numbers line up.
    if report.by == ShowBy::Path {
        headers.rotate_left(1);
    }
    let mut t = Table::new(&headers);
    let cells = |label: &str, regions: usize, sizes: &Sizes| {
        let mut c = vec![label.to_string()];
        c.extend(figures(sizes));
        c.push(regions.to_string());
        if report.by == ShowBy::Path {
            c.rotate_left(1);
        }
        c
    };
    for row in &report.rows {
        t.row(cells(&row.label, row.regions, &row.sizes));
    }
    let gpu = report.gpu.as_ref().filter(|_| report.by == ShowBy::Category);
    for (label, sizes) in gpu.map(gpu_rows).unwrap_or_default() {
        let mut c = cells(&label, 0, &sizes);
        let regions = if report.by == ShowBy::Path { c.len() - 2 } else { c.len() - 1 };
        c[regions] = "-".into();
        t.row(c);
    }
    t.footer(cells("total", report.region_count, &report.totals));
    out.write_all(heading(&report.processes).as_bytes())?;
    out.write_all(t.render().as_bytes())?;
    if let Some(g) = gpu {
        writeln!(
            out,
            "GPU rows (not in the total): RSS = drm-resident, PSS = resident shared among the client's processes, VIRTUAL = drm-total; dma-buf: RSS = size, PSS = size / holders. reclaimable (LazyFree + drm-purgeable): {}. More: memtally gpu",
            human_opt(g.reclaimable)
        )?;
        for note in &g.notes {
            writeln!(out, "note: {note}")?;
        }
    }
    if report.omitted > 0 {
        writeln!(
            out,
            "({} more rows not shown; totals include them. --top to change.)",
            report.omitted
        )?;
    }
    for note in &report.notes {
        writeln!(out, "note: {note}")?;
    }
    Ok(())
}
