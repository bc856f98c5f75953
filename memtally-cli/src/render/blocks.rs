//! What a table view says, apart from how it is laid out: headings,
//! tables, lines of text, notes, blank lines. A view builds its blocks
//! once; [`write_text`] lays them out for a terminal (the bytes the views
//! have always printed), and another backend (Markdown, HTML) is one more
//! function over the same blocks.

use std::io::{self, Write};

use crate::render::table::{escape_controls, Table};
use crate::render::width;

/// One piece of a table view.
#[derive(Debug, Clone)]
pub enum Block {
    /// What the view, or the section after it, is of (`pid 42  python3
    /// x.py  (from smaps)`, `By type:`), one line, already cut to the
    /// width by the view where it says so.
    Heading(String),
    /// A table, fitted to the width by the backend.
    Table(Table),
    /// A line of text: an explanation, a count of rows left out, a line
    /// of the machine's waterfall.
    Line(String),
    /// A note on what the figures leave out (`note: …`), wrapped to the width.
    Note(String),
    /// An empty line between sections.
    Blank,
}

/// A section's title after an empty line (`By type:`, `Warnings:`).
pub fn section(out: &mut Vec<Block>, title: String) {
    out.push(Block::Blank);
    out.push(Block::Heading(title));
}

/// The blocks as text for a terminal `width` columns wide (`None`: lines
/// whole), every line ending in a newline.
pub fn write_text(blocks: Vec<Block>, width: Option<usize>, out: &mut dyn Write) -> io::Result<()> {
    for block in blocks {
        match block {
            Block::Heading(text) | Block::Line(text) => writeln!(out, "{}", safe(&text))?,
            Block::Table(mut t) => {
                t.fit(width);
                t.write_to(out)?;
            }
            Block::Note(text) => {
                out.write_all(safe(&width::wrap("note: ", &text, width)).as_bytes())?
            }
            Block::Blank => writeln!(out)?,
        }
    }
    Ok(())
}

/// `text` with each line's control characters escaped, its line breaks
/// kept: a line can carry a name or a command line from a process, whose
/// ESC or BEL a terminal would obey ([`escape_controls`]).
fn safe(text: &str) -> String {
    text.split('\n').map(|l| escape_controls(l.to_string())).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::gpu::GpuView;
    use crate::render::table::Align;
    use crate::render::vmmap::VmmapView;
    use crate::render::Printer;

    fn table() -> Table {
        let mut t = Table::new(&[("NAME", Align::Left), ("RSS", Align::Right)]);
        t.row(vec!["a rather long name".into(), "12.0M".into()]);
        t.footer(vec!["total".into(), "12.0M".into()]);
        t
    }

    fn text(blocks: Vec<Block>, width: Option<usize>) -> String {
        let mut out = Vec::new();
        write_text(blocks, width, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// The blocks print what a view wrote line by line before there were
    /// blocks: a heading, the table fitted as `Table::fit` fits it, a
    /// blank line, text as it is, notes wrapped as `width::note` wraps them.
    #[test]
    fn text_is_what_the_views_wrote_directly() {
        let note = "the kernel gives no Pss_Dirty before 6.0, so PRIV DIRTY is shown instead";
        for width in [None, Some(20), Some(80)] {
            let mut want = Vec::new();
            writeln!(want, "pid 1  init  (from smaps)").unwrap();
            let mut t = table();
            t.fit(width);
            want.extend(t.render().bytes());
            writeln!(want).unwrap();
            writeln!(want, "(3 more rows not shown)").unwrap();
            want.extend(width::wrap("note: ", note, width).bytes());
            let got = text(
                vec![
                    Block::Heading("pid 1  init  (from smaps)".into()),
                    Block::Table(table()),
                    Block::Blank,
                    Block::Line("(3 more rows not shown)".into()),
                    Block::Note(note.into()),
                ],
                width,
            );
            assert_eq!(got, String::from_utf8(want).unwrap(), "width {width:?}");
        }
        // And the width is used: the table is cut, the note wrapped.
        let narrow = text(vec![Block::Table(table()), Block::Note(note.into())], Some(20));
        assert!(narrow.contains('…'), "{narrow}");
        assert!(narrow.lines().all(|l| width::columns(l) <= 20), "{narrow}");
    }

    /// Every view's text, checked a block at a time: each block, written
    /// alone, is the next piece of what the view prints, and nothing is
    /// left after the last. So no view writes around its blocks, and no
    /// block's text depends on the one before: another backend (Markdown,
    /// HTML) that writes the same blocks its own way shows the whole view.
    fn assert_printed_by_blocks(name: &str, view: &dyn Printer, blocks: Vec<Block>) {
        let mut printed = Vec::new();
        view.table(&mut printed, crate::render::Screen::default()).unwrap();
        let printed = String::from_utf8(printed).unwrap();
        let mut rest = printed.as_str();
        for block in blocks {
            let piece = text(vec![block.clone()], None);
            assert!(
                rest.starts_with(&piece),
                "{name}: {block:?} is not the next of what the view printed: {:?}",
                rest.lines().next()
            );
            rest = &rest[piece.len()..];
        }
        assert!(rest.is_empty(), "{name} printed lines of no block: {rest}");
    }

    /// Real views, built from recorded fixtures, each with every part it
    /// can print (vmmap's histograms and region list, gpu's three tables
    /// and its notes, cgroup's named differences).
    #[test]
    fn real_views_print_nothing_but_their_blocks() {
        use crate::testdata::views;
        use memtally_core::ProcRoot;

        let Some(fixtures) = crate::testdata::testdata("fixtures") else { return };
        for name in ["04_modern_gpu_purge.txt", "09_summary_only.txt", "12_unreadable.txt"] {
            let report = views::vmmap(&fixtures.join("vmmap").join(name));
            let view = VmmapView {
                report: &report,
                pow2: false,
                histograms: Some(Vec::new()),
                list_regions: true,
                csv: Default::default(),
            };
            assert_printed_by_blocks(name, &view, view.blocks(None));
        }
        let machine = ProcRoot::new(fixtures.join("gpu/machine"));
        let report = views::gpu(&machine);
        assert!(!report.totals.is_empty(), "the recorded machine has GPU clients");
        let gpu = GpuView { report };
        assert_printed_by_blocks("gpu", &gpu, crate::render::gpu::blocks(&gpu.report));
        let cgroups = views::cgroup(&machine);
        assert_printed_by_blocks("cgroup", &cgroups, crate::render::cgroup::blocks(&cgroups));
        let python = ProcRoot::new(fixtures.join("linux/python3-mmap/proc"));
        let classic = views::classic(&python, 11364);
        assert_printed_by_blocks("classic", &classic, crate::render::classic::blocks(&classic));
    }

    /// A name or command line with ESC, BEL or a bidirectional control in
    /// a heading, a line (`watch`'s verdict names a process) or a note
    /// reaches the terminal escaped; line breaks of wrapped text stay.
    #[test]
    fn control_characters_in_lines_and_notes_are_escaped() {
        let hostile = "pid 7 grows 1.0M/s, evil\x1b]2;owned\x07 \x1b[31mred\u{202e}";
        let got = text(
            vec![
                Block::Heading(hostile.into()),
                Block::Line(format!("verdict: {hostile}\nsecond line")),
                Block::Note(hostile.into()),
            ],
            Some(40),
        );
        assert!(!got.chars().any(|c| c.is_control() && c != '\n' || c == '\u{202e}'), "{got:?}");
        assert!(got.contains("evil?]2;owned? ?[31mred?"), "{got}");
        assert!(got.contains("\nsecond line\n"), "{got:?}");
        assert!(got.contains("note: "), "{got}");
    }
}
