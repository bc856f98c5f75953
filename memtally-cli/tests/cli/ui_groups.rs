//! Issue 37, item 13: the explorer's group views at 80 columns keep the
//! figure headers whole (`PSS DIRTY` read `SS DIRTY`: the cgroup column
//! took half the row) and cut a long cgroup from the left with `…`.

use crate::support::repo;
use crate::support::tmux::Tmux;

/// A recorded tree whose one process sits in a deep cgroup.
fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let from = repo().join("testdata/fixtures/linux/python3-mmap/proc");
    std::fs::copy(from.join("meminfo"), dir.path().join("meminfo")).unwrap();
    let p = dir.path().join("11364");
    std::fs::create_dir_all(&p).unwrap();
    for e in std::fs::read_dir(from.join("11364")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), p.join(e.file_name())).unwrap();
    }
    let cg = "/user.slice/user-1000.slice/user@1000.service/app.slice/app-gnome-terminal-server-python3-mmap.scope";
    std::fs::write(p.join("cgroup"), format!("0::{cg}\n")).unwrap();
    dir
}

#[test]
fn a_cgroup_view_at_80_columns_keeps_its_headers_and_the_leaf() {
    if !Tmux::available() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    let dir = tree();
    let t = Tmux::start(80, 24, &repo());
    let bin = env!("CARGO_BIN_EXE_memtally");
    t.line(&format!("{bin} --proc-root {} ui --by cgroup --interval 1h", dir.path().display()));
    t.wait_text("machine (from meminfo)");
    t.keys(&["Enter"]);
    let s = t.wait_text("CGROUP");
    let head = s.lines().find(|l| l.contains("CGROUP")).unwrap();
    assert!(head.contains(" PSS DIRTY"), "{s}");
    assert!(s.contains("…"), "the cgroup is cut with an ellipsis: {s}");
    assert!(s.contains("python3-mmap.scope"), "its leaf stays: {s}");
    for line in s.lines() {
        assert!(line.chars().count() <= 80, "{line}");
    }
    t.keys(&["q"]);
}
