//! `memtally` (and `top`) on a terminal fit one screen: at 80x24 and
//! 200x50 in tmux the table shows at least ten process rows, the machine
//! two lines under it, each note one line; a pipe gets everything.

use std::process::{Child, Command, Stdio};

use unicode_width::UnicodeWidthStr;

use crate::support::tmux::Tmux;
use crate::support::{memtally, repo};

/// `n` sleeping children, killed and reaped on drop: a machine with at
/// least `n` processes to rank, whatever else runs.
struct Sleepers(Vec<Child>);

impl Sleepers {
    fn start(n: usize) -> Sleepers {
        Sleepers(
            (0..n)
                .map(|_| Command::new("sleep").arg("600").stdout(Stdio::null()).spawn().unwrap())
                .collect(),
        )
    }
}

impl Drop for Sleepers {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// The screen once `command` has run and the shell prompts again.
fn screen_of(width: u16, height: u16, command: &str) -> Option<String> {
    if !Tmux::available() {
        eprintln!("skipped: tmux is not installed");
        return None;
    }
    let t = Tmux::start(width, height, &repo());
    t.line(command);
    t.wait_for("the prompt after the output", |s| {
        let lines: Vec<&str> = s.trim_end().lines().collect();
        lines.len() > 3 && lines.last() == Some(&"$")
    });
    Some(t.settled())
}

#[test]
fn plain_memtally_fits_80x24_and_200x50() {
    let _sleepers = Sleepers::start(12);
    for (width, height) in [(80u16, 24u16), (200, 50)] {
        let Some(s) = screen_of(width, height, env!("CARGO_BIN_EXE_memtally")) else { return };
        let lines: Vec<&str> = s.trim_end().lines().collect();
        assert!(lines.len() <= height as usize, "{s}");
        assert!(lines.iter().all(|l| l.width() <= width as usize), "{s}");
        let header = lines
            .iter()
            .position(|l| l.trim_start().starts_with("PID  USER"))
            .unwrap_or_else(|| panic!("{width}x{height}: the table's header scrolled away:\n{s}"));
        let rule = header + lines[header..].iter().position(|l| l.starts_with("---")).unwrap();
        let rows = &lines[header + 1..rule];
        assert!(rows.len() >= 10, "{width}x{height}: {} rows:\n{s}", rows.len());
        assert!(
            rows.iter().all(|r| r.split_whitespace().next().unwrap().parse::<u32>().is_ok()),
            "{s}"
        );
        // The whole screen is used: rows down to the machine's two lines.
        assert!(lines[rule + 1].starts_with("total"), "{s}");
        let machine = lines.iter().position(|l| l.starts_with("machine: total")).expect(&s);
        assert!(machine <= rule + 4, "the machine under the table:\n{s}");
        assert!(lines[machine + 1].starts_with("swap: "), "{s}");
        assert!(lines[machine + 1].contains("memtally machine"), "where the rest is:\n{s}");
        // Each note one line; nothing else after the machine but the prompt.
        for l in &lines[machine + 2..lines.len() - 1] {
            assert!(l.starts_with("note: "), "{width}x{height}: not one line a note: {l:?}\n{s}");
        }
    }
}

/// Into a pipe nothing is shortened: every row (as ps, smem and ps_mem
/// print them, so `memtally top | grep NAME` finds every process), the
/// machine's groups and the notes in full; `--full` does the same on a
/// terminal. `-p PID` names a process, as in ps, top, htop and pmap.
#[test]
fn a_pipe_and_full_get_everything() {
    let sleepers = Sleepers::start(22);
    let out = memtally().arg("top").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    // Every one of the 22 (more than the 20 rows a pipe used to get).
    for c in &sleepers.0 {
        let pid = c.id().to_string();
        assert!(
            text.lines().any(|l| l.split_whitespace().next() == Some(pid.as_str())),
            "sleeper {pid} has its row in a pipe:\n{text}"
        );
    }
    assert!(text.lines().any(|l| l.starts_with("  processes ")), "the machine's groups:\n{text}");
    assert!(!text.contains("notes in full"), "{text}");
    let one = sleepers.0[0].id().to_string();
    let out = memtally().args(["top", "-p", &one, "--format", "json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = doc["processes"].as_array().expect("rows");
    assert_eq!(rows.len(), 1, "{doc}");
    assert_eq!(rows[0]["pid"].to_string(), one);
    let Some(s) = screen_of(80, 24, &format!("{} top --full", env!("CARGO_BIN_EXE_memtally")))
    else {
        return;
    };
    assert!(s.lines().any(|l| l.starts_with("  processes ")), "--full: the groups:\n{s}");
    assert!(!s.contains("notes in full"), "{s}");
}
