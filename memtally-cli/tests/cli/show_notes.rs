//! `show`'s lines of text fit the width as top's notes do, piped with
//! `COLUMNS` and in tmux at 80x24 and 200x50, and its shmem line reads
//! without contradiction: PSS first, the part in USS a part of it.

use std::path::PathBuf;

use unicode_width::UnicodeWidthStr;

use crate::support::lone::ShmMapper;
use crate::support::tmux::Tmux;
use crate::support::{memtally, repo};

/// A /dev/shm file removed on drop.
struct ShmFile(PathBuf);

impl Drop for ShmFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

const LEN: usize = 8 << 20;

/// Two children mapping one 8 MiB /dev/shm file, every page written: each
/// has 4.0M of it in its PSS and none in its USS.
fn sharers(tag: &str) -> Option<(ShmFile, ShmMapper, ShmMapper)> {
    if !std::path::Path::new("/dev/shm").is_dir() {
        eprintln!("skipped: no /dev/shm");
        return None;
    }
    let file = ShmFile(PathBuf::from(format!("/dev/shm/memtally-{tag}-{}", std::process::id())));
    let mut a = ShmMapper::start(&file.0, LEN, true);
    a.map();
    let mut b = ShmMapper::start(&file.0, LEN, true);
    b.map();
    Some((file, a, b))
}

fn piped(args: &[&str], columns: usize) -> String {
    let out = memtally().args(args).env("COLUMNS", columns.to_string()).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The words of the text from the line starting with `start` to the next
/// line that is not indented (a wrapped line's rest is).
fn paragraph(text: &str, start: &str) -> String {
    let mut lines = text.lines().skip_while(|l| !l.starts_with(start));
    let first = lines.next().unwrap_or_else(|| panic!("no {start:?} in:\n{text}"));
    let rest = lines.take_while(|l| l.starts_with(' '));
    std::iter::once(first).chain(rest).flat_map(str::split_whitespace).collect::<Vec<_>>().join(" ")
}

#[test]
fn show_lines_wrap_at_the_width_and_shmem_reads_as_one() {
    let Some((_file, a, b)) = sharers("show-notes") else { return };
    let (pa, pb) = (a.pid().to_string(), b.pid().to_string());
    for columns in [80, 200] {
        for args in [vec!["show", pa.as_str()], vec!["show", "--pid", &pa, "--pid", &pb]] {
            let text = piped(&args, columns);
            for line in text.lines() {
                assert!(line.width() <= columns, "{args:?} at {columns}: {line:?}\n{text}");
            }
            let shmem = paragraph(&text, "shmem: ");
            let want = if args.len() == 2 { "4.0M" } else { "8.0M" };
            assert!(
                shmem.starts_with(&format!("shmem: {want} of the PSS is tmpfs / shared memory")),
                "{shmem}"
            );
            assert!(shmem.contains("none of it mapped here alone (USS 0)"), "{shmem}");
        }
    }
    if !Tmux::available() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    for (w, h) in [(80u16, 24u16), (200, 50)] {
        let t = Tmux::start(w, h, &repo());
        t.line(&format!("{} show {pa}", env!("CARGO_BIN_EXE_memtally")));
        t.wait_for("the prompt after show", |s| s.trim_end().ends_with("\n$"));
        let s = t.settled();
        let shmem = paragraph(&s, "shmem: ");
        assert!(shmem.starts_with("shmem: 4.0M of the PSS"), "{w}x{h}:\n{s}");
        assert!(
            shmem.ends_with("while the file or segment exists"),
            "{w}x{h}: wrapped whole:\n{s}"
        );
    }
}
