//! `show --exact`: what the selected processes give back, together and
//! each alone, beside their PSS and USS.

use std::io::Write;

use serde::Serialize;

use memtally_core::analyze::top::Top;
use memtally_core::model::pages::Exclusive;
use memtally_core::model::Figure;

use crate::render::blocks::{write_text, Block};
use crate::render::json;
use crate::render::notes::{word, words};
use crate::render::table::{Align, Table};
use crate::render::units::{human_opt, plural};
use crate::render::{Printer, Screen};

/// The `top` view of the selection, read with `exact`, shown as one group.
pub struct ExactShow(pub Top);

/// One line: figures of one process, or of the selection together.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct Line {
    pid: Option<u32>,
    command: Option<String>,
    pss: Option<u64>,
    uss: Option<u64>,
    rss: Option<u64>,
    exclusive: Option<u64>,
    exclusive_anon: Option<u64>,
    exclusive_swap: Option<u64>,
    exclusive_shmem: Option<u64>,
}

impl ExactShow {
    fn lines(&self) -> (Vec<Line>, Line) {
        let top = &self.0;
        let exact = top.exact.as_ref();
        let line =
            |pid, command, sizes: &memtally_core::model::Sizes, ex: Option<Exclusive>| Line {
                pid,
                command,
                pss: sizes.figure(Figure::Pss),
                uss: sizes.figure(Figure::Uss),
                rss: sizes.figure(Figure::Rss),
                exclusive: ex.map(|e| e.bytes),
                exclusive_anon: ex.map(|e| e.anon),
                exclusive_swap: ex.map(|e| e.swap),
                exclusive_shmem: ex.map(|e| e.shmem),
            };
        let each = top
            .report
            .rows
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let p = r.process.map(|k| &top.scan.processes[k]);
                let ex = exact.and_then(|e| e.groups.get(i).copied().flatten());
                line(p.map(|p| p.info.pid), p.map(|p| p.info.command()), &r.sizes, ex)
            })
            .collect();
        let all_read = exact.is_some_and(|e| e.groups.iter().all(Option::is_some));
        let together = exact.map(|e| e.all).filter(|_| all_read);
        (each, line(None, None, &top.report.totals, together))
    }
}

impl Printer for ExactShow {
    fn table(&self, out: &mut dyn Write, screen: Screen) -> std::io::Result<()> {
        let (each, together) = self.lines();
        let heads =
            ["PID", "PSS", "USS", "RSS", "EXCLUSIVE", "EXCL ANON", "EXCL SWAP", "EXCL SHMEM"];
        let mut headers: Vec<(&str, Align)> = heads.iter().map(|h| (*h, Align::Right)).collect();
        headers.push(("COMMAND", Align::Left));
        let mut t = Table::new(&headers);
        let cells = |l: &Line, first: String, last: String| {
            let mut c = vec![first];
            c.extend(
                [
                    l.pss,
                    l.uss,
                    l.rss,
                    l.exclusive,
                    l.exclusive_anon,
                    l.exclusive_swap,
                    l.exclusive_shmem,
                ]
                .map(human_opt),
            );
            c.push(last);
            c
        };
        for l in &each {
            let pid = l.pid.map_or(String::new(), |p| p.to_string());
            t.row(cells(l, pid, l.command.clone().unwrap_or_default()));
        }
        t.footer(cells(
            &together,
            "together".into(),
            format!(
                "{} (EXCLUSIVE: what ending them all gives back)",
                plural(each.len(), "process", "processes")
            ),
        ));
        let mut blocks = vec![
            Block::Heading("each process alone, then the selection as one group".into()),
            Block::Table(t),
        ];
        blocks.extend(self.0.notes().iter().map(|n| Block::Note(word(n))));
        write_text(blocks, screen.width, out)
    }

    fn json(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let (processes, together) = self.lines();
        let doc = ExactJson {
            processes,
            together,
            partial: self.0.partial(),
            notes: words(&self.0.notes()),
        };
        json::line(out, &doc)
    }

    fn csv(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let (each, together) = self.lines();
        let mut w = csv::Writer::from_writer(out);
        w.write_record([
            "pid",
            "pss",
            "uss",
            "rss",
            "exclusive",
            "exclusive_anon",
            "exclusive_swap",
            "exclusive_shmem",
            "command",
        ])?;
        let n = |v: Option<u64>| v.map_or(String::new(), |v| v.to_string());
        for l in each.iter().chain(std::iter::once(&together)) {
            let pid = l.pid.map_or("together".to_string(), |p| p.to_string());
            let command = crate::render::table::csv_text(l.command.clone().unwrap_or_default());
            w.write_record([
                pid,
                n(l.pss),
                n(l.uss),
                n(l.rss),
                n(l.exclusive),
                n(l.exclusive_anon),
                n(l.exclusive_swap),
                n(l.exclusive_shmem),
                command,
            ])?;
        }
        w.flush()
    }
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(crate) struct ExactJson {
    processes: Vec<Line>,
    together: Line,
    partial: bool,
    notes: Vec<String>,
}
