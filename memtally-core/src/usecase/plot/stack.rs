//! `plot --stack category`'s data: a watch series' category rows, one
//! sample at a time, as bands stacked over time, with the series' total
//! beside them to show that the bands add up to it.

use std::collections::HashMap;
use std::path::Path;

use crate::analyze::plot::{Band, StackPlot, MAX_POINTS};
use crate::error::{Error, Result};
use crate::model::series::{Scope, SeriesFigure};
use crate::model::Named;
use crate::source::bounded::open_input;
use crate::source::series::SeriesReader;

/// One sample: its time, the total and each category's figure.
#[derive(Default)]
struct Sample {
    t: f64,
    total: Option<u64>,
    /// (category's slot, bytes).
    values: Vec<(usize, u64)>,
}

/// Reads a watch series' category rows into stacked bands. A series with
/// no category rows (a watch of many processes samples none unless asked)
/// is an error that says so.
pub fn stacked(path: &Path, figure: SeriesFigure) -> Result<StackPlot> {
    let bad = |m: String| Error::Parse { path: path.to_path_buf(), message: m };
    let input = open_input(path).map_err(|e| bad(e.to_string()))?;
    let mut reader = SeriesReader::new(input, path)?;
    let col = reader.column(figure)?;
    let mut categories: Vec<(String, String)> = Vec::new();
    let mut slot_of: HashMap<String, usize> = HashMap::new();
    let mut kept: Vec<Sample> = Vec::new();
    let mut current: Option<Sample> = None;
    // Keep one sample in `stride`, halving the samples kept when they
    // reach MAX_POINTS: memory stays bounded whatever the file's length.
    let (mut stride, mut seen) = (1usize, 0usize);
    let mut keep = |s: Sample, kept: &mut Vec<Sample>| {
        seen += 1;
        if (seen - 1) % stride != 0 {
            return;
        }
        kept.push(s);
        if kept.len() >= MAX_POINTS {
            let mut k = 0;
            kept.retain(|_| {
                k += 1;
                k % 2 == 1
            });
            stride *= 2;
        }
    };
    while let Some(row) = reader.next_row()? {
        if row.scope == Scope::Process {
            continue;
        }
        // A watch writes each sample's rows together, under one time.
        if current.as_ref().is_some_and(|c| c.t != row.elapsed_s) {
            keep(current.take().unwrap_or_default(), &mut kept);
        }
        let sample =
            current.get_or_insert_with(|| Sample { t: row.elapsed_s, ..Default::default() });
        let Some(v) = row.value(col) else { continue };
        if row.scope == Scope::Total {
            sample.total = Some(v);
            continue;
        }
        let slot = match slot_of.get(row.key) {
            Some(&i) => i,
            None => {
                categories.push((row.key.to_string(), row.label.to_string()));
                slot_of.insert(row.key.to_string(), categories.len() - 1);
                categories.len() - 1
            }
        };
        sample.values.push((slot, v));
    }
    if let Some(s) = current.take() {
        keep(s, &mut kept);
    }
    if categories.is_empty() {
        return Err(bad(format!(
            "no {} figures of categories in the series (a watch of more than 16 processes samples categories only when asked)",
            figure.name()
        )));
    }
    let mut bands: Vec<Band> = categories
        .into_iter()
        .map(|(key, label)| Band { key, label, values: vec![0; kept.len()] })
        .collect();
    for (i, s) in kept.iter().enumerate() {
        for &(slot, v) in &s.values {
            bands[slot].values[i] = bands[slot].values[i].saturating_add(v);
        }
    }
    bands.sort_by_key(|b| std::cmp::Reverse(b.values.iter().copied().max().unwrap_or(0)));
    Ok(StackPlot {
        figure,
        times: kept.iter().map(|s| s.t).collect(),
        total: kept.iter().filter_map(|s| s.total.map(|v| (s.t, v))).collect(),
        bands,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Figure, Sizes};
    use crate::source::series::SeriesWriter;

    /// Two samples: heap in both, stack only in the second; the bands are
    /// the largest first, 0 where a sample has no row, beside the total.
    #[test]
    fn categories_become_bands_with_zeros_where_absent() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.csv");
        let mut w =
            SeriesWriter::with_figures(std::fs::File::create(&path).unwrap(), SeriesFigure::WATCH)
                .unwrap();
        let at = |b: u64| Sizes { private_dirty: Some(b), ..Default::default() };
        let (t0, h0) = (at(100), at(100));
        let (t1, h1, s1, p1) = (at(180), at(150), at(30), at(180));
        w.sample(0.0, [(Scope::Total, "total", "t", &t0), (Scope::Category, "heap", "heap", &h0)])
            .unwrap();
        w.sample(
            1.0,
            [
                (Scope::Total, "total", "t", &t1),
                (Scope::Process, "7", "p", &p1),
                (Scope::Category, "heap", "heap", &h1),
                (Scope::Category, "stack", "stack", &s1),
            ],
        )
        .unwrap();
        w.into_inner().unwrap();
        let s = stacked(&path, SeriesFigure(Figure::PrivateDirty)).unwrap();
        assert_eq!(s.times, [0.0, 1.0]);
        let bands: Vec<(&str, &[u64])> =
            s.bands.iter().map(|b| (b.key.as_str(), b.values.as_slice())).collect();
        assert_eq!(bands, [("heap", &[100, 150][..]), ("stack", &[0, 30][..])]);
        assert_eq!(s.total, [(0.0, 100), (1.0, 180)]);
        let e = stacked(&path, SeriesFigure(Figure::Rss)).unwrap_err().to_string();
        assert!(e.contains("no rss figures of categories"), "{e}");
    }
}
