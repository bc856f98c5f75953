//! The README's screens are what the binary prints: each ```text block
//! after a `<!-- screen: pipe 80: ARGS -->` or `<!-- screen: tmux 80x24:
//! ARGS -->` marker is run again (piped with COLUMNS, or in tmux at that
//! size) and must be the same; so must each `<!-- screen: ui 80x24 then
//! KEY...: ARGS -->` (the explorer in tmux after those keys, its runs of
//! blank rows squeezed to one). `scripts/readme-screens.py` rewrites them.

use std::time::{Duration, Instant};

use crate::support::tmux::Tmux;
use crate::support::{memtally, repo};

struct Screen {
    marker: String,
    /// `Some((w, h))` for a terminal, else the piped width in `.1`.
    tmux: Option<(u16, u16)>,
    columns: usize,
    /// A full-screen `ui`: the keys pressed before the screen is taken.
    ui: Option<Vec<String>>,
    args: Vec<String>,
    block: Vec<String>,
}

/// Every marked screen of README.md, with the block under it.
fn screens() -> Vec<Screen> {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let lines: Vec<&str> = readme.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let Some(rest) = l.strip_prefix("<!-- screen: ").and_then(|r| r.strip_suffix(" -->"))
        else {
            continue;
        };
        let (how, args) = rest.split_once(": ").expect("a marker is `how: ARGS`");
        assert_eq!(lines.get(i + 1), Some(&"```text"), "{l}: a ```text block follows");
        let end = lines[i + 2..].iter().position(|l| *l == "```").expect("the block ends") + i + 2;
        let mut words = how.split(' ');
        let size = |s: Option<&str>| -> (u16, u16) {
            let (w, h) = s.and_then(|s| s.split_once('x')).expect("WxH");
            (w.parse().unwrap(), h.parse().unwrap())
        };
        let (tmux, columns, ui) = match words.next() {
            Some("pipe") => (None, words.next().unwrap().parse().unwrap(), None),
            Some("tmux") => {
                let (w, h) = size(words.next());
                (Some((w, h)), usize::from(w), None)
            }
            Some("ui") => {
                let (w, h) = size(words.next());
                let keys: Vec<String> = match words.next() {
                    Some("then") => words.by_ref().map(String::from).collect(),
                    None => Vec::new(),
                    Some(w) => panic!("{l}: `then KEY...` after the size, not {w:?}"),
                };
                (Some((w, h)), usize::from(w), Some(keys))
            }
            _ => panic!("{l}: pipe W, tmux WxH or ui WxH [then KEY...]"),
        };
        out.push(Screen {
            marker: l.to_string(),
            tmux,
            columns,
            ui,
            args: args.split_whitespace().map(String::from).collect(),
            block: lines[i + 2..end].iter().map(|s| s.to_string()).collect(),
        });
    }
    out
}

/// Runs of blank rows as one, trailing ones dropped (as `cat -s`), each
/// row's trailing spaces trimmed.
fn squeezed(screen: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for l in screen.lines().map(str::trim_end) {
        if !l.is_empty() || out.last().is_some_and(|p| !p.is_empty()) {
            out.push(l.to_string());
        }
    }
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    out
}

/// The screen once it stayed the same for `hold` (at most 60 s).
fn steady(t: &Tmux, hold: Duration) -> String {
    let start = Instant::now();
    let mut last = t.screen();
    let mut since = Instant::now();
    while since.elapsed() < hold && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(100));
        let now = t.screen();
        if now != last || now.starts_with("$ ") {
            since = Instant::now();
            last = now;
        }
    }
    last
}

/// The explorer's screen after `keys`, each pressed once the screen is
/// steady; the screen awaited until it equals `want` (a loaded machine
/// may take a while to draw the first read), else the last one.
fn explorer(t: &Tmux, s: &Screen, keys: &[String]) -> Vec<String> {
    t.line(&format!("{} {}", env!("CARGO_BIN_EXE_memtally"), s.args.join(" ")));
    for k in keys {
        steady(t, Duration::from_secs(1));
        t.keys(&[k.as_str()]);
    }
    let start = Instant::now();
    let mut got = squeezed(&steady(t, Duration::from_secs(1)));
    while got != s.block && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(200));
        got = squeezed(&t.screen());
    }
    t.keys(&["q"]);
    got
}

fn printed(s: &Screen) -> Option<Vec<String>> {
    let Some((w, h)) = s.tmux else {
        let out = memtally()
            .current_dir(repo())
            .args(&s.args)
            .env("COLUMNS", s.columns.to_string())
            .env_remove("LINES")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", s.marker);
        return Some(String::from_utf8(out.stdout).unwrap().lines().map(String::from).collect());
    };
    if !Tmux::available() {
        eprintln!("skipped {}: tmux is not installed", s.marker);
        return None;
    }
    let t = Tmux::start(w, h, &repo());
    if let Some(keys) = &s.ui {
        return Some(explorer(&t, s, keys));
    }
    t.line(&format!(
        "printf '\\033[H\\033[2J'; {} {}",
        env!("CARGO_BIN_EXE_memtally"),
        s.args.join(" ")
    ));
    t.wait_for("the prompt after the command", |s| {
        let l: Vec<&str> = s.trim_end().lines().collect();
        l.len() > 1 && l.last() == Some(&"$") && !l[0].starts_with("$ ")
    });
    let screen = t.settled();
    let mut lines: Vec<String> =
        screen.trim_end().lines().map(|l| l.trim_end().to_string()).collect();
    lines.pop();
    Some(lines)
}

#[test]
fn readme_screens_are_what_the_binary_prints() {
    let screens = screens();
    assert!(screens.len() >= 2, "the README has its marked screens");
    // Each screen in its own terminal (or pipe), all at once: the
    // explorer's screens wait for a steady second after each key.
    let got: Vec<Option<Vec<String>>> = std::thread::scope(|scope| {
        let runs: Vec<_> = screens.iter().map(|s| scope.spawn(move || printed(s))).collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    for (s, got) in screens.iter().zip(got) {
        let Some(got) = got else { continue };
        assert_eq!(
            got, s.block,
            "{}: the README's screen drifted; run scripts/readme-screens.py and commit README.md",
            s.marker
        );
    }
}
