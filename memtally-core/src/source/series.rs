//! The watch series file (what a watch writes to a file, read back to
//! plot it): CSV, one row per series per sample, `elapsed_s,scope,key,label`
//! then one column per figure in bytes (empty where unknown). The writer
//! and the reader are both here, so the format has one owner.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::model::series::{Scope, SeriesFigure};
use crate::model::{Named, Sizes};

/// The columns before the figures.
const LEADING: [&str; 4] = ["elapsed_s", "scope", "key", "label"];

/// Writes a series: the header at once, then every sample's rows.
pub struct SeriesWriter<W: Write> {
    csv: csv::Writer<W>,
    figures: &'static [SeriesFigure],
}

impl<W: Write> SeriesWriter<W> {
    /// Starts a series of these figures on `out`, with its header row.
    pub fn with_figures(out: W, figures: &'static [SeriesFigure]) -> io::Result<SeriesWriter<W>> {
        let mut csv = csv::Writer::from_writer(out);
        let names = figures.iter().map(|f| f.name());
        let header: Vec<&str> = LEADING.iter().copied().chain(names).collect();
        csv.write_record(&header)?;
        Ok(SeriesWriter { csv, figures })
    }

    /// One sample `elapsed_s` seconds after the first: a row per
    /// (scope, key, label, figures), flushed, so a watch that is killed
    /// leaves whole rows behind.
    pub fn sample<'a>(
        &mut self,
        elapsed_s: f64,
        series: impl IntoIterator<Item = (Scope, &'a str, &'a str, &'a Sizes)>,
    ) -> io::Result<()> {
        for (scope, key, label, sizes) in series {
            let mut rec =
                vec![format!("{elapsed_s:.3}"), scope.name().into(), key.into(), label.into()];
            rec.extend(
                self.figures
                    .iter()
                    .map(|f| sizes.figure(f.0).map_or(String::new(), |v| v.to_string())),
            );
            self.csv.write_record(&rec)?;
        }
        self.csv.flush()
    }

    /// The output, everything written to it.
    pub fn into_inner(self) -> io::Result<W> {
        self.csv.into_inner().map_err(|e| e.into_error())
    }
}

/// Whether a file's first bytes are a series' header (`elapsed_s,`; the
/// totals-only CSV of a watch starts so too).
pub(crate) fn is_series_head(head: &[u8]) -> bool {
    head.starts_with(b"elapsed_s,")
}

/// Reads a series row by row, whatever figure columns its header names.
pub(crate) struct SeriesReader<R: Read> {
    csv: csv::Reader<R>,
    record: csv::StringRecord,
    /// The next row's number in the file (the header is row 1).
    row: usize,
    path: PathBuf,
    header: csv::StringRecord,
}

/// One row: the series it belongs to and its figures.
#[derive(Debug)]
pub(crate) struct SeriesRow<'a> {
    /// Seconds since the first sample.
    pub elapsed_s: f64,
    /// What the series follows.
    pub scope: Scope,
    /// Within the scope: `total`, the PID, the category's key.
    pub key: &'a str,
    /// What a person reads: the command line, the category's name.
    pub label: &'a str,
    record: &'a csv::StringRecord,
}

impl SeriesRow<'_> {
    /// The figure in `column` (from [`SeriesReader::column`]); `None`
    /// where empty or not a number.
    pub fn value(&self, column: usize) -> Option<u64> {
        self.record.get(column).and_then(|v| v.parse().ok())
    }
}

impl<R: Read> SeriesReader<R> {
    /// Reads the header of the series in `input` (named `path` in errors).
    pub fn new(input: R, path: &Path) -> Result<SeriesReader<R>> {
        let mut csv = csv::Reader::from_reader(input);
        let header = csv.headers().map_err(|e| bad(path, e.to_string()))?.clone();
        Ok(SeriesReader {
            csv,
            record: csv::StringRecord::new(),
            row: 2,
            path: path.to_path_buf(),
            header,
        })
    }

    /// The column of `figure`; an error naming it where the file has none.
    pub fn column(&self, figure: SeriesFigure) -> Result<usize> {
        let name = figure.name();
        self.header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| bad(&self.path, format!("no {name} column")))
    }

    /// The next row, `None` at the end; a row that cannot be read, or
    /// whose time is not a finite number, is an error naming its row.
    pub(crate) fn next_row(&mut self) -> Result<Option<SeriesRow<'_>>> {
        let row = self.row;
        let more = self
            .csv
            .read_record(&mut self.record)
            .map_err(|e| bad(&self.path, format!("row {row}: {e}")))?;
        if !more {
            return Ok(None);
        }
        self.row += 1;
        let rec = &self.record;
        let elapsed_s =
            rec.get(0).and_then(|v| v.parse().ok()).filter(|t: &f64| t.is_finite()).ok_or_else(
                || bad(&self.path, format!("row {row}: bad time (not a finite number)")),
            )?;
        let scope = rec.get(1).unwrap_or("");
        let scope = Scope::from_name(scope).ok_or_else(|| {
            bad(
                &self.path,
                format!("row {row}: scope {scope:?} is none of category, process, total"),
            )
        })?;
        Ok(Some(SeriesRow {
            elapsed_s,
            scope,
            key: rec.get(2).unwrap_or(""),
            label: rec.get(3).unwrap_or(""),
            record: rec,
        }))
    }
}

fn bad(path: &Path, message: String) -> Error {
    Error::Parse { path: path.to_path_buf(), message }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes(rss: u64, pss: Option<u64>) -> Sizes {
        Sizes { rss: Some(rss), pss, private_dirty: Some(4096), ..Default::default() }
    }

    /// What the writer writes, the reader reads back: every figure, the
    /// times to the millisecond, labels with commas and quotes whole.
    #[test]
    fn a_series_reads_back_what_was_written() {
        let a = sizes(8192, Some(6144));
        let b = sizes(4096, None);
        let mut w = SeriesWriter::with_figures(Vec::new(), SeriesFigure::WATCH).unwrap();
        w.sample(0.0, [(Scope::Total, "total", "total", &a)]).unwrap();
        w.sample(
            1.25,
            [(Scope::Total, "total", "total", &a), (Scope::Process, "42", "sh -c \"a, b\"", &b)],
        )
        .unwrap();
        let bytes = w.into_inner().unwrap();
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(
            text.starts_with(
                "elapsed_s,scope,key,label,rss,pss,uss,dirty,private_dirty,shared_dirty,swap_pss,pss_dirty,footprint,footprint_pss\n\
             0.000,total,total,total,8192,6144,,,4096,,,,,\n"
            ),
            "{text}"
        );
        assert!(is_series_head(&bytes));

        let mut r = SeriesReader::new(&bytes[..], Path::new("s.csv")).unwrap();
        let cols: Vec<usize> = SeriesFigure::WATCH.iter().map(|&f| r.column(f).unwrap()).collect();
        let mut rows = Vec::new();
        while let Some(row) = r.next_row().unwrap() {
            let figures: Vec<Option<u64>> = cols.iter().map(|&c| row.value(c)).collect();
            rows.push((
                row.elapsed_s,
                row.scope,
                row.key.to_string(),
                row.label.to_string(),
                figures,
            ));
        }
        let expect = |t: f64, scope: Scope, key: &str, label: &str, s: &Sizes| {
            let figures = SeriesFigure::WATCH.iter().map(|f| s.figure(f.0)).collect();
            (t, scope, key.to_string(), label.to_string(), figures)
        };
        assert_eq!(
            rows,
            [
                expect(0.0, Scope::Total, "total", "total", &a),
                expect(1.25, Scope::Total, "total", "total", &a),
                expect(1.25, Scope::Process, "42", "sh -c \"a, b\"", &b),
            ]
        );
    }

    #[test]
    fn a_bad_row_is_named() {
        let text =
            "elapsed_s,scope,key,label,pss\n0,total,total,total,1\nNaN,total,total,total,2\n";
        let mut r = SeriesReader::new(text.as_bytes(), Path::new("s.csv")).unwrap();
        let no_rss = r.column(SeriesFigure(crate::model::Figure::Rss)).unwrap_err();
        assert!(no_rss.to_string().contains("no rss column"));
        let pss = r.column(SeriesFigure(crate::model::Figure::Pss)).unwrap();
        assert_eq!(r.next_row().unwrap().unwrap().value(pss), Some(1));
        let e = r.next_row().unwrap_err().to_string();
        assert!(e.contains("row 3: bad time"), "{e}");
    }
}
