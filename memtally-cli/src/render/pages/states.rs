//! `show PID --pages`: page states per category.

use std::io::Write;

use serde::Serialize;

use memtally_core::analyze::page_states::PageView;
use memtally_core::model::pages::{PageStates, ReadCost};

use crate::render::blocks::{write_text, Block};
use crate::render::json;
use crate::render::notes::{word, words};
use crate::render::table::{Align, Table};
use crate::render::units::{human, human_opt};
use crate::render::{Printer, Screen};

/// Columns any reader gets (from `PAGEMAP_SCAN`), then those of kpageflags.
const ALWAYS: [&str; 5] = ["PRESENT", "SWAPPED", "FILE", "HUGE", "ZERO PAGE"];
const FLAGS: [&str; 9] = [
    "ACTIVE",
    "INACTIVE",
    "REFERENCED",
    "KSM",
    "SWAPCACHE",
    "UNEVICT",
    "LOCKED",
    "DIRTY",
    "WRITEBACK",
];

fn always(s: &PageStates) -> [u64; 5] {
    [s.present, s.swapped, s.file, s.huge, s.zero_page]
}

fn flags(s: &PageStates) -> [Option<u64>; 9] {
    [
        s.active,
        s.inactive,
        s.referenced,
        s.ksm,
        s.swapcache,
        s.unevictable,
        s.locked,
        s.dirty,
        s.writeback,
    ]
}

fn cells(name: String, s: &PageStates, with_flags: bool) -> Vec<String> {
    let mut c = vec![name];
    c.extend(always(s).iter().map(|&v| human(v)));
    if with_flags {
        c.extend(flags(s).iter().map(|&v| human_opt(v)));
    }
    c
}

impl Printer for PageView {
    fn table(&self, out: &mut dyn Write, screen: Screen) -> std::io::Result<()> {
        let source = if self.flags { "kpageflags" } else { "PAGEMAP_SCAN, without root" };
        let mut headers = vec![("CATEGORY", Align::Left)];
        headers.extend(ALWAYS.iter().map(|h| (*h, Align::Right)));
        if self.flags {
            headers.extend(FLAGS.iter().map(|h| (*h, Align::Right)));
        }
        let mut t = Table::new(&headers);
        for (c, s) in &self.categories {
            t.row(cells(c.key().to_string(), s, self.flags));
        }
        t.footer(cells("total".into(), &self.totals, self.flags));
        let mut blocks = vec![
            Block::Heading(format!(
                "pid {}  {}  (page states from {source})",
                self.pid,
                if self.cmdline.is_empty() { &self.comm } else { &self.cmdline }
            )),
            Block::Table(t),
        ];
        blocks.extend(self.notes.iter().map(|n| Block::Note(word(n))));
        write_text(blocks, screen.width, out)
    }

    fn json(&self, out: &mut dyn Write) -> std::io::Result<()> {
        json::line(
            out,
            &PagesJson {
                pid: self.pid,
                comm: &self.comm,
                command: &self.cmdline,
                source: if self.flags { "kpageflags" } else { "pagemap_scan" },
                categories: self
                    .categories
                    .iter()
                    .map(|(c, s)| Row { category: c.key(), states: s })
                    .collect(),
                totals: &self.totals,
                partial: !self.flags,
                notes: words(&self.notes),
                read_cost: &self.cost,
            },
        )
    }

    fn csv(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let mut w = csv::Writer::from_writer(out);
        let keys = [
            "category",
            "present",
            "swapped",
            "file",
            "huge",
            "zero_page",
            "active",
            "inactive",
            "referenced",
            "ksm",
            "swapcache",
            "unevictable",
            "locked",
            "dirty",
            "writeback",
        ];
        w.write_record(keys)?;
        let rows = self.categories.iter().map(|(c, s)| (c.key(), s));
        for (name, s) in rows.chain(std::iter::once(("total", &self.totals))) {
            let mut rec = vec![name.to_string()];
            rec.extend(always(s).iter().map(u64::to_string));
            rec.extend(flags(s).iter().map(|v| v.map_or(String::new(), |v| v.to_string())));
            w.write_record(&rec)?;
        }
        w.flush()
    }
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct Row<'a> {
    category: &'static str,
    #[serde(flatten)]
    states: &'a PageStates,
}
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(crate) struct PagesJson<'a> {
    pid: u32,
    comm: &'a str,
    command: &'a str,
    source: &'static str,
    categories: Vec<Row<'a>>,
    totals: &'a PageStates,
    partial: bool,
    notes: Vec<String>,
    /// What the read cost the kernel: entries read of each file.
    read_cost: &'a ReadCost,
}
