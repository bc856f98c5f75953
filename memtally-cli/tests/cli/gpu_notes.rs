//! `gpu` on a recorded tree made before GPU support says so once, not
//! once per process (issue 24 item 13).

use crate::support::repo;

/// A tree of three recorded processes, none with a record of its open
/// files: made here from three recorded trees (their process directories
/// side by side, python3-mmap's machine files), removed after.
fn three_process_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let fixtures = repo().join("testdata/fixtures/linux");
    for (tree, pid) in [
        ("python3-mmap", "11364"),
        ("chromium-browser", "11672"),
        ("gst-launch-audiotestsrc", "11531"),
    ] {
        let from = fixtures.join(tree).join("proc").join(pid);
        let ok = std::process::Command::new("cp")
            .arg("-a")
            .arg(&from)
            .arg(dir.path().join(pid))
            .status()
            .unwrap();
        assert!(ok.success(), "copy {}", from.display());
    }
    std::fs::copy(fixtures.join("python3-mmap/proc/meminfo"), dir.path().join("meminfo")).unwrap();
    dir
}

#[test]
fn gpu_on_a_recorded_tree_says_no_fd_record_once() {
    let tree = three_process_tree();
    for format in ["table", "json"] {
        let out = crate::support::memtally()
            .env("COLUMNS", "80")
            .args(["--proc-root", tree.path().to_str().unwrap(), "gpu", "--format", format])
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(text.matches("no record of open files").count(), 1, "{format}:\n{text}");
        assert!(text.contains("3 processes have no record of open files"), "{format}:\n{text}");
    }
}
