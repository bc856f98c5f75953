//! `memtally --version` names the commit it was built from:
//! `memtally 0.2.0 (1804e55)`. Read from git where this package is part
//! of a git checkout; a published crate or a source tree without git
//! (no `.git`, no git program) gives the version alone. The binary reads
//! `MEMTALLY_VERSION` (that line's text after `memtally `) and
//! `MEMTALLY_COMMIT` (the short commit, empty when unknown).

use std::path::Path;
use std::process::Command;

fn main() {
    let package = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let version = std::env::var("CARGO_PKG_VERSION").expect("cargo sets CARGO_PKG_VERSION");
    let commit = commit(Path::new(&package));
    match &commit {
        Some(c) => println!("cargo:rustc-env=MEMTALLY_VERSION={version} ({c})"),
        None => println!("cargo:rustc-env=MEMTALLY_VERSION={version}"),
    }
    println!("cargo:rustc-env=MEMTALLY_COMMIT={}", commit.as_deref().unwrap_or(""));
    // `memtally_repo`: built in the repository, not from the published
    // crate (which carries neither `src/tests/` nor the recordings those
    // in-process printer tests read).
    println!("cargo::rustc-check-cfg=cfg(memtally_repo)");
    if !Path::new(&package).join("Cargo.toml.orig").exists() {
        println!("cargo::rustc-cfg=memtally_repo");
    }
    println!("cargo:rerun-if-changed=build.rs");
}

/// The short commit of HEAD, where `package` is tracked in a git checkout
/// (a published crate unpacked inside some other repository is not).
fn commit(package: &Path) -> Option<String> {
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git").args(args).current_dir(package).output().ok()?;
        let text = String::from_utf8(out.stdout).ok()?;
        (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_string())
    };
    // Cargo.toml.orig: cargo's package of this crate, which has no commit.
    if package.join("Cargo.toml.orig").exists() {
        return None;
    }
    git(&["ls-files", "--error-unmatch", "Cargo.toml"])?;
    let commit = git(&["rev-parse", "--short=7", "HEAD"])?;
    // Built again when HEAD moves: HEAD itself, the branch it names, and
    // packed-refs where a branch's commit may be kept instead.
    let mut watched = vec![git(&["rev-parse", "--git-path", "HEAD"])?];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watched.push(git(&["rev-parse", "--git-path", &branch])?);
    }
    watched.push(git(&["rev-parse", "--git-path", "packed-refs"])?);
    for path in watched {
        let path = package.join(path);
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
    Some(commit)
}
