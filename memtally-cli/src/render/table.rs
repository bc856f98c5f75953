//! A plain text table: a header, rows, an optional totals row; numbers
//! right-aligned, text left-aligned, columns as wide as their widest cell.

/// How a column is aligned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// A table being built.
#[derive(Debug, Clone)]
pub struct Table {
    headers: Vec<(String, Align)>,
    rows: Vec<Vec<String>>,
    footer: Option<Vec<String>>,
    /// Cut lines to this many characters (a terminal's width).
    max_width: Option<usize>,
}

impl Table {
    pub fn new(headers: &[(&str, Align)]) -> Table {
        Table {
            headers: headers.iter().map(|(h, a)| (h.to_string(), *a)).collect(),
            rows: Vec::new(),
            footer: None,
            max_width: None,
        }
    }

    /// Cuts every line to `width` characters (long command lines on a
    /// terminal), as `ps` does; `None` keeps lines whole.
    pub fn fit(&mut self, width: Option<usize>) {
        self.max_width = width;
    }

    /// Adds a row. Control characters in cells (a newline in a command
    /// line or file name) are escaped so one row stays one line.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells.into_iter().map(escape_controls).collect());
    }

    /// The totals row, printed under a rule.
    pub fn footer(&mut self, cells: Vec<String>) {
        self.footer = Some(cells);
    }

    /// The table as text, every line ending in a newline. The last column,
    /// when left-aligned, is not padded (paths can be long).
    pub fn render(&self) -> String {
        let n = self.headers.len();
        let mut widths: Vec<usize> = self.headers.iter().map(|(h, _)| h.chars().count()).collect();
        for row in self.rows.iter().chain(self.footer.iter()) {
            for (i, cell) in row.iter().enumerate().take(n) {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
        let mut out = String::new();
        let header: Vec<String> = self.headers.iter().map(|(h, _)| h.clone()).collect();
        self.line(&mut out, &header, &widths);
        for row in &self.rows {
            self.line(&mut out, row, &widths);
        }
        if let Some(f) = &self.footer {
            let rule_width: usize = widths.iter().sum::<usize>() + 2 * (n.saturating_sub(1));
            out.push_str(&"-".repeat(rule_width.min(120)));
            out.push('\n');
            self.line(&mut out, f, &widths);
        }
        out
    }

    fn line(&self, out: &mut String, cells: &[String], widths: &[usize]) {
        let n = self.headers.len();
        let mut line = String::new();
        for (i, width) in widths.iter().enumerate().take(n) {
            let cell = cells.get(i).map(String::as_str).unwrap_or("");
            let pad = width.saturating_sub(cell.chars().count());
            if i > 0 {
                line.push_str("  ");
            }
            match self.headers[i].1 {
                Align::Right => {
                    line.push_str(&" ".repeat(pad));
                    line.push_str(cell);
                }
                Align::Left => {
                    line.push_str(cell);
                    if i + 1 < n {
                        line.push_str(&" ".repeat(pad));
                    }
                }
            }
        }
        let line = line.trim_end();
        match self.max_width {
            Some(w) if line.chars().count() > w => out.extend(line.chars().take(w)),
            _ => out.push_str(line),
        }
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

/// [`escape_controls`] for Prometheus label values, whose encoder escapes
/// `\n`, `\\` and `"` itself: every other control or bidi character is `?`.
#[cfg(feature = "serve")]
pub fn scrub_label(value: String) -> String {
    if !value.chars().any(|c| c != '\n' && unsafe_char(c)) {
        return value;
    }
    value.chars().map(|c| if c != '\n' && unsafe_char(c) { '?' } else { c }).collect()
}

/// A control character, or a bidirectional embedding, override or
/// isolate (U+061C, U+200E/F, U+202A..U+202E, U+2066..U+2069).
fn unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// The width of the terminal on standard output, or `None` when it is not
/// a terminal (then lines are never cut).
pub fn terminal_width() -> Option<usize> {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() {
        return None;
    }
    let mut ws = libc::winsize { ws_row: 0, ws_col: 0, ws_xpixel: 0, ws_ypixel: 0 };
    // SAFETY: TIOCGWINSZ writes one winsize into the struct we pass.
    let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut ws) } == 0;
    (ok && ws.ws_col > 0).then_some(ws.ws_col as usize)
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
        assert_eq!(t.render(), "CMD\npython3 -c\n");
        t.fit(None);
        assert_eq!(t.render().lines().nth(1), Some("python3 -c a\\nb?"));
    }
}
