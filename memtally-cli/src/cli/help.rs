//! The `--help` texts after the options (examples, the categories, the
//! explorer's keys) fitted to the width help is printed at, each wrapped
//! line under the start of its own description: clap wraps them too, but
//! from the line's first column, so an example's description would go on
//! under the command instead of beside it.

use clap::{Command, CommandFactory, FromArgMatches};

use crate::cli::Cli;
use crate::render::width::columns;

/// Width when neither `COLUMNS` nor a terminal says one: clap's own.
const DEFAULT_WIDTH: usize = 100;

/// Parses the command line; help, when asked for, has every after-help
/// text wrapped for the output's `width` (clap exits on `--help` and on a
/// usage error).
///
/// The texts are wrapped only when help is printed: wrapping all of them
/// on every start was 0.65 M instructions (callgrind): `top --pid 1
/// --format json` 2.76 M -> 2.11 M, `show --format json` of 1,000
/// mappings 17.15 M -> 16.51 M.
pub fn parse(width: Option<usize>) -> Cli {
    let width = width.unwrap_or(DEFAULT_WIDTH);
    let matches = match Cli::command().term_width(width).try_get_matches() {
        Ok(m) => m,
        Err(e) if is_help(e.kind()) => wrapped(Cli::command(), width).get_matches(),
        Err(e) => e.exit(),
    };
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

/// Whether clap stopped to print help (`--help`, `-h`, `help`, or a
/// command that needs a subcommand given none): what shows the texts.
fn is_help(kind: clap::error::ErrorKind) -> bool {
    use clap::error::ErrorKind::{DisplayHelp, DisplayHelpOnMissingArgumentOrSubcommand};
    matches!(kind, DisplayHelp | DisplayHelpOnMissingArgumentOrSubcommand)
}

/// `cmd` and its subcommands with their after-help texts [`hang`]ed at
/// `width`, and clap told the same width.
fn wrapped(cmd: Command, width: usize) -> Command {
    let mut cmd = cmd.term_width(width);
    if let Some(text) = cmd.get_after_help().map(|t| t.to_string()) {
        cmd = cmd.after_help(hang(&text, width));
    }
    if let Some(text) = cmd.get_after_long_help().map(|t| t.to_string()) {
        cmd = cmd.after_long_help(hang(&text, width));
    }
    cmd.mut_subcommands(|sub| wrapped(sub, width))
}

/// `text` with each line longer than `width` wrapped at spaces, its
/// continuation lines starting where its description does: after the
/// first run of two or more spaces that follows the line's own text
/// (`  memtally top --by program   processes of one program…`), or, in a
/// line without one, at its own indentation. Where a description column
/// would leave under 16 columns (or less than the longest word), the
/// continuation goes 4 columns in.
/// Prose (lines that start in the first column, after one that does and
/// is no heading) is one paragraph, wrapped as a whole.
pub fn hang(text: &str, width: usize) -> String {
    let mut out = String::new();
    for line in paragraphs(text) {
        let line = line.as_str();
        if columns(line) <= width {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let mut at = description_column(line).unwrap_or(indent);
        let longest = words(line).iter().map(|w| columns(w.trim_start())).max().unwrap_or(0);
        if width.saturating_sub(at) < 16.max(longest) {
            at = (indent + 4).min(width / 2);
        }
        let mut current = String::new();
        for word in words(line) {
            let candidate = columns(&current) + 1 + columns(word);
            if !current.trim().is_empty() && candidate > width {
                out.push_str(current.trim_end());
                out.push('\n');
                current = " ".repeat(at);
                current.push_str(word.trim_start());
                continue;
            }
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(word);
        }
        out.push_str(current.trim_end());
        out.push('\n');
    }
    // `lines` drops a last newline; keep the text's own end.
    if !text.ends_with('\n') {
        out.pop();
    }
    out
}

/// The lines of `text`, each run of prose lines (starting in the first
/// column, the first not a heading ending in `:`) joined into one.
fn paragraphs(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let prose = |l: &str| !l.is_empty() && !l.starts_with(' ');
    for line in text.lines() {
        match out.last_mut() {
            Some(last) if prose(line) && prose(last) && !last.ends_with(':') => {
                last.push(' ');
                last.push_str(line);
            }
            _ => out.push(line.to_string()),
        }
    }
    out
}

/// Where the description of an item line starts: after the first run of
/// two or more spaces past the line's indentation.
fn description_column(line: &str) -> Option<usize> {
    let indent = line.len() - line.trim_start().len();
    let gap = line[indent..].find("  ")? + indent;
    let start = gap + line[gap..].len() - line[gap..].trim_start().len();
    (start < line.len()).then(|| columns(&line[..start]))
}

/// The line's words, each with the spaces before it but one (the
/// leading indentation and the gap before a description stay with the
/// word after them), so joining them with one space gives the line back.
fn words(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = line.as_bytes();
    for i in 1..bytes.len() {
        if bytes[i] == b' ' && bytes[i - 1] != b' ' {
            out.push(&line[start..i]);
            start = i + 1;
        }
    }
    if start < line.len() {
        out.push(&line[start..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_example_wraps_under_its_description() {
        let text = "Examples:\n  memtally show PID --pages         page states per category (LRU, referenced, THP, KSM, dirty)\n  memtally ui   short";
        let got = hang(text, 60);
        assert_eq!(
            got,
            "Examples:\n  memtally show PID --pages         page states per category\n                                    (LRU, referenced, THP,\n                                    KSM, dirty)\n  memtally ui   short"
        );
    }

    #[test]
    fn prose_wraps_at_its_indentation_and_narrow_columns_go_four_in() {
        let prose = hang("  one two three four five six seven eight nine ten", 30);
        assert_eq!(prose, "  one two three four five six\n  seven eight nine ten");
        let narrow = hang("  memtally capture PID -o DIR       record /proc files", 40);
        assert_eq!(narrow, "  memtally capture PID -o DIR\n      record /proc files");
    }
}
