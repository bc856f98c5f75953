//! `memtally shared`: the pairs that share the most resident pages.

use std::io::Write;

use serde::Serialize;

use memtally_core::analyze::sharing::{SharedView, Sharer};
use memtally_core::model::Named;

use super::with_share;
use crate::render::blocks::{write_text, Block};
use crate::render::json;
use crate::render::notes::{word, words};
use crate::render::table::{Align, Table};
use crate::render::units::human;
use crate::render::{Printer, Screen};

/// What to call a sharer in the table: its key and, for a process, its command.
fn name(s: &Sharer) -> String {
    if s.label == s.key {
        s.key.clone()
    } else {
        format!("{} {}", s.key, s.label)
    }
}

impl Printer for SharedView {
    fn table(&self, out: &mut dyn Write, screen: Screen) -> std::io::Result<()> {
        let mut t = Table::new(&[
            ("SHARED", Align::Right),
            ("OF A'S PSS", Align::Right),
            ("OF B'S PSS", Align::Right),
            ("A", Align::Left),
            ("B", Align::Left),
        ]);
        for p in &self.pairs {
            let (a, b) = (&self.sharers[p.a], &self.sharers[p.b]);
            t.row(vec![
                human(p.bytes),
                with_share(p.pss_a, a.pss),
                with_share(p.pss_b, b.pss),
                name(a),
                name(b),
            ]);
        }
        let mut blocks = vec![
            Block::Heading(format!(
                "resident pages shared by pairs of {} (OF A'S PSS: what those pages are of A's PSS, and its share of all of it)",
                self.by.plural()
            )),
            Block::Table(t),
        ];
        if self.pairs.is_empty() {
            blocks.push(Block::Line("(no two of the selection share a resident page)".into()));
        }
        blocks.extend(self.notes.iter().map(|n| Block::Note(word(n))));
        write_text(blocks, screen.width, out)
    }

    fn json(&self, out: &mut dyn Write) -> std::io::Result<()> {
        fn side(s: &Sharer) -> Side<'_> {
            Side { key: &s.key, label: &s.label, processes: s.processes, pss: s.pss }
        }
        let doc = SharedJson {
            by: self.by.name(),
            pairs: self
                .pairs
                .iter()
                .map(|p| PairJson {
                    a: side(&self.sharers[p.a]),
                    b: side(&self.sharers[p.b]),
                    shared: p.bytes,
                    pss_a: p.pss_a,
                    pss_b: p.pss_b,
                })
                .collect(),
            notes: words(&self.notes),
        };
        json::line(out, &doc)
    }

    fn csv(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let mut w = csv::Writer::from_writer(out);
        w.write_record(["a", "b", "shared", "pss_a", "pss_b", "a_pss", "b_pss"])?;
        let n = |v: Option<u64>| v.map_or(String::new(), |v| v.to_string());
        for p in &self.pairs {
            let (a, b) = (&self.sharers[p.a], &self.sharers[p.b]);
            w.write_record([
                crate::render::table::csv_text(a.key.clone()),
                crate::render::table::csv_text(b.key.clone()),
                p.bytes.to_string(),
                p.pss_a.to_string(),
                p.pss_b.to_string(),
                n(a.pss),
                n(b.pss),
            ])?;
        }
        w.flush()
    }
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct Side<'a> {
    key: &'a str,
    label: &'a str,
    processes: usize,
    pss: Option<u64>,
}
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct PairJson<'a> {
    a: Side<'a>,
    b: Side<'a>,
    shared: u64,
    pss_a: u64,
    pss_b: u64,
}
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(crate) struct SharedJson<'a> {
    by: &'static str,
    pairs: Vec<PairJson<'a>>,
    notes: Vec<String>,
}
