//! Fitting text to the output's width, in display columns: the screen a
//! printer is given, cutting with `…`, wrapping notes, and the short
//! label of a long command line.
//!
//! Every width here counts what a terminal draws (unicode-width): a CJK
//! character takes two columns, a combining mark none.

use std::borrow::Cow;

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// The mark at the end of cut text.
pub const ELLIPSIS: char = '…';

/// The screen the output is for, decided once by the command line
/// (`COLUMNS`, `LINES`, the terminal: `crate::stdout::screen`) and given
/// to every printer. The default is a pipe's: nothing is fitted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Screen {
    /// The width lines are fitted to; `None`: lines stay whole.
    pub width: Option<usize>,
    /// The lines one screen holds; `None`: every row and note in full.
    pub height: Option<usize>,
}

/// Display columns of `s`.
pub fn columns(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

fn char_columns(c: char) -> usize {
    UnicodeWidthChar::width(c).unwrap_or(0)
}

/// `s` in at most `width` columns: whole when it fits, else its start and
/// `…` (a wide character that would straddle the edge is left out).
pub fn cut(s: &str, width: usize) -> Cow<'_, str> {
    if columns(s) <= width {
        return Cow::Borrowed(s);
    }
    let room = width.saturating_sub(1);
    let mut used = 0;
    let mut out = String::with_capacity(width + 3);
    for c in s.chars() {
        let w = char_columns(c);
        if used + w > room {
            break;
        }
        used += w;
        out.push(c);
    }
    if width > 0 {
        out.push(ELLIPSIS);
    }
    Cow::Owned(out)
}

/// A path in at most `width` columns, cut in the middle at a `/` so the
/// file name stays (`/usr/lib/…/libc.so.6`, as the rows of a view of
/// libraries differ at their end); where the name alone does not fit, its
/// start and `…`. Text without a `/` is cut at its end.
pub fn cut_path(s: &str, width: usize) -> Cow<'_, str> {
    if columns(s) <= width {
        return Cow::Borrowed(s);
    }
    let Some(slash) = s.rfind('/') else { return cut(s, width) };
    let name = &s[slash..];
    // `…` and `/name`; what is left holds the start, up to a `/`.
    let Some(room) = width.checked_sub(1 + columns(name)) else {
        // No room for `…/`: the name after `…`, or its start.
        let name = &s[slash + 1..];
        if columns(name) < width {
            return Cow::Owned(format!("{ELLIPSIS}{name}"));
        }
        return cut(name, width);
    };
    let head = s[..slash]
        .char_indices()
        .rev()
        .find(|&(i, c)| c == '/' && columns(&s[..=i]) <= room)
        .map_or("", |(i, _)| &s[..=i]);
    Cow::Owned(format!("{head}{ELLIPSIS}{name}"))
}

/// `s` in at most `width` columns, cut at its start so its end stays: a
/// cgroup's leaf (`…/system.slice/nginx.service`), at a `/` where one
/// leaves room; else `…` and as much of the end as fits.
pub fn cut_left(s: &str, width: usize) -> Cow<'_, str> {
    if columns(s) <= width {
        return Cow::Borrowed(s);
    }
    let room = width.saturating_sub(1);
    let at_slash = s.char_indices().find(|&(i, c)| c == '/' && columns(&s[i..]) <= room);
    if let Some((i, _)) = at_slash {
        return Cow::Owned(format!("{ELLIPSIS}{}", &s[i..]));
    }
    let mut used = 0;
    let mut start = s.len();
    for (i, c) in s.char_indices().rev() {
        let w = char_columns(c);
        if used + w > room {
            break;
        }
        used += w;
        start = i;
    }
    if width == 0 {
        return Cow::Borrowed("");
    }
    Cow::Owned(format!("{ELLIPSIS}{}", &s[start..]))
}

/// `s` cut to `width` when there is one.
pub fn fit(s: &str, width: Option<usize>) -> Cow<'_, str> {
    match width {
        Some(w) => cut(s, w),
        None => Cow::Borrowed(s),
    }
}

/// `s` padded with spaces on the right to `width` columns.
pub fn pad_right(s: &str, width: usize) -> String {
    let mut out = s.to_string();
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(columns(s))));
    out
}

/// `s` padded with spaces on the left to `width` columns.
pub fn pad_left(s: &str, width: usize) -> String {
    let mut out: String = std::iter::repeat_n(' ', width.saturating_sub(columns(s))).collect();
    out.push_str(s);
    out
}

/// `text` after `prefix`, wrapped at spaces to `width` columns with the
/// following lines indented under the text; one line when `width` is
/// `None`. A word longer than a line is broken where the line ends.
/// Every line ends in a newline.
pub fn wrap(prefix: &str, text: &str, width: Option<usize>) -> String {
    let Some(width) = width else {
        return format!("{prefix}{text}\n");
    };
    let indent = columns(prefix);
    // Too narrow to indent usefully: no indent at all.
    let indent = if indent + 10 > width { 0 } else { indent };
    let mut out = String::from(prefix);
    let mut used = columns(prefix);
    let mut line_has_word = false;
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let w = columns(word);
        if line_has_word && used + 1 + w > width {
            out.push('\n');
            out.extend(std::iter::repeat_n(' ', indent));
            used = indent;
        } else if line_has_word {
            out.push(' ');
            used += 1;
        }
        // A word wider than what is left of a fresh line: broken by columns.
        for c in word.chars() {
            let cw = char_columns(c);
            if used + cw > width && used > indent {
                out.push('\n');
                out.extend(std::iter::repeat_n(' ', indent));
                used = indent;
            }
            out.push(c);
            used += cw;
        }
        line_has_word = true;
    }
    out.push('\n');
    out
}

/// Every line of `text` fitted to `width`: a rule of `-` and a table's
/// row (three or more gaps of two spaces) are cut with `…`, a longer line
/// of text wrapped with its following lines indented under where its text
/// starts (after its label and figure: the last double space that leaves
/// 20 columns for the text); unchanged when `width` is `None`.
pub fn fit_lines(text: &str, width: Option<usize>) -> String {
    let Some(w) = width else { return text.to_string() };
    let mut out = String::with_capacity(text.len() + 64);
    for line in text.lines() {
        if columns(line) <= w {
            out.push_str(line);
            out.push('\n');
        } else if line.chars().all(|c| c == '-' || c == '=') {
            out.push_str(&line[..w]);
            out.push('\n');
        } else if gaps(line.trim_start()) >= 3 {
            // A table's row (columns apart by runs of spaces): cut, as the
            // tables cut themselves, rather than spread over lines.
            out.push_str(&cut(line, w));
            out.push('\n');
        } else {
            let lead = line.len() - line.trim_start().len();
            let split = line[lead..]
                .match_indices("  ")
                .map(|(i, _)| lead + i + 2)
                .take_while(|&end| columns(&line[..end]) + 20 <= w)
                .last()
                .unwrap_or(lead);
            let (prefix, rest) = line.split_at(split);
            out.push_str(&wrap(prefix, rest.trim_start(), width));
        }
    }
    out
}

/// Runs of two or more spaces inside `s`: the gaps between table columns.
fn gaps(s: &str) -> usize {
    s.trim_end().split("  ").filter(|part| !part.trim().is_empty()).count().saturating_sub(1)
}

/// [`fit_lines`] on bytes: a line that is not UTF-8 is left as it is.
pub fn fit_bytes(text: &[u8], width: Option<usize>) -> Vec<u8> {
    if width.is_none() {
        return text.to_vec();
    }
    let mut out = Vec::with_capacity(text.len() + 64);
    for line in text.split_inclusive(|&b| b == b'\n') {
        match std::str::from_utf8(line) {
            Ok(s) => out.extend_from_slice(fit_lines(s, width).as_bytes()),
            Err(_) => out.extend_from_slice(line),
        }
    }
    out
}

/// A rule of `-` under a table `table_width` columns wide, no wider than
/// the output (and never wider than 120 when the width is unknown).
pub fn rule(table_width: usize, width: Option<usize>) -> String {
    "-".repeat(table_width.min(width.unwrap_or(120)))
}

/// The short label of a command line for a narrow column: the program's
/// name (the first word's last path part) and, when given, the argument
/// that tells this process from its siblings, then the other arguments:
/// `chromium --type=renderer --crashpad-handler-pid=0 …`.
pub fn command_label(command: &str, distinguishing: Option<&str>) -> String {
    let words: Vec<&str> = command.split(' ').collect();
    let first = words[0];
    let program =
        if first.starts_with('[') { first } else { first.rsplit('/').next().unwrap_or(first) };
    let mut rest = &words[1..];
    let mut out = program.to_string();
    let mut tail: Vec<&str> = rest.to_vec();
    if let Some(d) = distinguishing {
        let d: Vec<&str> = d.split(' ').collect();
        if let Some(at) = rest.windows(d.len()).position(|w| w == d.as_slice()) {
            out.push(' ');
            out.push_str(&d.join(" "));
            tail = rest[..at].iter().chain(&rest[at + d.len()..]).copied().collect();
        }
    }
    rest = &tail;
    for w in rest {
        out.push(' ');
        out.push_str(w);
    }
    out
}

/// For each command line, the option that tells it apart from the other
/// processes of the same program in `commands` (a multi-process program:
/// the browser, its renderers, its GPU process): its first option (a
/// word starting with `-`) that not every process of the program has.
/// `None` for a program with one process, or nothing that differs.
pub fn distinguishing(commands: &[String]) -> Vec<Option<String>> {
    use std::collections::{HashMap, HashSet};
    let first = |c: &str| c.split(' ').next().unwrap_or("").to_string();
    let mut by_program: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, c) in commands.iter().enumerate() {
        by_program.entry(first(c)).or_default().push(i);
    }
    let options: Vec<Vec<String>> = commands.iter().map(|c| options(c)).collect();
    let mut out = vec![None; commands.len()];
    for members in by_program.values().filter(|m| m.len() > 1) {
        // How many of the program's processes have each option: one that
        // fewer than all have tells its processes apart (linear time, for
        // thousands of workers of one server too).
        let mut having: HashMap<&str, usize> = HashMap::new();
        for &i in members {
            let mut seen = HashSet::new();
            for o in options[i].iter().filter(|o| seen.insert(o.as_str())) {
                *having.entry(o.as_str()).or_default() += 1;
            }
        }
        for &i in members {
            out[i] = options[i].iter().find(|o| having[o.as_str()] < members.len()).cloned();
        }
    }
    out
}

/// The options of a command line, each with its value when the value is
/// the next word (`--crate-type bin`) rather than after `=`.
fn options(command: &str) -> Vec<String> {
    let words: Vec<&str> = command.split(' ').skip(1).collect();
    let mut out = Vec::new();
    for (at, w) in words.iter().enumerate() {
        if !(w.starts_with('-') && w.len() > 1) {
            continue;
        }
        match words.get(at + 1) {
            Some(v) if !w.contains('=') && !v.starts_with('-') && !v.is_empty() => {
                out.push(format!("{w} {v}"))
            }
            _ => out.push(w.to_string()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_what_the_terminal_draws() {
        assert_eq!(columns("abc"), 3);
        assert_eq!(columns("内存"), 4);
        assert_eq!(columns("e\u{301}"), 1);
    }

    #[test]
    fn cut_marks_the_cut_and_keeps_wide_characters_whole() {
        assert_eq!(cut("python3 -c x", 20), "python3 -c x");
        assert_eq!(cut("python3 -c import", 10), "python3 -…");
        assert_eq!(columns(&cut("python3 -c import", 10)), 10);
        // 内 is two columns: 5 columns hold 内内 and the mark, not a half.
        assert_eq!(cut("内内内内", 5), "内内…");
        assert_eq!(cut("内内内内", 6), "内内…");
        assert_eq!(columns(&cut("内内内内", 6)), 5);
        assert_eq!(cut("abc", 0), "");
    }

    #[test]
    fn paths_are_cut_in_the_middle_and_cgroups_from_the_left() {
        let libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
        assert_eq!(cut_path(libc, 40), libc);
        assert_eq!(cut_path(libc, 20), "/usr/lib/…/libc.so.6");
        assert_eq!(cut_path(libc, 16), "/usr/…/libc.so.6");
        assert_eq!(cut_path(libc, 11), "…/libc.so.6");
        assert_eq!(cut_path(libc, 10), "…libc.so.6");
        assert_eq!(cut_path(libc, 6), "libc.…");
        assert_eq!(cut_path("[anon:some long name]", 10), "[anon:som…");
        assert!([20, 16, 11, 6].iter().all(|&w| columns(&cut_path(libc, w)) <= w));
        let unit = "/system.slice/docker-0123456789abcdef.scope";
        assert_eq!(cut_left(unit, 50), unit);
        assert_eq!(cut_left(unit, 36), "…/docker-0123456789abcdef.scope");
        assert_eq!(cut_left(unit, 12), "…bcdef.scope");
        assert_eq!(cut_left("内内内内", 5), "…内内");
        assert_eq!(cut_left("abc", 0), "");
    }

    #[test]
    fn pads_by_columns() {
        assert_eq!(pad_right("内", 4), "内  ");
        assert_eq!(pad_left("内", 4), "  内");
    }

    #[test]
    fn notes_wrap_under_their_text() {
        let text = "USAGE is what the kernel charges the cgroup and what LIMIT acts on";
        let s = wrap("note: ", text, Some(30));
        for line in s.lines() {
            assert!(columns(line) <= 30, "{line:?}");
        }
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], "note: USAGE is what the kernel");
        assert!(lines[1..].iter().all(|l| l.starts_with("      ") && !l.starts_with("       ")));
        let words: Vec<&str> = s.split_whitespace().collect();
        assert_eq!(words[1..].join(" "), text);
        assert_eq!(wrap("note: ", text, None), format!("note: {text}\n"));
        // A long path is broken where the line ends.
        let long = format!("see /{}", "x".repeat(50));
        assert!(wrap("note: ", &long, Some(30)).lines().all(|l| columns(l) <= 30));
    }

    #[test]
    fn long_lines_wrap_under_their_text() {
        let text = "machine (from meminfo): total 23.5G, used 759M, buff/cache 1.9G\n  kernel         216M  slab_reclaimable 148M, kernel_stack 3.4M, page_tables 9.8M\n------------------------------------------------------------\n";
        let s = fit_lines(text, Some(50));
        assert!(s.lines().all(|l| columns(l) <= 50), "{s}");
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], "machine (from meminfo): total 23.5G, used 759M,");
        assert_eq!(lines[1], "buff/cache 1.9G");
        assert_eq!(lines[2], "  kernel         216M  slab_reclaimable 148M,");
        assert_eq!(lines[3], format!("{}kernel_stack 3.4M,", " ".repeat(23)));
        assert_eq!(lines[4], format!("{}page_tables 9.8M", " ".repeat(23)));
        assert_eq!(lines[5], "-".repeat(50));
        assert_eq!(fit_lines(text, None), text);
        assert_eq!(fit_lines(text, Some(100)), text);
        let row = "IOSurface                 8     2.0T      1.5T   1.5T  16.0K 1.5T 4.0M 4.0M\n";
        assert_eq!(fit_lines(row, Some(40)), "IOSurface                 8     2.0T   …\n");
        assert_eq!(fit_bytes(b"\xff long line of bytes\n", Some(5)), b"\xff long line of bytes\n");
    }

    #[test]
    fn rules_fit_the_width() {
        assert_eq!(rule(200, Some(80)).len(), 80);
        assert_eq!(rule(50, Some(80)).len(), 50);
        assert_eq!(rule(200, None).len(), 120);
    }

    #[test]
    fn chromium_processes_are_told_apart() {
        let commands: Vec<String> = [
            "/usr/lib/chromium/chromium --headless --no-sandbox about:blank",
            "/usr/lib/chromium/chromium --type=renderer --no-sandbox --renderer-client-id=7",
            "/usr/lib/chromium/chromium --type=gpu-process --no-sandbox",
            "/usr/bin/python3 -c import time",
        ]
        .map(String::from)
        .into();
        let d = distinguishing(&commands);
        assert_eq!(d[0].as_deref(), Some("--headless"));
        assert_eq!(d[1].as_deref(), Some("--type=renderer"));
        assert_eq!(d[2].as_deref(), Some("--type=gpu-process"));
        assert_eq!(d[3], None);
        assert_eq!(
            command_label(&commands[1], d[1].as_deref()),
            "chromium --type=renderer --no-sandbox --renderer-client-id=7"
        );
        assert_eq!(
            command_label("/usr/lib/x/app --a --type=utility --b", Some("--type=utility")),
            "app --type=utility --a --b"
        );
        assert_eq!(command_label("[kthreadd]", None), "[kthreadd]");
        // An option's own value moves with it.
        let rustc: Vec<String> =
            ["/bin/rustc --crate-name a --crate-type bin", "/bin/rustc --crate-name b --test"]
                .map(String::from)
                .into();
        let d = distinguishing(&rustc);
        assert_eq!(d[0].as_deref(), Some("--crate-name a"));
        assert_eq!(
            command_label(&rustc[0], d[0].as_deref()),
            "rustc --crate-name a --crate-type bin"
        );
        assert_eq!(command_label(&rustc[1], d[1].as_deref()), "rustc --crate-name b --test");
    }
}
