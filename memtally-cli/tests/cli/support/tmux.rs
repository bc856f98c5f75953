//! A terminal for the tests of `memtally ui`: a tmux server on its own
//! socket, one window of a fixed size running a plain shell; keys go in
//! with send-keys, the screen comes out with capture-pane. Killed on drop.

use std::process::Command;
use std::time::{Duration, Instant};

/// How long a screen may take to show what a test waits for: long, for
/// machines busy with builds (each wait ends as soon as the screen shows it).
pub const WAIT: Duration = Duration::from_secs(30);

pub struct Tmux {
    socket: String,
}

impl Tmux {
    /// Whether tmux is installed (CI installs it; see `.ci/run`).
    pub fn available() -> bool {
        Command::new("tmux").arg("-V").output().is_ok_and(|o| o.status.success())
    }

    /// A server with one `width`x`height` window running `sh` in `dir`,
    /// with the prompt `$ ` and nothing else from the environment's shell setup.
    pub fn start(width: u16, height: u16, dir: &std::path::Path) -> Tmux {
        static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let t = Tmux { socket: format!("memtally-test-{}-{n}", std::process::id()) };
        let (w, h) = (width.to_string(), height.to_string());
        let dir = dir.to_str().unwrap();
        t.ok(&[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "ui",
            "-x",
            &w,
            "-y",
            &h,
            "-c",
            dir,
            "env",
            "-i",
            "PATH=/usr/bin:/bin",
            "TERM=screen",
            "HOME=/tmp",
            "PS1=$ ",
            "sh",
        ]);
        t.ok(&["set-option", "-g", "status", "off"]);
        // Detached, the window keeps the size asked for (not the smallest client's).
        t.ok(&["set-option", "-g", "window-size", "manual"]);
        t.ok(&["resize-window", "-t", "ui", "-x", &w, "-y", &h]);
        t.wait_for("the shell's prompt", |s| s.starts_with("$"));
        t
    }

    fn tmux(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux").arg("-L").arg(&self.socket).args(args).output().expect("tmux runs")
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.tmux(args);
        assert!(out.status.success(), "tmux {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Types a line into the shell and presses Enter.
    pub fn line(&self, text: &str) {
        self.ok(&["send-keys", "-t", "ui", "-l", text]);
        self.ok(&["send-keys", "-t", "ui", "Enter"]);
    }

    /// Presses keys by tmux's names (`Enter`, `Escape`, `q`, `C-c`).
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "ui"];
        args.extend(keys);
        self.ok(&args);
    }

    /// Types text literally.
    pub fn text(&self, text: &str) {
        self.ok(&["send-keys", "-t", "ui", "-l", text]);
    }

    /// The screen, one string per row, trailing spaces trimmed.
    pub fn screen(&self) -> String {
        self.ok(&["capture-pane", "-p", "-t", "ui"])
    }

    /// The screen with its colours and attributes as escape sequences.
    pub fn screen_styled(&self) -> String {
        self.ok(&["capture-pane", "-p", "-e", "-t", "ui"])
    }

    /// A format of the pane (`#{alternate_on}`, `#{pane_pid}`).
    pub fn display(&self, format: &str) -> String {
        self.ok(&["display-message", "-p", "-t", "ui", format]).trim().to_string()
    }

    pub fn resize(&self, width: u16, height: u16) {
        self.ok(&[
            "resize-window",
            "-t",
            "ui",
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
        ]);
    }

    /// Waits until the screen satisfies `ok` (polling, at most [`WAIT`]);
    /// returns that screen, or panics with the last one.
    pub fn wait_for(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if ok(&s) {
                return s;
            }
            if start.elapsed() > WAIT {
                panic!("waited {WAIT:?} for {what}; the screen:\n{s}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The screen once it stopped changing (two captures 200 ms apart agree).
    pub fn settled(&self) -> String {
        let start = Instant::now();
        let mut last = self.screen();
        loop {
            std::thread::sleep(Duration::from_millis(200));
            let now = self.screen();
            if now == last || start.elapsed() > WAIT {
                return now;
            }
            last = now;
        }
    }

    /// Waits until the screen shows `text`.
    pub fn wait_text(&self, text: &str) -> String {
        self.wait_for(text, |s| s.contains(text))
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}

/// The pid of the process running in a pane's shell `shell`.
pub fn child_of(shell: u32) -> Option<u32> {
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
        let after = &stat[stat.rfind(')')? + 2..];
        let ppid: u32 = after.split_whitespace().nth(1)?.parse().ok()?;
        (ppid == shell).then_some(pid)
    })
}
