//! Text is cut where it tells rows apart: a path in its middle (the file
//! name stays), a cgroup from its left (the leaf stays), a GPU client's
//! command as top cuts it; `show --regions` keeps CATEGORY and MAPPING at
//! 80 columns. Piped with `COLUMNS` and in tmux at 80x24 and 200x50.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use unicode_width::UnicodeWidthStr;

use crate::support::tmux::Tmux;
use crate::support::{memtally, repo, Killed};

fn piped(args: &[&str], columns: usize) -> String {
    let out = memtally().args(args).env("COLUMNS", columns.to_string()).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// A copy of `sleep` at a path of more than 100 characters, running.
fn deep_sleeper(dir: &Path) -> (Killed, PathBuf) {
    let deep = dir.join("a-rather-long-directory-name/another-long-directory-name/and-a-third");
    std::fs::create_dir_all(&deep).unwrap();
    let exe = deep.join("memtally-deep-sleeper");
    let sleep = ["/usr/bin/sleep", "/bin/sleep"].iter().find(|p| Path::new(p).exists()).unwrap();
    std::fs::copy(sleep, &exe).unwrap();
    // Another test's fork between the copy's open and close holds the
    // new file open for writing until that child execs: exec then fails
    // with ETXTBSY for a moment.
    let child = (0..100)
        .find_map(|_| match Command::new(&exe).arg("600").stdout(Stdio::null()).spawn() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(std::time::Duration::from_millis(10));
                None
            }
            spawned => Some(spawned.unwrap()),
        })
        .expect("the copied sleep stayed busy for a second");
    let want = exe.to_string_lossy().into_owned();
    for _ in 0..500 {
        let maps =
            std::fs::read_to_string(format!("/proc/{}/maps", child.id())).unwrap_or_default();
        if maps.contains(&want) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    (Killed(child), exe)
}

/// The lines of `text` that end in the sleeper's file name.
fn exe_rows(text: &str) -> Vec<&str> {
    text.lines().filter(|l| l.ends_with("memtally-deep-sleeper")).collect()
}

/// Every row of the sleeper's file fits `width` and ends in its file
/// name: the path whole when `whole_fits`, else cut in its middle.
fn check_path_rows(text: &str, width: usize, exe: &Path, what: &str, whole_fits: bool) {
    assert!(text.lines().all(|l| l.width() <= width), "{what} at {width}:\n{text}");
    let rows = exe_rows(text);
    assert!(!rows.is_empty(), "{what} at {width}: no row ends in the file name:\n{text}");
    let whole = exe.to_str().unwrap();
    for r in rows {
        if whole_fits {
            assert!(r.ends_with(whole), "{what} at {width}: whole:\n{text}");
        } else {
            // Cut before the file name (where the room is that of the
            // name alone, the name alone), never in it.
            assert!(!r.contains(whole), "{what} at {width}: {r:?}");
            assert!(!r.ends_with("…"), "{what} at {width}: {r:?}");
        }
    }
}

#[test]
fn paths_are_cut_in_the_middle_and_regions_keep_category_and_mapping() {
    let dir = tempfile::tempdir().unwrap();
    let (child, exe) = deep_sleeper(dir.path());
    let pid = child.0.id().to_string();
    for width in [80, 200] {
        let by_path = piped(&["show", &pid, "--by", "path"], width);
        check_path_rows(&by_path, width, &exe, "show --by path", width == 200);
        let regions = piped(&["show", &pid, "--regions"], width);
        let header = regions.lines().find(|l| l.starts_with("ADDRESS")).expect(&regions);
        assert!(header.contains("CATEGORY") && header.ends_with("MAPPING"), "{width}: {header}");
        assert!(header.contains(" PSS"), "{header}");
        check_path_rows(&regions, width, &exe, "show --regions", false);
    }
    if !Tmux::available() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    for (w, h) in [(80u16, 24u16), (200, 50)] {
        let t = Tmux::start(w, h, &repo());
        t.line(&format!("{} show {pid} --by path --top 8", env!("CARGO_BIN_EXE_memtally")));
        t.wait_for("the prompt after show", |s| s.trim_end().ends_with("\n$"));
        let s = t.settled();
        check_path_rows(&s, w as usize, &exe, "tmux show --by path", w == 200);
    }
}

#[test]
fn cgroups_are_cut_from_the_left_keeping_the_leaf() {
    let dir = tempfile::tempdir().unwrap();
    let pod =
        "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0123456789abcdef.slice";
    for (pid, leaf) in [(20, "cri-containerd-aaaa.scope"), (21, "cri-containerd-bbbb.scope")] {
        let line = format!("0::{pod}/{leaf}\n");
        crate::cgroup::record_process(dir.path(), pid, "app", &line, [4000, 1000, 0]);
    }
    let root = dir.path().to_str().unwrap();
    for width in [80, 200] {
        let text = piped(&["--proc-root", root, "top", "--by", "cgroup"], width);
        assert!(text.lines().all(|l| l.width() <= width), "{text}");
        for leaf in ["cri-containerd-aaaa.scope", "cri-containerd-bbbb.scope"] {
            let row = text.lines().find(|l| l.ends_with(leaf)).unwrap_or_else(|| panic!("{text}"));
            if width == 80 {
                assert!(row.contains("…/"), "cut from the left at 80: {row:?}");
            } else {
                assert!(row.ends_with(&format!("{pod}/{leaf}")), "whole at 200: {row:?}");
            }
        }
    }
}
