//! The README's screens are what the binary prints: each ```text block
//! after a `<!-- screen: pipe 80: ARGS -->` or `<!-- screen: tmux 80x24:
//! ARGS -->` marker is run again (piped with COLUMNS, or in tmux at that
//! size) and must be the same; `scripts/readme-screens.py` rewrites them.

use crate::support::tmux::Tmux;
use crate::support::{memtally, repo};

struct Screen {
    marker: String,
    /// `Some((w, h))` for a terminal, else the piped width in `.1`.
    tmux: Option<(u16, u16)>,
    columns: usize,
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
        let (tmux, columns) = match how.split_once(' ') {
            Some(("pipe", w)) => (None, w.parse().unwrap()),
            Some(("tmux", size)) => {
                let (w, h) = size.split_once('x').unwrap();
                (Some((w.parse().unwrap(), h.parse().unwrap())), w.parse().unwrap())
            }
            _ => panic!("{l}: pipe W or tmux WxH"),
        };
        out.push(Screen {
            marker: l.to_string(),
            tmux,
            columns,
            args: args.split_whitespace().map(String::from).collect(),
            block: lines[i + 2..end].iter().map(|s| s.to_string()).collect(),
        });
    }
    out
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
    for s in &screens {
        let Some(got) = printed(s) else { continue };
        assert_eq!(
            got, s.block,
            "{}: the README's screen drifted; run scripts/readme-screens.py and commit README.md",
            s.marker
        );
    }
}
