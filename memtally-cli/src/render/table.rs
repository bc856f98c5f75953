//! A plain text table: a header, rows, an optional totals row; numbers
//! right-aligned, text left-aligned, columns as wide as their widest cell
//! (in display columns), fitted to the output's width.

use std::io::{self, Write};

use crate::render::width;

/// How a column is aligned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// Where a text column's cells are cut when they do not fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// At the end (`python3 -c imp…`): what a command's start says.
    End,
    /// In the middle, keeping the file name (`/usr/lib/…/libc.so.6`).
    Path,
    /// At the start, keeping the leaf (`…/system.slice/nginx.service`).
    Leaf,
}

/// Between two cells of a row in [`Table::rows`]: a newline, which no
/// cell holds once [`escape_controls`] has escaped it.
const CELL_END: char = '\n';

/// A table being built.
#[derive(Debug, Clone)]
pub struct Table {
    headers: Vec<(String, Align)>,
    /// Each row's cells in one string, separated by [`CELL_END`]: one
    /// allocation a row, not one a cell. At 3,000 processes a table of
    /// every one held 12,000 cells, with the allocator's header and
    /// rounding on each, and was a fifth of `top --all`'s peak heap.
    rows: Vec<String>,
    /// Per row, a shorter form of one cell (column, text) used when the
    /// cell does not fit: a command line's [`command_label`](width::command_label).
    compact: Vec<Option<(usize, String)>>,
    footer: Option<Vec<String>>,
    /// Fit lines to this many display columns (the output's width).
    max_width: Option<usize>,
    /// Columns never narrowed (a category's name).
    whole: Vec<usize>,
    /// Text columns narrowed before the others (one with a compact form).
    first: Vec<usize>,
    /// Columns cut other than at the end.
    cuts: Vec<(usize, Cut)>,
    /// Per row, a cut of one cell other than its column's (a command line
    /// among paths).
    row_cuts: Vec<Option<(usize, Cut)>>,
}

impl Table {
    pub fn new(headers: &[(&str, Align)]) -> Table {
        Table {
            headers: headers.iter().map(|(h, a)| (h.to_string(), *a)).collect(),
            rows: Vec::new(),
            compact: Vec::new(),
            footer: None,
            max_width: None,
            whole: Vec::new(),
            first: Vec::new(),
            cuts: Vec::new(),
            row_cuts: Vec::new(),
        }
    }

    /// Cuts the cells of text column `column` as `cut` says (a path in
    /// the middle, a cgroup at its start) when they do not fit.
    pub fn cut_as(&mut self, column: usize, cut: Cut) {
        self.cuts.push((column, cut));
    }

    /// Never narrows text column `column` to fit: where the table is still
    /// too wide, whole columns on the right are left out (marked `…`)
    /// rather than cutting a figure.
    pub fn keep_whole(&mut self, column: usize) {
        self.whole.push(column);
    }

    /// Narrows text column `column` before the other text columns: one
    /// whose cells have a short form ([`row_with_compact`](Self::row_with_compact)),
    /// such as a purge state's code for its label.
    pub fn narrow_first(&mut self, column: usize) {
        self.first.push(column);
    }

    /// Fits every line to `width` display columns (the output's, from
    /// [`Screen`](crate::render::Screen)): the text columns narrow (the last one
    /// first) and their cells are cut with `…`, so the numbers stay
    /// aligned; `None` keeps lines whole.
    pub fn fit(&mut self, width: Option<usize>) {
        self.max_width = width;
    }

    /// Adds a row. Control characters in cells (a newline in a command
    /// line or file name) are escaped so one row stays one line.
    pub fn row(&mut self, cells: Vec<String>) {
        let mut packed = String::with_capacity(cells.iter().map(|c| c.len() + 1).sum());
        for (i, cell) in cells.into_iter().enumerate() {
            if i > 0 {
                packed.push(CELL_END);
            }
            packed.push_str(&escape_controls(cell));
        }
        self.rows.push(packed);
        self.compact.push(None);
        self.row_cuts.push(None);
    }

    /// Cuts cell `column` of the last row added as `cut` says, whatever
    /// its column's cut (a process's command under a file's path).
    pub fn cut_last_row_as(&mut self, column: usize, cut: Cut) {
        if let Some(slot) = self.row_cuts.last_mut() {
            *slot = Some((column, cut));
        }
    }

    /// Adds a row whose cell `column` has a shorter form, shown (and cut
    /// if need be) when the cell does not fit its column.
    pub fn row_with_compact(&mut self, cells: Vec<String>, column: usize, compact: String) {
        self.row(cells);
        *self.compact.last_mut().expect("a row was added") =
            Some((column, escape_controls(compact)));
    }

    /// The totals row, printed under a rule.
    pub fn footer(&mut self, cells: Vec<String>) {
        self.footer = Some(cells);
    }

    /// The table as text, every line ending in a newline. The last column,
    /// when left-aligned, is not padded (paths can be long). The views
    /// write with [`Table::write_to`]; this is the tests' form.
    #[cfg(test)]
    pub fn render(&self) -> String {
        let mut out = String::new();
        let wrote: io::Result<()> = self.each_line(|line| {
            out.push_str(line);
            Ok(())
        });
        wrote.expect("a String takes every line");
        out
    }

    /// The table written to `out` a line at a time, the same bytes as
    /// [`Table::render`]: a table of every process is never held whole as
    /// text beside its cells (at 3,000 processes the text was 380 KB more
    /// at the peak of `top --all`, which has a memory target).
    pub fn write_to(&self, out: &mut dyn Write) -> io::Result<()> {
        self.each_line(|line| out.write_all(line.as_bytes()))
    }

    /// Lays out every line, newline included, and hands each to `emit` in
    /// turn, in one buffer reused from line to line.
    fn each_line(&self, mut emit: impl FnMut(&str) -> io::Result<()>) -> io::Result<()> {
        let n = self.headers.len();
        let mut widths: Vec<usize> = self.headers.iter().map(|(h, _)| width::columns(h)).collect();
        let footer = self.footer.iter().flatten().map(String::as_str);
        for cells in self.rows.iter().map(|r| r.split(CELL_END)) {
            for (i, cell) in cells.enumerate().take(n) {
                widths[i] = widths[i].max(width::columns(cell));
            }
        }
        for (i, cell) in footer.clone().enumerate().take(n) {
            widths[i] = widths[i].max(width::columns(cell));
        }
        let mut shown = n;
        if let Some(max) = self.max_width {
            let natural = widths.clone();
            self.narrow(&mut widths, max);
            shown = Self::shown(&widths, max);
            if shown < n {
                // Columns are left out: the text columns that stay get
                // back the room the left-out ones had (less the mark).
                widths = natural;
                self.narrow(&mut widths[..shown], max.saturating_sub(3));
            }
        }
        let widths = &widths[..shown];
        let mut line = String::new();
        let mut cells: Vec<&str> = self.headers.iter().map(|(h, _)| h.as_str()).collect();
        self.line(&mut line, &cells, None, None, widths);
        emit(&line)?;
        for ((row, compact), cut) in self.rows.iter().zip(&self.compact).zip(&self.row_cuts) {
            cells.clear();
            cells.extend(row.split(CELL_END));
            line.clear();
            self.line(&mut line, &cells, compact.as_ref(), *cut, widths);
            emit(&line)?;
        }
        if let Some(f) = &self.footer {
            let mut rule_width: usize =
                widths.iter().sum::<usize>() + 2 * (shown.saturating_sub(1));
            if shown < n {
                rule_width += 3;
            }
            line.clear();
            line.push_str(&width::rule(rule_width, self.max_width));
            line.push('\n');
            emit(&line)?;
            cells.clear();
            cells.extend(f.iter().map(String::as_str));
            line.clear();
            self.line(&mut line, &cells, None, None, widths);
            emit(&line)?;
        }
        Ok(())
    }

    /// How many columns, from the left, fit `max` with `  …` after them;
    /// all of them when they fit (or when not even one would).
    fn shown(widths: &[usize], max: usize) -> usize {
        let n = widths.len();
        let prefix = |k: usize| widths[..k].iter().sum::<usize>() + 2 * k.saturating_sub(1);
        if prefix(n) <= max {
            return n;
        }
        (1..n).rev().find(|&k| prefix(k) + 3 <= max).unwrap_or(n)
    }

    /// Narrows the left-aligned (text) columns until the table fits `max`:
    /// those asked to go first, then the last column, then the widest;
    /// none below its header. `widths` may be the first columns only.
    fn narrow(&self, widths: &mut [usize], max: usize) {
        let n = widths.len();
        let total = |w: &[usize]| w.iter().sum::<usize>() + 2 * n.saturating_sub(1);
        let floor = |i: usize| width::columns(&self.headers[i].0).max(4);
        let text: Vec<usize> = (0..n)
            .filter(|&i| self.headers[i].1 == Align::Left && !self.whole.contains(&i))
            .collect();
        let mut order: Vec<usize> =
            self.first.iter().copied().filter(|i| text.contains(i)).collect();
        let last = self.headers.len();
        if text.contains(&(last - 1)) && !order.contains(&(last - 1)) {
            order.push(last - 1);
        }
        let mut others: Vec<usize> =
            text.iter().copied().filter(|&i| !order.contains(&i)).collect();
        others.sort_by_key(|&i| std::cmp::Reverse(widths[i]));
        order.extend(others);
        for i in order {
            let excess = total(widths).saturating_sub(max);
            if excess == 0 {
                break;
            }
            let give = excess.min(widths[i].saturating_sub(floor(i)));
            widths[i] -= give;
        }
    }

    fn line(
        &self,
        out: &mut String,
        cells: &[&str],
        compact: Option<&(usize, String)>,
        row_cut: Option<(usize, Cut)>,
        widths: &[usize],
    ) {
        let n = self.headers.len();
        let mut line = String::new();
        for (i, width) in widths.iter().enumerate() {
            let mut cell = cells.get(i).copied().unwrap_or("");
            if width::columns(cell) > *width {
                if let Some((_, short)) = compact.filter(|(c, _)| *c == i) {
                    cell = short;
                }
            }
            let cut = row_cut
                .filter(|(c, _)| *c == i)
                .or_else(|| self.cuts.iter().find(|(c, _)| *c == i).copied())
                .map_or(Cut::End, |(_, k)| k);
            let cell = match cut {
                Cut::End => width::cut(cell, *width),
                Cut::Path => width::cut_path(cell, *width),
                Cut::Leaf => width::cut_left(cell, *width),
            };
            if i > 0 {
                line.push_str("  ");
            }
            match self.headers[i].1 {
                Align::Right => line.push_str(&width::pad_left(&cell, *width)),
                Align::Left if i + 1 < n => line.push_str(&width::pad_right(&cell, *width)),
                Align::Left => line.push_str(&cell),
            }
        }
        if widths.len() < n {
            // Columns left out on the right.
            line.truncate(line.trim_end().len());
            line.push_str("  …");
        }
        let line = line.trim_end();
        out.push_str(&width::fit(line, self.max_width));
        out.push('\n');
    }
}

/// `\n` for a newline, `\t` for a tab, `?` for other control characters
/// and for the bidirectional-text controls (which can make a command line
/// read backwards). Used for every text that comes from a process (command
/// lines, names, paths) in tables, CSV and SVG.
pub fn escape_controls(cell: String) -> String {
    if !cell.chars().any(unsafe_char) {
        return cell;
    }
    let mut out = String::with_capacity(cell.len() + 8);
    for c in cell.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if unsafe_char(c) => out.push('?'),
            c => out.push(c),
        }
    }
    out
}

/// [`escape_controls`] for a CSV cell of text from the input (command
/// lines, names, paths, cgroups, region types): a spreadsheet runs a cell
/// that starts with `=`, `+`, `-` or `@` (or a tab or CR, which are
/// escaped already) as a formula, so such a cell gets a leading `'`, as
/// OWASP's CSV-injection advice has it. Figures are never passed here.
pub fn csv_text(cell: String) -> String {
    let cell = escape_controls(cell);
    if cell.starts_with(['=', '+', '-', '@']) {
        format!("'{cell}")
    } else {
        cell
    }
}

/// [`escape_controls`] for Prometheus label values, whose encoder escapes
/// `\n`, `\\` and `"` itself: every other control or bidi character is `?`.
#[cfg(feature = "serve")]
pub fn scrub_label(value: String) -> String {
    if !value.chars().any(|c| c != '\n' && unsafe_char(c)) {
        return value;
    }
    value.chars().map(|c| if c != '\n' && unsafe_char(c) { '?' } else { c }).collect()
}

/// A control character, a line or paragraph separator (U+2028, U+2029:
/// a line break to a terminal or an editor, as `\n` is), or a
/// bidirectional embedding, override or isolate (U+061C, U+200E/F,
/// U+202A..U+202E, U+2066..U+2069).
fn unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{2028}' | '\u{2029}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_columns() {
        let mut t = Table::new(&[("NAME", Align::Left), ("RSS", Align::Right)]);
        t.row(vec!["heap".into(), "12.0M".into()]);
        t.row(vec!["stack".into(), "8K".into()]);
        t.footer(vec!["total".into(), "12.0M".into()]);
        let s = t.render();
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], "NAME     RSS");
        assert_eq!(lines[1], "heap   12.0M");
        assert_eq!(lines[2], "stack     8K");
        assert_eq!(lines[4], "total  12.0M");
    }

    #[test]
    fn control_characters_stay_on_one_line_and_width_cuts() {
        let mut t = Table::new(&[("CMD", Align::Left)]);
        t.row(vec!["python3 -c a\nb\x07".into()]);
        t.fit(Some(10));
        assert_eq!(t.render(), "CMD\npython3 -…\n");
        t.fit(None);
        assert_eq!(t.render().lines().nth(1), Some("python3 -c a\\nb?"));
    }

    #[test]
    fn text_columns_narrow_and_cut_with_a_mark_numbers_stay_aligned() {
        let mut t = Table::new(&[
            ("PROGRAM", Align::Left),
            ("PSS", Align::Right),
            ("COMMAND", Align::Left),
        ]);
        t.row(vec!["内存计数器".into(), "1.0M".into(), "/usr/bin/a --long --arguments".into()]);
        t.row(vec!["sleep".into(), "12.0M".into(), "sleep 600".into()]);
        t.footer(vec!["total".into(), "13.0M".into(), String::new()]);
        let whole = t.render();
        let lines: Vec<&str> = whole.lines().collect();
        // Columns line up by what the terminal draws: 内 takes two.
        let end = |l: &str| width::columns(&l[..l.find('M').unwrap() + 1]);
        assert_eq!(end(lines[1]), end(lines[2]));
        assert_eq!(lines[3], "-".repeat(width::columns(lines[1])));
        t.fit(Some(30));
        let fitted = t.render();
        let lines: Vec<&str> = fitted.lines().collect();
        for l in &lines {
            assert!(width::columns(l) <= 30, "{l:?}");
        }
        assert!(lines[1].ends_with('…'), "{fitted}");
        assert_eq!(end(lines[1]), end(lines[2]));
        assert_eq!(lines[3], "-".repeat(30));
        // Narrower: the first text column gives way too, with a mark.
        t.fit(Some(24));
        let narrow = t.render();
        assert!(narrow.lines().nth(1).unwrap().starts_with("内存计…"), "{narrow}");
        assert!(narrow.lines().all(|l| width::columns(l) <= 24), "{narrow}");
    }

    #[test]
    fn a_kept_column_stays_whole_and_columns_on_the_right_are_left_out() {
        let mut t = Table::new(&[
            ("CATEGORY", Align::Left),
            ("PRIV DIRTY", Align::Right),
            ("VIRTUAL", Align::Right),
            ("REGIONS", Align::Right),
        ]);
        t.row(vec!["file read-only data".into(), "1023.9M".into(), "2.0G".into(), "71".into()]);
        t.footer(vec!["total".into(), "1023.9M".into(), "2.0G".into(), "71".into()]);
        t.keep_whole(0);
        t.fit(Some(45));
        let s = t.render();
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], "CATEGORY             PRIV DIRTY  VIRTUAL  …");
        assert_eq!(lines[1], "file read-only data     1023.9M     2.0G  …");
        assert_eq!(lines[2], "-".repeat(43));
        assert!(s.lines().all(|l| width::columns(l) <= 45), "{s}");
        t.fit(Some(200));
        assert!(t.render().lines().nth(1).unwrap().ends_with("2.0G       71"));
    }

    #[test]
    fn a_column_asked_to_go_first_narrows_first_and_left_out_columns_give_room_back() {
        let mut t = Table::new(&[
            ("REGION TYPE", Align::Left),
            ("PURGE", Align::Left),
            ("VSIZE", Align::Right),
            ("RESIDENT", Align::Right),
            ("RECLAIMABLE", Align::Right),
        ]);
        let row = vec![
            "IOAccelerator (graphics)".into(),
            "N (Non-Volatile)".into(),
            "64.0K".into(),
            "64.0K".into(),
            "0".into(),
        ];
        t.row_with_compact(row, 1, "N".into());
        t.narrow_first(1);
        t.fit(Some(52));
        // The purge state gives way first (its code shows), then the type.
        assert_eq!(
            t.render().lines().nth(1),
            Some("IOAccelerator …  N      64.0K     64.0K            0")
        );
        // Too narrow for every column at its header's width: RECLAIMABLE is
        // left out, and the type gets the room it had (13 columns, not 11).
        t.fit(Some(40));
        let s = t.render();
        assert_eq!(s.lines().nth(1), Some("IOAccelerato…  N      64.0K     64.0K  …"), "{s}");
        assert!(s.lines().all(|l| width::columns(l) <= 40), "{s}");
    }

    #[test]
    fn a_cell_that_does_not_fit_shows_its_compact_form() {
        let mut t = Table::new(&[("PID", Align::Right), ("COMMAND", Align::Left)]);
        let cmd = "/usr/lib/chromium/chromium --type=renderer --lang=en-US";
        t.row_with_compact(
            vec!["7".into(), cmd.into()],
            1,
            "chromium --type=renderer --lang=en-US".into(),
        );
        t.fit(Some(200));
        assert_eq!(t.render().lines().nth(1), Some(format!("  7  {cmd}").as_str()));
        t.fit(Some(32));
        assert_eq!(t.render().lines().nth(1), Some("  7  chromium --type=renderer -…"));
    }
}
