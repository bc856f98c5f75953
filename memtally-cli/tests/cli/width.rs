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

/// The recorded Chromium browser and renderer in one `/proc` (both recorded
/// files copied unchanged): at 80 columns their rows read as what they are.
#[test]
fn chromium_rows_at_80_columns_tell_the_renderer_from_the_browser() {
    let tmp = tempfile::tempdir().unwrap();
    let proc = tmp.path().join("proc");
    std::fs::create_dir(&proc).unwrap();
    let fixtures = repo().join("testdata/fixtures/linux");
    for (name, pid) in [("chromium-browser", "11672"), ("chromium-renderer", "11755")] {
        let from = fixtures.join(name).join("proc").join(pid);
        std::fs::create_dir(proc.join(pid)).unwrap();
        for f in std::fs::read_dir(&from).unwrap() {
            let f = f.unwrap();
            std::fs::copy(f.path(), proc.join(pid).join(f.file_name())).unwrap();
        }
    }
    std::fs::copy(fixtures.join("chromium-browser/proc/meminfo"), proc.join("meminfo")).unwrap();
    let root = proc.to_string_lossy().into_owned();
    let text = piped(&["--proc-root", &root, "top"], Some(80));
    let renderer = row_of(&text, 11755);
    let browser = row_of(&text, 11672);
    assert!(renderer.contains("  chromium --type=renderer"), "{text}");
    // The browser has no --type: its first option the renderer lacks.
    assert!(browser.contains("  chromium --show-compon"), "{text}");
    assert!(!text.contains("/usr/lib/chromium/chromium --ty"), "{text}");
    for line in text.lines() {
        assert!(cols(line) <= 80, "{line:?}");
    }
    // Wide enough for the whole command line, it is printed whole.
    let wide = piped(&["--proc-root", &root, "top"], None);
    assert!(row_of(&wide, 11755).contains("/usr/lib/chromium/chromium --type=renderer"), "{wide}");
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

/// Every command's table output fits: the machine picture's explanations
/// wrap under their text, a vmmap report's wide tables are cut with `…`.
#[test]
fn machine_and_vmmap_reports_fit_the_width() {
    let root = repo().join("testdata/fixtures/linux/python3-mmap/proc");
    let root = root.to_str().unwrap();
    let whole = piped(&["--proc-root", root, "machine"], None);
    assert!(whole.lines().any(|l| cols(l) > 60), "the picture has long lines to fit:\n{whole}");
    let text = piped(&["--proc-root", root, "machine"], Some(60));
    assert!(text.lines().all(|l| cols(l) <= 60), "{text}");
    // Nothing is lost: the same words, wrapped.
    let words = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
    assert_eq!(words(&text), words(&whole));
    let vmmap = repo().join("testdata/fixtures/vmmap/04_modern_gpu_purge.txt");
    let report = piped(&["vmmap", vmmap.to_str().unwrap()], Some(80));
    assert!(report.lines().all(|l| cols(l) <= 80), "{report}");
    let row = report.lines().find(|l| l.starts_with("IOSurface  ")).unwrap();
    assert!(row.ends_with('…'), "a table row is cut, not wrapped: {row:?}");
}

/// The cells of a table line: the text between runs of two or more spaces.
fn cells(line: &str) -> Vec<&str> {
    line.split("  ").map(str::trim).filter(|c| !c.is_empty()).collect()
}

/// A figure as the tables print it: `64.0K`, `+1.2M`, `2.0M..4.0M`, `0 → 16.0K`, `12`.
fn is_figure(cell: &str) -> bool {
    cell.chars().any(|c| c.is_ascii_digit())
        && cell.chars().all(|c| c.is_ascii_digit() || ".KMGTPE+-−→· ".contains(c))
}

/// Whether `fitted`, a line of a table fitted to the width, shows `whole`
/// (the same line unfitted) faithfully: every cell the same, but for text
/// cells cut with `…` or shown by their first word (never a figure, never
/// a header) and whole columns left out on the right (`  …`). Histogram
/// bars are scaled to the width.
fn shows(fitted: &str, fitted_cells: &[&str], whole: &[&str]) -> bool {
    let (mut f, u) = (fitted_cells, whole);
    if let Some((&"…", rest)) = f.split_last() {
        f = rest;
        if !fitted.ends_with("  …") || f.len() >= u.len() {
            return false;
        }
    }
    let header = !u.iter().any(|c| is_figure(c));
    f.len() <= u.len()
        && f.iter().zip(u).all(|(f, u)| {
            let bar = |c: &str| c.trim_end_matches('…').chars().all(|c| c == '*');
            f == u
                || (bar(f) && bar(u))
                // A purge state's compact form: its code.
                || (!header && !is_figure(u) && u.split(' ').next() == Some(*f))
                || f.strip_suffix('…').is_some_and(|start| {
                    // A command's compact form starts with the program's
                    // name, its path left out (`chromium --type=…`).
                    let program = u.split(' ').next().unwrap_or(u);
                    let label = &u[program.rfind('/').map_or(0, |i| i + 1)..];
                    !header
                        && !is_figure(u)
                        && !start.is_empty()
                        && (u.starts_with(start) || label.starts_with(start))
                })
        })
}

/// Every line of `text` (fitted to `width`) is at most `width` display
/// columns, and every line that is cut, or is a table's row, shows a line
/// of `whole` (the same command unfitted) as [`shows`] says.
fn check_fitted(what: &str, text: &str, whole: &str, width: usize) {
    // The lines' cells, split once (not once a pair of lines).
    let whole: Vec<Vec<&str>> = whole.lines().map(cells).collect();
    for line in text.lines() {
        assert!(cols(line) <= width, "{what} at {width}: {} columns: {line:?}", cols(line));
        let fitted = cells(line);
        let table_row = fitted.len() >= 4 && !line.starts_with("  ");
        if line.contains('…') || table_row {
            assert!(
                whole.iter().any(|w| shows(line, &fitted, w)),
                "{what} at {width}: a figure or header is cut, or no line shows it whole: {line:?}\n{text}"
            );
        }
    }
}

/// The published vmmap files in ../shared/fixtures/vmmap, when present.
fn published_vmmap() -> Vec<String> {
    let Some(dir) = crate::support::shared().map(|s| s.join("fixtures/vmmap")) else {
        println!("skipping: ../shared/fixtures/vmmap is absent");
        return Vec::new();
    };
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .map(|d| d.map(|e| e.unwrap().path().display().to_string()).collect())
        .unwrap_or_default();
    files.retain(|f| f.ends_with(".txt"));
    files.sort();
    if files.is_empty() {
        println!("skipping: no vmmap files in {}", dir.display());
    }
    files
}

/// Every table of `memtally vmmap` (the default report: GPU memory by
/// purge state, footprint by type, the summary table; `--by`, `--types`,
/// histograms, `--regions`) on every published file, at 80 and 200
/// columns: no line wider, every figure shown whole, cuts only in text.
#[test]
fn vmmap_tables_fit_80_and_200_columns_with_every_figure_whole() {
    let files = published_vmmap();
    let views: [&[&str]; 5] = [
        &[],
        &["--histograms", "--regions"],
        &["--by", "detail"],
        &["--types", "", "--pow2"],
        &["--types", "MALLOC,IOAccelerator", "--by", "purge"],
    ];
    let mut cut = 0;
    for f in &files {
        for view in views {
            let mut args = vec!["vmmap", f.as_str()];
            args.extend(view);
            let whole = piped(&args, None);
            for width in [80, 200] {
                let text = piped(&args, Some(width));
                check_fitted(&format!("{args:?}"), &text, &whole, width);
                cut += text.matches('…').count();
            }
        }
    }
    assert!(files.is_empty() || cut > 100, "the files have tables to fit: {cut} cuts");
    // The GPU view of the Finder sample: the purge state narrows to its
    // code, the region type is cut, RECLAIMABLE is left out whole.
    let Some(finder) = files.iter().find(|f| f.contains("/12_")) else { return };
    let text = piped(&["vmmap", finder], Some(80));
    let row = text.lines().find(|l| l.starts_with("IOAccelerator (gra")).expect("the GPU row");
    assert!(row.contains("…  N  ") && row.ends_with("64.0K      64.0K  …"), "{text}");
}

/// `memtally diff` of two published vmmap files and `memtally gpu` on the
/// recorded GPU machine: the same rules at 80 and 200 columns.
#[test]
fn vmmap_diff_and_gpu_fit_80_and_200_columns_with_every_figure_whole() {
    let gpu_root = repo().join("testdata/fixtures/gpu/machine");
    let gpu = ["--proc-root", gpu_root.to_str().unwrap(), "gpu"];
    let whole = piped(&gpu, None);
    assert!(whole.lines().any(|l| cols(l) > 100), "the GPU tables are wide:\n{whole}");
    for width in [80, 200] {
        let text = piped(&gpu, Some(width));
        check_fitted("gpu", &text, &whole, width);
        // Device names stay whole.
        assert!(text.contains("panthor  /dev/dri/renderD129  "), "{text}");
    }
    let files = published_vmmap();
    let pick = |n: &str| files.iter().find(|f| f.contains(n)).cloned();
    let (Some(a), Some(b)) = (pick("/04_"), pick("/12_")) else { return };
    let diff = ["diff", a.as_str(), b.as_str()];
    let whole = piped(&diff, None);
    for width in [80, 200] {
        check_fitted("diff", &piped(&diff, Some(width)), &whole, width);
    }
}

/// `--seed-view` is the seed's compatibility format: never fitted, byte
/// for byte the same whatever COLUMNS says.
#[test]
fn vmmap_seed_view_is_never_fitted() {
    for f in published_vmmap() {
        let args = ["vmmap", f.as_str(), "--seed-view", "--types", ""];
        let whole = piped(&args, None);
        assert_eq!(piped(&args, Some(80)), whole, "{f}");
    }
    let own = repo().join("testdata/fixtures/vmmap/04_modern_gpu_purge.txt");
    let args = ["vmmap", own.to_str().unwrap(), "--seed-view"];
    let whole = piped(&args, None);
    assert!(whole.lines().any(|l| cols(l) > 80), "{whole}");
    assert_eq!(piped(&args, Some(80)), whole);
}
