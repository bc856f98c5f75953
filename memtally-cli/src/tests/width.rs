//! Tables and notes fitted to the width, in process on recorded trees and
//! the published vmmap files: `memtally ARGS` at 80, 60 or 200 columns
//! ([`run_at_width`]) against the same command unfitted. That the binary
//! takes the width from `COLUMNS` and the terminal, on live processes and
//! in tmux, is tested through it in tests/cli/width.rs.

use unicode_width::UnicodeWidthStr;

use super::{repo, run_at_width};

fn cols(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// stdout of `memtally ARGS` at `columns` (or unfitted, as piped without
/// `COLUMNS`), which must succeed.
fn piped(args: &[&str], columns: Option<usize>) -> String {
    let out = run_at_width(columns, args);
    assert!(out.status.success(), "memtally {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn row_of(text: &str, pid: u32) -> &str {
    let pid = pid.to_string();
    text.lines()
        .find(|l| l.split_whitespace().next() == Some(pid.as_str()))
        .unwrap_or_else(|| panic!("no row for pid {pid}:\n{text}"))
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
    let Some(dir) = super::shared().map(|s| s.join("fixtures/vmmap")) else {
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
/// for byte the same whatever the width.
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
