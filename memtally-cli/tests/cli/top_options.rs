//! What smem, ps_mem, procrank and htop users reach for in `top`:
//! `--reverse`, `--min SIZE`, a `%MEM` column (`--percent`), `--list-pids` beside
//! `--by program`; on three exec'd children of 8, 16 and 32 MiB, piped
//! at 80 and 200 columns and in tmux at 80x24 and 200x50.

use unicode_width::UnicodeWidthStr;

use crate::support::lone::{lone, Lone};
use crate::support::tmux::Tmux;
use crate::support::{memtally, repo, run_json};

const MIB: usize = 1 << 20;

fn three() -> [Lone; 3] {
    [lone(8 * MIB), lone(16 * MIB), lone(32 * MIB)]
}

fn pid(l: &Lone) -> u32 {
    l.child.0.id()
}

fn selection(ls: &[Lone]) -> Vec<String> {
    ls.iter().flat_map(|l| ["--pid".to_string(), pid(l).to_string()]).collect()
}

fn piped(args: &[String], columns: usize) -> String {
    let out = memtally().args(args).env("COLUMNS", columns.to_string()).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The PIDs of the table's rows, top to bottom.
fn row_pids(text: &str) -> Vec<u32> {
    text.lines()
        .skip_while(|l| !l.trim_start().starts_with("PID"))
        .skip(1)
        .take_while(|l| !l.starts_with("---"))
        .filter_map(|l| l.split_whitespace().next()?.parse().ok())
        .collect()
}

fn args(ls: &[Lone], more: &[&str]) -> Vec<String> {
    let mut a = vec!["top".to_string()];
    a.extend(selection(ls));
    a.extend(more.iter().map(|s| s.to_string()));
    a
}

#[test]
fn reverse_and_min_order_and_filter_the_rows() {
    let ls = three();
    let (small, mid, big) = (pid(&ls[0]), pid(&ls[1]), pid(&ls[2]));
    for width in [80, 200] {
        let text = piped(&args(&ls, &[]), width);
        assert_eq!(row_pids(&text), vec![big, mid, small], "{text}");
        let text = piped(&args(&ls, &["--reverse"]), width);
        assert_eq!(row_pids(&text), vec![small, mid, big], "--reverse:\n{text}");
        let text = piped(&args(&ls, &["--min", "12M"]), width);
        assert_eq!(row_pids(&text), vec![big, mid], "--min 12M:\n{text}");
        assert!(text.contains("(1 more rows not shown"), "{text}");
        // The totals still hold the row left out.
        assert!(text.lines().any(|l| l.starts_with("total") && l.ends_with("3 processes")));
        assert!(text.lines().all(|l| l.width() <= width), "{text}");
    }
    let out = memtally().args(["top", "--by", "tree", "--reverse"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--reverse") && err.contains("--by tree"), "{err}");
    if !Tmux::available() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    for (w, h) in [(80u16, 24u16), (200, 50)] {
        let t = Tmux::start(w, h, &repo());
        let a = args(&ls, &["--reverse", "--min", "12M"]).join(" ");
        t.line(&format!("{} {a}", env!("CARGO_BIN_EXE_memtally")));
        t.wait_for("the prompt after top", |s| s.trim_end().ends_with("\n$"));
        let s = t.settled();
        assert_eq!(row_pids(&s), vec![mid, big], "{w}x{h}:\n{s}");
    }
}

#[test]
fn percent_of_ram_and_pids_per_program() {
    let ls = three();
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
    let total_kb: f64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap();
    let doc =
        run_json(&args(&ls, &["--format", "json"]).iter().map(String::as_str).collect::<Vec<_>>());
    for width in [80, 200] {
        let plain = piped(&args(&ls, &[]), width);
        assert!(!plain.contains("%MEM"), "asked for only:\n{plain}");
        let text = piped(&args(&ls, &["--percent"]), width);
        let header = text.lines().find(|l| l.trim_start().starts_with("PID")).unwrap();
        let at = header.find("%MEM").unwrap_or_else(|| panic!("no %MEM:\n{text}"));
        for l in &ls {
            let p =
                doc["processes"].as_array().unwrap().iter().find(|p| p["pid"] == pid(l)).unwrap();
            let want = format!("{:.1}", p["pss"].as_f64().unwrap() * 100.0 / (total_kb * 1024.0));
            let row =
                text.lines().find(|r| r.split_whitespace().next() == Some(&pid(l).to_string()));
            let row = row.unwrap();
            let cell = row[..at + 4].split_whitespace().last().unwrap();
            assert_eq!(cell, want, "{row}");
        }
        let text = piped(&args(&ls, &["--by", "program", "--list-pids"]), width);
        let row = text.lines().find(|l| l.starts_with("lone ")).unwrap_or_else(|| panic!("{text}"));
        let mut pids: Vec<u32> = ls.iter().map(pid).collect();
        pids.sort_unstable();
        let list = pids.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
        assert!(row.ends_with(&list), "{width}: {row:?}");
        assert!(text.lines().next().unwrap().ends_with("PIDS"), "{text}");
    }
}

/// `--oom`: each process row's OOM score, the kernel's own figure; a
/// child made the OOM killer's first pick (oom_score_adj 1000) shows the
/// score the kernel gives it.
#[test]
fn oom_column_shows_the_kernels_score() {
    let ls = three();
    let first = pid(&ls[0]);
    if std::fs::write(format!("/proc/{first}/oom_score_adj"), "1000").is_err() {
        eprintln!("skipped: cannot write oom_score_adj");
        return;
    }
    let score = |p: u32| std::fs::read_to_string(format!("/proc/{p}/oom_score")).unwrap();
    for width in [80, 200] {
        let text = piped(&args(&ls, &["--oom"]), width);
        let header = text.lines().find(|l| l.trim_start().starts_with("PID")).unwrap();
        let at = header.find(" OOM").unwrap_or_else(|| panic!("no OOM:\n{text}")) + 4;
        for l in &ls {
            let p = pid(l);
            let row = text.lines().find(|r| r.split_whitespace().next() == Some(&p.to_string()));
            let cell = row.unwrap()[..at].split_whitespace().last().unwrap().to_string();
            assert_eq!(cell, score(p).trim(), "{text}");
        }
        assert!(score(first).trim().parse::<u32>().unwrap() >= 1000, "adj 1000 counts");
        assert!(!piped(&args(&ls, &[]), width).contains(" OOM"), "asked for only");
    }
}
