//! `memtally ui` in a real terminal: tmux at a fixed size, keys sent with
//! send-keys, screens read with capture-pane; a live child with a known
//! 64 MiB private mapping, and a recorded tree whose screens are exact.

use std::path::Path;

use crate::support::tmux::{child_of, Tmux};
use crate::support::{repo, spawn, Mapping, MIB};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_memtally")
}

/// tmux, or a printed reason to skip (CI installs it: `.ci/run`).
fn tmux(width: u16, height: u16, dir: &Path) -> Option<Tmux> {
    if !Tmux::available() {
        eprintln!("skipped: tmux is not installed");
        return None;
    }
    Some(Tmux::start(width, height, dir))
}

/// The cells of the screen row that starts with `label` (after spaces).
fn row<'a>(screen: &'a str, label: &str) -> Vec<&'a str> {
    let line = screen
        .lines()
        .find(|l| l.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no row {label:?} on the screen:\n{screen}"));
    line.trim_start()[label.len()..].split_whitespace().collect()
}

/// Sets the process filter to `text` (clearing the one before), waiting
/// for each step to show: an Escape followed at once by another key reads
/// as Alt and that key, in any terminal.
fn filter(t: &Tmux, text: &str) {
    if t.screen().contains("filter: ") {
        t.keys(&["Escape"]);
        t.wait_for("the filter cleared", |s| !s.contains("filter: "));
    }
    t.text("/");
    t.wait_text("(Enter keeps, Esc clears)");
    t.text(text);
    t.wait_text(&format!("filter: {text}█"));
    t.keys(&["Enter"]);
    t.wait_for("the filter kept", |s| s.contains(&format!("filter: {text}  sort")));
}

/// The lines of the process rows on a process-level screen.
fn process_rows(screen: &str) -> Vec<&str> {
    let lines: Vec<&str> = screen.lines().collect();
    // Title and header above; the note and key lines below.
    lines[2.min(lines.len())..lines.len().saturating_sub(2).max(2.min(lines.len()))]
        .iter()
        .copied()
        .filter(|l| l.trim_start().chars().next().is_some_and(|c| c.is_ascii_digit()))
        .collect()
}

/// A live process with a known 64 MiB private allocation appears, is
/// found with `/`, opens, and its heap category reads 64.0M private dirty;
/// the forked child of the test's own helper shows its 256 MiB mapping
/// first (larger than the harness's heap arenas it also maps: at 64 MiB
/// one of 65.7M came first under a full run).
#[test]
fn a_live_child_is_found_opened_and_its_heap_reads_64m() {
    let child = crate::support::lone::lone(64 * MIB);
    let forked = spawn(Mapping::Anonymous(256 * MIB));
    let Some(t) = tmux(80, 24, &repo()) else { return };
    t.line(&format!("{} ui", bin()));
    t.wait_text("machine (from meminfo)");
    t.keys(&["Enter"]);
    t.wait_text("PID USER");
    // By name: the C program's file name.
    filter(&t, "lone");
    let pid = child.child.0.id().to_string();
    let s = t.wait_for("the child's row", |s| {
        process_rows(s).iter().any(|l| l.trim_start().starts_with(&pid))
    });
    for l in process_rows(&s) {
        let shown = l.split_whitespace().next().unwrap();
        let cmdline = std::fs::read(format!("/proc/{shown}/cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).into_owned();
        assert!(
            cmdline.contains("lone") || cmdline.is_empty(),
            "only matching rows ({shown}: {cmdline:?}):\n{s}"
        );
    }
    // By PID: exactly its row.
    filter(&t, &pid);
    let s = t.wait_for("the child's row alone", |s| {
        let rows = process_rows(s);
        rows.len() == 1 && rows[0].trim_start().starts_with(&pid)
    });
    let cells = row(&s, &pid);
    // USER USS PSS RSS SWAP DIRTY: USS, PSS and dirty are 64 MiB and the
    // program's few pages of its own.
    for i in [1, 2, 5] {
        assert!(cells[i].starts_with("64."), "{s}");
    }
    t.keys(&["Enter"]);
    let s = t.wait_text("heap / anon rw");
    let heap = row(&s, "heap / anon rw");
    assert_eq!(heap[0], "64.0M", "heap PRIV DIRTY:\n{s}");
    assert_eq!(heap[2], "64.0M", "heap RSS:\n{s}");
    // Its mappings: the 64 MiB one first, every size below it.
    t.keys(&["Enter"]);
    let s = t.wait_text("every size of the selected mapping");
    assert!(s.contains("size 64.0M") && s.contains("private_dirty 64.0M"), "{s}");
    t.keys(&["Escape"]);
    t.wait_text("heap / anon rw");

    // The forked helper: the same mapping, among the harness's heap pages.
    t.keys(&["Escape"]);
    t.wait_text("PID USER");
    filter(&t, &forked.pid.to_string());
    let fpid = forked.pid.to_string();
    t.wait_for("the forked child's row", |s| {
        process_rows(s).iter().any(|l| l.trim_start().starts_with(&fpid))
    });
    t.keys(&["Enter"]);
    let s = t.wait_text("heap / anon rw");
    // At least the 256 MiB: the harness's own heap pages it has written
    // since the fork are private to the child too, and how many depends
    // on what the other tests were doing.
    let heap = row(&s, "heap / anon rw");
    let mib = heap[0].strip_suffix('M').and_then(|m| m.parse::<f64>().ok());
    assert!(mib.is_some_and(|m| m >= 256.0), "forked child's heap PRIV DIRTY:\n{s}");
    t.keys(&["Enter"]);
    let s = t.wait_text("every size of the selected mapping");
    assert!(s.contains("size 256M") && s.contains("private_dirty 256M"), "{s}");
}

const RECORDED: &str = "testdata/fixtures/linux/python3-mmap/proc";
const RECORDED_PID: &str = "11364";

/// `memtally ui` on the recorded tree, refreshed once an hour (so one
/// sample: the screens do not move).
fn on_recorded(t: &Tmux) {
    t.line(&format!("{} --proc-root {RECORDED} ui --interval 1h", bin()));
    // The whole waterfall, not its first lines: a loaded machine has been
    // seen to capture the screen while it was still being drawn.
    t.wait_for("the machine screen", |s| {
        s.contains("machine (from meminfo)") && s.contains("unexplained")
    });
}

/// Compares a screen with `testdata/golden/ui/NAME.txt`;
/// `MEMTALLY_WRITE_GOLDEN=1` writes it instead (then review the diff).
fn golden(name: &str, screen: &str) {
    let path = repo().join("testdata/golden/ui").join(format!("{name}.txt"));
    if std::env::var_os("MEMTALLY_WRITE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, screen).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(screen, want, "screen {name} differs from {}; it is:\n{screen}", path.display());
}

/// Waits until the screen is exactly the golden one (a redraw may take a
/// moment), then checks it.
fn wait_golden(t: &Tmux, name: &str) -> String {
    let path = repo().join("testdata/golden/ui").join(format!("{name}.txt"));
    if let Ok(want) = std::fs::read_to_string(&path) {
        if std::env::var_os("MEMTALLY_WRITE_GOLDEN").is_none() {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                t.wait_for(name, |s| s == want)
            }));
        }
    }
    let s = t.settled();
    golden(name, &s);
    s
}

/// Every level of the recorded process at both sizes, exactly.
#[test]
fn recorded_screens_are_exact_at_80x24_and_200x50() {
    // Both sizes side by side: each its own terminal on the recording.
    std::thread::scope(|s| {
        for (w, h) in [(80, 24), (200, 50)] {
            s.spawn(move || recorded_screens_at(w, h));
        }
    });
}

/// [`recorded_screens_are_exact_at_80x24_and_200x50`] at `w`x`h`.
fn recorded_screens_at(w: u16, h: u16) {
    let Some(t) = tmux(w, h, &repo()) else { return };
    on_recorded(&t);
    wait_golden(&t, &format!("machine-{w}x{h}"));
    t.keys(&["Enter"]);
    t.wait_text("PID USER");
    wait_golden(&t, &format!("processes-{w}x{h}"));
    t.keys(&["Enter"]);
    t.wait_text("heap / anon rw");
    wait_golden(&t, &format!("categories-{w}x{h}"));
    t.keys(&["Enter"]);
    t.wait_text("every size of the selected mapping");
    wait_golden(&t, &format!("heap-mappings-{w}x{h}"));
    t.keys(&["Escape"]);
    t.wait_text("heap / anon rw");
    t.keys(&["Escape"]);
    t.wait_text("PID USER");
    t.keys(&["Escape"]);
    t.wait_text("machine (from meminfo)");
    t.keys(&["q"]);
    t.wait_for("the prompt back", |s| s.lines().any(|l| l == "$"));
}

/// The cells of a row of a `show`/`top` table printed by the CLI.
fn table_row(args: &[&str], label: &str) -> Vec<String> {
    let out = crate::support::memtally()
        .current_dir(repo())
        .args(args)
        .env("COLUMNS", "200")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    row(&text, label).into_iter().map(String::from).collect()
}

/// Each figure on the screens is the figure `show` and `top` print (the
/// same use cases), and the JSON's bytes in the same units.
#[test]
fn recorded_figures_equal_show_and_top() {
    let Some(t) = tmux(200, 50, &repo()) else { return };
    on_recorded(&t);
    let machine = t.screen();
    let top = crate::support::run_json(&[
        "--proc-root",
        &repo().join(RECORDED).to_string_lossy(),
        "top",
        "--format",
        "json",
    ]);
    let mib = |v: &serde_json::Value| format!("{:.1}M", v.as_u64().unwrap() as f64 / MIB as f64);
    // Every waterfall line as `memtally machine` prints it, and used as
    // top's picture heads it.
    for line in ["free", "process_anon", "process_file", "page_cache_unmapped", "unexplained"] {
        let want = table_row(&["--proc-root", RECORDED, "machine"], line);
        assert_eq!(row(&machine, line)[0], want[0], "{line}");
    }
    let used = top["machine"]["used"].as_u64().unwrap();
    let head = crate::support::memtally()
        .current_dir(repo())
        .args(["--proc-root", RECORDED, "top"])
        .output()
        .unwrap();
    let head = String::from_utf8_lossy(&head.stdout);
    let shown = row(&machine, "used")[0];
    assert!(head.contains(&format!("used {shown},")), "used {shown} ({used} B) not in:\n{head}");
    t.keys(&["Enter"]);
    let list = t.wait_text("PID USER");
    // USS PSS RSS SWAP DIRTY, as top prints them.
    let want = table_row(&["--proc-root", RECORDED, "top"], RECORDED_PID);
    let got = row(&list, RECORDED_PID);
    assert_eq!(got[1..6], want[1..6], "top's figures:\n{list}");
    assert_eq!(got[1], mib(&top["processes"][0]["uss"]));
    t.keys(&["Enter"]);
    // The total row is drawn last: a screen caught while drawing the rows
    // lacks some of them.
    let cats = t.wait_for("the categories", |s| s.lines().any(|l| l.starts_with("total ")));
    let show = crate::support::run_json(&[
        "--proc-root",
        &repo().join(RECORDED).to_string_lossy(),
        "show",
        RECORDED_PID,
        "--format",
        "json",
    ]);
    for c in show["categories"].as_array().unwrap() {
        let label = c["label"].as_str().unwrap();
        let want = table_row(&["--proc-root", RECORDED, "show", RECORDED_PID], label);
        let got = row(&cats, label);
        assert_eq!(got, want, "category {label}:\n{cats}");
    }
    let heap = row(&cats, "heap / anon rw");
    let json_heap =
        show["categories"].as_array().unwrap().iter().find(|c| c["category"] == "heap").unwrap();
    assert_eq!(heap[0], mib(&json_heap["private_dirty"]));
    assert_eq!(
        row(&cats, "total"),
        table_row(&["--proc-root", RECORDED, "show", RECORDED_PID], "total")
    );
}

/// Growing and shrinking the window redraws the whole screen: exactly
/// what a window of that size shows from the start.
#[test]
fn resizing_redraws_without_garbage() {
    let Some(t) = tmux(80, 24, &repo()) else { return };
    on_recorded(&t);
    t.keys(&["Enter"]);
    t.wait_text("PID USER");
    t.keys(&["Enter"]);
    wait_golden(&t, "categories-80x24");
    t.resize(200, 50);
    wait_golden(&t, "categories-200x50");
    t.resize(80, 24);
    wait_golden(&t, "categories-80x24");
}

/// After the explorer ends, the shell's screen is back as it was, the
/// terminal is in cooked mode with echo, and the cursor shows.
fn assert_restored(t: &Tmux) {
    let s = t.wait_for("the shell's screen back", |s| {
        s.contains("before-ui") && !s.contains("memtally ui ·")
    });
    assert_eq!(t.display("#{alternate_on}"), "0", "left the alternate screen:\n{s}");
    assert_eq!(t.display("#{cursor_flag}"), "1", "cursor shown");
    t.line("stty -a | tr ' ' '\\n' | grep -x -e icanon -e echo -e -icanon -e -echo | tr '\\n' ' '; echo");
    // The answer line alone (the command line typed above names both).
    t.wait_for("cooked mode with echo", |s| s.lines().any(|l| l.trim() == "icanon echo"));
}

/// `q` quits and leaves the terminal as it was.
#[test]
fn q_restores_the_terminal() {
    let Some(t) = tmux(80, 24, &repo()) else { return };
    t.line("echo before-ui");
    t.wait_text("before-ui");
    on_recorded(&t);
    assert_eq!(t.display("#{alternate_on}"), "1", "runs on the alternate screen");
    t.keys(&["Enter"]);
    t.wait_text("PID USER");
    t.keys(&["q"]);
    assert_restored(&t);
}

/// SIGTERM (a shutdown, `kill`) ends it the same way.
#[test]
fn sigterm_restores_the_terminal() {
    let Some(t) = tmux(80, 24, &repo()) else { return };
    t.line("echo before-ui");
    t.wait_text("before-ui");
    on_recorded(&t);
    let shell: u32 = t.display("#{pane_pid}").parse().unwrap();
    let ui = child_of(shell).expect("memtally runs under the pane's shell");
    assert_eq!(unsafe { libc::kill(ui as i32, libc::SIGTERM) }, 0);
    assert_restored(&t);
}

/// Without a terminal: one line pointing to `top`, and a usage exit.
#[test]
fn without_a_terminal_it_points_to_top() {
    let out = crate::support::memtally()
        .arg("ui")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("memtally: ") && err.contains("memtally top"), "{err}");
}

/// A process that exits while it is looked at says so, and its figures
/// stay on screen, greyed; in the list, its row stays, greyed, marked.
#[test]
fn an_exited_process_stays_on_screen_greyed() {
    let Some(t) = tmux(200, 50, &repo()) else { return };
    let child = spawn(Mapping::Anonymous(8 * MIB));
    let listed = spawn(Mapping::Anonymous(4 * MIB));
    let pid = child.pid.to_string();
    t.line(&format!("{} ui", bin()));
    t.wait_text("machine (from meminfo)");
    t.keys(&["Enter"]);
    t.wait_text("PID USER");
    filter(&t, &pid);
    t.wait_for("the child's row", |s| s.lines().any(|l| l.trim_start().starts_with(&pid)));
    t.keys(&["Enter"]);
    t.wait_text("heap / anon rw");
    drop(child);
    let s = t.wait_text(&format!("pid {pid} exited"));
    assert!(s.contains("heap / anon rw"), "the last figures stay:\n{s}");
    let styled = t.screen_styled();
    let heap = styled.lines().find(|l| l.contains("heap / anon rw")).unwrap();
    assert!(grey(heap), "greyed: {heap:?}");

    // In the list.
    t.keys(&["Escape"]);
    t.wait_text("PID USER");
    let other = listed.pid.to_string();
    filter(&t, &other);
    t.wait_for("the other child's row", |s| s.lines().any(|l| l.trim_start().starts_with(&other)));
    drop(listed);
    let s = t.wait_text("(exited)");
    let line = s.lines().find(|l| l.trim_start().starts_with(&other)).unwrap();
    assert!(line.contains("(exited)"), "{line}");
    let styled = t.screen_styled();
    let row = styled.lines().find(|l| l.contains("(exited)")).unwrap();
    assert!(grey(row), "greyed: {row:?}");
}

/// Whether a captured line is drawn in dark grey (colour 8).
fn grey(line: &str) -> bool {
    line.contains("\u{1b}[90m") || line.contains("\u{1b}[38;5;8m")
}

/// `w` writes what is shown as `memtally snapshot` would, in the current
/// directory, and says where.
#[test]
fn the_snapshot_key_writes_what_is_shown() {
    let dir = tempfile::tempdir().unwrap();
    let Some(t) = tmux(200, 50, dir.path()) else { return };
    t.line(&format!("{} --proc-root {} ui --interval 1h", bin(), repo().join(RECORDED).display()));
    t.wait_text("machine (from meminfo)");
    t.keys(&["Enter"]);
    t.wait_text("PID USER");
    t.keys(&["Enter"]);
    t.wait_text("heap / anon rw");
    t.keys(&["w"]);
    let s = t.wait_text("snapshot written to ");
    let name = s.lines().find_map(|l| l.split("snapshot written to ").nth(1)).unwrap().trim();
    let path = dir.path().join(name);
    // A snapshot file (read back: `read_snapshot` checks its format).
    let doc = crate::support::read_snapshot(&path);
    let pids: Vec<u64> =
        doc["processes"].as_array().unwrap().iter().map(|p| p["pid"].as_u64().unwrap()).collect();
    assert_eq!(pids, vec![11364]);
    // The same document `memtally snapshot` writes, but for the time.
    let cli = crate::support::run_snapshot(&[
        "--proc-root",
        &repo().join(RECORDED).to_string_lossy(),
        "snapshot",
        RECORDED_PID,
    ]);
    assert_eq!(doc["processes"], cli["processes"]);
    assert_eq!(doc["categories"], cli["categories"]);
}

/// `?` shows the keys, `s` cycles the sort, `g` the grouping, `/` filters by name.
#[test]
fn keys_sort_group_filter_and_help() {
    let Some(t) = tmux(80, 24, &repo()) else { return };
    on_recorded(&t);
    t.keys(&["?"]);
    t.wait_text("cycle the sort");
    t.keys(&["Escape"]);
    t.wait_for("help closed", |s| !s.contains("cycle the sort"));
    t.keys(&["Enter"]);
    t.wait_text("sort pss");
    t.keys(&["s"]);
    t.wait_text("sort uss");
    t.keys(&["g"]);
    // The title, once the rows of that grouping are read (the status line
    // says "grouped by program" at once).
    let s = t.wait_text("· by program");
    assert_eq!(row(&s, "python3")[0], "1", "one process:\n{s}");
    // Into the group, and back.
    t.keys(&["Enter"]);
    t.wait_text("program python3");
    t.keys(&["Escape"]);
    // Out of the group: the old screen may still show the PROGRAM header
    // while the key waits to be read, and an Escape read together with
    // the filter's `/` would be one Alt-/ key.
    t.wait_for("back at the programs", |s| s.contains("PROGRAM") && !s.contains("program python3"));
    filter(&t, "nothing-by-this-name");
    t.wait_for("no rows", |s| !s.contains("python3"));
    t.keys(&["Escape"]);
    t.wait_text("python3");
}
