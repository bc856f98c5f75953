//! The categories level's rows (one process's memory by category, GPU
//! rows included, as `memtally show PID` prints it), and the figure
//! columns it shares with the mappings level.

use memtally_core::analyze::category::Category;
use memtally_core::analyze::show::ShowReport;
use memtally_core::model::{Figure, Sizes};

use crate::render::show::{figures, gpu_rows, COLUMNS};

/// One row as shown.
#[derive(Debug, Clone)]
pub struct CatRow {
    pub label: String,
    /// The category to go down into (none for GPU rows).
    pub category: Option<Category>,
    /// Mappings in it (`-` for GPU rows).
    pub regions: Option<usize>,
    pub sizes: Sizes,
}

/// The report's categories, then its GPU rows.
pub fn category_rows(report: &ShowReport) -> Vec<CatRow> {
    let mut rows: Vec<CatRow> = report
        .rows
        .iter()
        .map(|r| CatRow {
            label: r.label.clone(),
            category: Category::from_key(&r.key),
            regions: Some(r.regions),
            sizes: r.sizes.clone(),
        })
        .collect();
    for (label, sizes) in report.gpu.as_ref().map(gpu_rows).unwrap_or_default() {
        rows.push(CatRow { label, category: None, regions: None, sizes });
    }
    rows
}

/// The columns of `show` that fit in `room` cells, most telling first
/// (private dirty, RSS, PSS, shared dirty, swap, clean, virtual), in
/// `show`'s order.
pub fn columns(room: u16) -> Vec<(&'static str, Figure)> {
    const PRIORITY: [Figure; 7] = [
        Figure::PrivateDirty,
        Figure::Rss,
        Figure::Pss,
        Figure::SharedDirty,
        Figure::Swap,
        Figure::Clean,
        Figure::Size,
    ];
    let mut left = room as usize;
    let mut keep: Vec<Figure> = Vec::new();
    for f in PRIORITY {
        let Some((h, _)) = COLUMNS.iter().find(|(_, c)| *c == f) else { continue };
        let cost = width(h) as usize + 1;
        if cost > left {
            break;
        }
        left -= cost;
        keep.push(f);
    }
    COLUMNS.iter().copied().filter(|(_, f)| keep.contains(f)).collect()
}

/// A figure column's width: its header, or a figure like `1023M`.
pub fn width(header: &str) -> u16 {
    header.len().max(6) as u16
}

/// A row's cells for the chosen columns.
pub fn cells(sizes: &Sizes, columns: &[(&str, Figure)]) -> Vec<String> {
    let all = figures(sizes);
    COLUMNS
        .iter()
        .zip(all)
        .filter(|((_, f), _)| columns.iter().any(|(_, c)| c == f))
        .map(|(_, v)| v)
        .collect()
}
