//! Output fitted to the width, as a user sees it: piped with and without
//! `COLUMNS` (as `ps`), in tmux at 80 and 200 columns, a live process
//! whose name is CJK (two columns a character), a 2.7 KB command line, and
//! a recorded Chromium browser and renderer side by side.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use unicode_width::UnicodeWidthStr;

use crate::support::tmux::Tmux;
use crate::support::{memtally, repo, Killed};

fn cols(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// stdout of memtally with `COLUMNS` set to `columns` (or unset), piped.
fn piped(args: &[&str], columns: Option<usize>) -> String {
    let mut c = memtally();
    c.args(args);
    if let Some(n) = columns {
        c.env("COLUMNS", n.to_string());
    }
    let out = c.output().unwrap();
    assert!(out.status.success(), "memtally {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Starts `program args`, and waits until the kernel shows its new command line.
fn start(program: &Path, args: &[String]) -> Killed {
    let child = Command::new(program).args(args).stdout(Stdio::null()).spawn().unwrap();
    let pid = child.id();
    let want = program.to_string_lossy().into_owned();
    let start = Instant::now();
    loop {
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if cmdline.starts_with(want.as_bytes()) {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "{want} never ran");
        std::thread::sleep(Duration::from_millis(10));
    }
    Killed(child)
}

fn sleep_path() -> PathBuf {
    ["/usr/bin/sleep", "/bin/sleep"].iter().map(PathBuf::from).find(|p| p.exists()).expect("sleep")
}

/// `sleep` with a 2.7 KB command line: 600 seconds, then 1350 zeros.
fn long_sleeper() -> Killed {
    let mut args = vec!["600".to_string()];
    args.extend(std::iter::repeat_n("0".to_string(), 1350));
    start(&sleep_path(), &args)
}

/// The line of `text` whose first word is `pid`.
fn row_of(text: &str, pid: u32) -> &str {
    let pid = pid.to_string();
    text.lines()
        .find(|l| l.split_whitespace().next() == Some(pid.as_str()))
        .unwrap_or_else(|| panic!("no row for pid {pid}:\n{text}"))
}

#[test]
fn piped_output_follows_columns_and_is_whole_without_it() {
    let child = long_sleeper();
    let pid = child.0.id();
    let pid_s = pid.to_string();
    let whole = piped(&["top", "--pid", &pid_s], None);
    assert!(row_of(&whole, pid).len() > 2700, "no COLUMNS, piped: nothing is cut:\n{whole}");
    for width in [80, 200] {
        let text = piped(&["top", "--pid", &pid_s], Some(width));
        for line in text.lines() {
            assert!(
                cols(line) <= width,
                "COLUMNS={width}: a line of {} columns: {line:?}",
                cols(line)
            );
        }
        let row = row_of(&text, pid);
        assert_eq!(cols(row), width, "the row fills the width:\n{text}");
        assert!(row.ends_with('…'), "a cut is marked: {row:?}");
        assert!(row.contains("sleep 600 0 0"), "the program name and its arguments: {row:?}");
        // The rule under the rows is no wider than the output.
        let rule = text.lines().find(|l| l.starts_with("---")).unwrap();
        assert!(rule.len() <= width && rule.chars().all(|c| c == '-'), "{rule:?}");
    }
}

#[test]
fn show_cuts_a_long_command_line_to_the_width_and_json_keeps_it_whole() {
    let child = long_sleeper();
    let pid = child.0.id().to_string();
    let text = piped(&["show", &pid], Some(80));
    let heading = text.lines().next().unwrap();
    assert!(cols(heading) <= 80, "{heading:?}");
    assert!(heading.starts_with(&format!("pid {pid}  sleep 600 0 0")), "{heading:?}");
    assert!(heading.ends_with("…  (from smaps)"), "{heading:?}");
    for line in text.lines() {
        assert!(cols(line) <= 80, "{line:?}");
    }
    // Category names stay whole; columns that do not fit are left out whole.
    assert!(text.lines().any(|l| l.starts_with("file code  ")), "{text}");
    assert!(text.lines().skip(1).all(|l| !l.contains('…') || l.ends_with("  …")), "{text}");
    let json = crate::support::run_json(&["show", &pid, "--format", "json"]);
    let command = json["command"].as_str().unwrap();
    assert!(command.len() > 2700 && command.ends_with(" 0 0"), "JSON has the command whole");
    let regions = piped(&["show", &pid, "--regions"], Some(80));
    let head = regions.lines().nth(1).unwrap();
    assert!(!head.contains("PERMSPRIV"), "the headers run together: {head:?}");
    let words: Vec<&str> = head.split_whitespace().collect();
    assert_eq!(&words[..4], ["ADDRESS", "PERMS", "PRIV", "DIRTY"], "{head:?}");
    assert!(regions.lines().all(|l| cols(l) <= 80), "{regions}");
    // No figure is cut: a row ends after a whole figure and `  …`.
    for line in regions.lines().skip(2).filter(|l| l.ends_with('…')) {
        let before = line.trim_end_matches('…').trim_end();
        assert!(line.ends_with("  …") && before.ends_with(['0', 'K', 'M', 'G', '-']), "{line:?}");
    }
}

/// A live `sleep` run through a symlink whose name is CJK, beside one with
/// an ASCII name: the columns after the name line up on the screen.
#[test]
fn a_cjk_program_name_keeps_the_columns_aligned() {
    let dir = tempfile::tempdir().unwrap();
    let cjk = dir.path().join("内存计数器");
    let ascii = dir.path().join("ascii-counter");
    std::os::unix::fs::symlink(sleep_path(), &cjk).unwrap();
    std::os::unix::fs::symlink(sleep_path(), &ascii).unwrap();
    let a = start(&cjk, &["600".into()]);
    let b = start(&ascii, &["600".into()]);
    let (pa, pb) = (a.0.id().to_string(), b.0.id().to_string());
    let args = ["top", "--by", "program", "--pid", &pa, "--pid", &pb];
    // The display column where each row's PSS figure ends.
    let pss_end = |text: &str, name: &str| {
        let header = text.lines().next().unwrap();
        let line =
            text.lines().find(|l| l.starts_with(name)).unwrap_or_else(|| panic!("{name}:\n{text}"));
        let header_end = cols(&header[..header.find("PSS").unwrap() + 3]);
        let mut end = 0;
        let mut seen = 0;
        for (i, c) in line.char_indices() {
            if c != ' ' && line[i + c.len_utf8()..].starts_with(' ') {
                end = cols(&line[..i + c.len_utf8()]);
                seen += 1;
                if seen == 4 {
                    break;
                }
            }
        }
        (header_end, end)
    };
    for columns in [None, Some(200)] {
        let text = piped(&args, columns);
        let (h, e1) = pss_end(&text, "内存计数器");
        let (_, e2) = pss_end(&text, "ascii-counter");
        assert_eq!((e1, e2), (h, h), "PSS ends under its header in both rows:\n{text}");
    }
    // Narrow: the name is cut by columns, never through a character.
    let text = piped(&["top", "--pid", &pa, "--pid", &pb], Some(50));
    for line in text.lines() {
        assert!(cols(line) <= 50, "{line:?}");
    }
    let row = row_of(&text, a.0.id());
    assert!(row.contains("内存计数器 600") || row.contains('…'), "{row:?}");
}

#[test]
fn notes_wrap_to_the_width_under_their_text() {
    let text = piped(&["cgroup"], Some(60));
    let start = text.lines().position(|l| l.starts_with("note: ")).expect("the note");
    let note: Vec<&str> = text.lines().skip(start).collect();
    assert!(note.len() > 3, "{text}");
    for line in &note[1..] {
        assert!(line.starts_with("      ") && !line.starts_with("       "), "{line:?}");
    }
    assert!(note.iter().all(|l| cols(l) <= 60), "{text}");
}

/// `memtally top` in a real terminal, 80 and 200 columns wide: each line of
/// the table is one screen row, cut with `…` to the terminal (no `COLUMNS`
/// in that shell: the width comes from the terminal itself).
#[test]
fn top_fits_tmux_at_80_and_200_columns() {
    if !Tmux::available() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    let child = long_sleeper();
    let pid = child.0.id();
    let mut rows = Vec::new();
    for (width, height) in [(80u16, 24u16), (200, 50)] {
        let t = Tmux::start(width, height, &repo());
        t.line(&format!("{} top --pid {pid}; echo done", env!("CARGO_BIN_EXE_memtally")));
        let s = t.wait_for("top's output", |s| s.lines().any(|l| l == "done"));
        let row = row_of(&s, pid).to_string();
        assert_eq!(cols(&row), width as usize, "the row fills the terminal:\n{s}");
        assert!(row.ends_with('…'), "{row:?}");
        let next = s.lines().skip_while(|l| *l != row).nth(1).unwrap();
        assert!(next.starts_with("---") && next.chars().all(|c| c == '-'), "no wrapped rest:\n{s}");
        rows.push(row);
    }
    // The wider terminal shows more of the same command line.
    let command = |r: &str| r[r.find("sleep 600").unwrap()..].trim_end_matches('…').to_string();
    let (narrow, wide) = (command(&rows[0]), command(&rows[1]));
    assert!(wide.len() > narrow.len() && wide.starts_with(&narrow), "{rows:?}");
}
