//! Recorded trees a test may change (mark incomplete, turn a process into
//! a zombie): copies of the repository's fixtures in a temporary
//! directory. memtally-cli's test support includes this file by path;
//! both supports have the `repo()` it names.

use std::path::PathBuf;

/// A copy of `testdata/fixtures/linux/NAME/proc` in a fresh temporary
/// directory (removed when the first value drops), and the copy's path.
pub fn copied_fixture(name: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("proc");
    let src = super::repo().join("testdata/fixtures/linux").join(name).join("proc");
    let cp = std::process::Command::new("cp")
        .args(["-r", src.to_str().unwrap(), dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        cp.status.success(),
        "cp -r {}: {}",
        src.display(),
        String::from_utf8_lossy(&cp.stderr)
    );
    (tmp, dir)
}
