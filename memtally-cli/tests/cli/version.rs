//! `memtally --version` names the commit it was built from (build.rs),
//! as `memtally 0.2.0 (1804e55)`.

use crate::support::{memtally, repo};

#[test]
fn the_version_names_the_commit() {
    let out = memtally().arg("--version").output().unwrap();
    assert!(out.status.success());
    let line = String::from_utf8(out.stdout).unwrap();
    let head = std::process::Command::new("git")
        .args(["rev-parse", "--short=7", "HEAD"])
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(head.status.success(), "the tests run in the repository's git checkout");
    let head = String::from_utf8(head.stdout).unwrap();
    let want = format!("memtally {} ({})\n", env!("CARGO_PKG_VERSION"), head.trim());
    assert_eq!(line, want, "built from {}", head.trim());
}
