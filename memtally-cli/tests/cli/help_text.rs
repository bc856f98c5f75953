//! Every `--help` and `-h`, at 80 and 60 columns: the text after the
//! options (examples, categories, keys) fits the width, and a wrapped
//! line of an item (`  memtally top --by program   processes of one …`)
//! goes on under the start of its description, not under the command.

use crate::support::{memtally, run};

/// Every command, as `memtally man --list` names them, and memtally itself.
fn commands() -> Vec<Vec<String>> {
    let pages = run(&["man", "--list"]);
    assert!(pages.status.success());
    let mut out = vec![Vec::new()];
    for l in String::from_utf8(pages.stdout).unwrap().lines() {
        if let Some(c) = l.strip_prefix("memtally-") {
            out.push(vec![c.to_string()]);
        }
    }
    assert!(out.len() > 10, "the commands are listed: {out:?}");
    out
}

fn indent(l: &str) -> usize {
    l.len() - l.trim_start().len()
}

/// Where an item line's description starts: after the first run of two
/// spaces past its indentation; `None` for a line that is no item.
fn description(l: &str) -> Option<usize> {
    let i = indent(l);
    let gap = l[i..].find("  ")? + i;
    let start = gap + l[gap..].len() - l[gap..].trim_start().len();
    (start < l.len()).then_some(start)
}

/// The after-help part of `help`: what follows the options (from the
/// first line in the first column after the last `Options:`).
fn after_help(help: &str) -> Vec<&str> {
    let lines: Vec<&str> = help.lines().collect();
    let options = lines.iter().rposition(|l| *l == "Options:").unwrap_or(0);
    let after = lines[options + 1..].iter().position(|l| !l.is_empty() && !l.starts_with(' '));
    after.map_or(Vec::new(), |a| lines[a + options + 1..].to_vec())
}

/// What is wrong with `narrow`, the after-help text at `width`, against
/// `wide`, the same unwrapped: each line that did not fit goes on in
/// pieces that hold its words, each piece under the start of its
/// description (its own indentation for prose; 4 columns in where the
/// description column leaves too little room), and none is wider.
fn misaligned(wide: &str, narrow: &str, width: usize) -> Vec<String> {
    let (wide, narrow) = (after_help(wide), after_help(narrow));
    let mut bad = Vec::new();
    let mut pieces = narrow.iter();
    for o in wide {
        let words: Vec<&str> = o.split_whitespace().collect();
        let Some(first) = pieces.next() else {
            bad.push(format!("missing: {o:?}"));
            break;
        };
        let mut got: Vec<&str> = first.split_whitespace().collect();
        let column = description(o).unwrap_or(indent(o));
        let narrowed = (indent(o) + 4).min(width / 2);
        while got.len() < words.len() {
            let Some(p) = pieces.next() else { break };
            if indent(p) != column && indent(p) != narrowed {
                bad.push(format!("not under its description (column {column}): {p:?}"));
            }
            got.extend(p.split_whitespace());
        }
        if got != words {
            bad.push(format!("{o:?} became {got:?}"));
        }
    }
    for l in &narrow {
        if l.chars().count() > width {
            bad.push(format!("wider than {width}: {l:?}"));
        }
    }
    bad
}

fn help(cmd: &[String], flag: &str, width: usize) -> String {
    let out = memtally().args(cmd).arg(flag).env("COLUMNS", width.to_string()).output().unwrap();
    assert!(out.status.success(), "{cmd:?} {flag}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn every_help_text_wraps_under_its_descriptions() {
    let mut bad = Vec::new();
    for cmd in commands() {
        for flag in ["--help", "-h"] {
            let wide = help(&cmd, flag, 1000);
            for width in [80, 60] {
                for b in misaligned(&wide, &help(&cmd, flag, width), width) {
                    bad.push(format!("memtally {} {flag} at {width}: {b}", cmd.join(" ")));
                }
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn the_checker_finds_a_line_wrapped_under_the_command() {
    let wide =
        "Options:\n  -h  help\n\nExamples:\n  memtally a    one two three\n  memtally b    four\n";
    let under_command = "Options:\n  -h  help\n\nExamples:\n  memtally a    one two\n  three\n  memtally b    four\n";
    assert_eq!(misaligned(wide, under_command, 24).len(), 1, "the continuation at column 2");
    let right = "Options:\n  -h  help\n\nExamples:\n  memtally a    one two\n                three\n  memtally b    four\n";
    assert_eq!(misaligned(wide, right, 24), Vec::<String>::new());
}
