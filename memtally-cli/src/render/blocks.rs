//! What a table view says, apart from how it is laid out: headings,
//! tables, lines of text, notes, blank lines. A view builds its blocks
//! once; [`write_text`] lays them out for a terminal (the bytes the views
//! have always printed), and another backend (Markdown, HTML) is one more
//! function over the same blocks.

use std::io::{self, Write};

use crate::render::table::Table;
use crate::render::width;

/// One piece of a table view.
#[derive(Debug, Clone)]
pub enum Block {
    /// What the view is of (`pid 42  python3 x.py  (from smaps)`), one
    /// line, already cut to the width by the view where it says so.
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

/// The blocks as text for a terminal `width` columns wide (`None`: lines
/// whole), every line ending in a newline.
pub fn write_text(blocks: Vec<Block>, width: Option<usize>, out: &mut dyn Write) -> io::Result<()> {
    for block in blocks {
        match block {
            Block::Heading(text) | Block::Line(text) => writeln!(out, "{text}")?,
            Block::Table(mut t) => {
                t.fit(width);
                out.write_all(t.render().as_bytes())?;
            }
            Block::Note(text) => width::note(out, &text, width)?,
            Block::Blank => writeln!(out)?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::table::Align;

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
            width::note(&mut want, note, width).unwrap();
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
}
