//! The repository's recordings (`testdata/` beside this package) for the
//! unit tests. The published crate does not carry them (cargo packages
//! this directory only): there a test that reads them is skipped with a
//! printed reason. In the repository a missing recording fails the test.

use std::path::{Path, PathBuf};

/// `testdata/PATH` of the repository; `None`, with the reason printed,
/// in a published crate (cargo's package has a `Cargo.toml.orig`) that
/// lacks it.
pub(crate) fn testdata(path: &str) -> Option<PathBuf> {
    let package = Path::new(env!("CARGO_MANIFEST_DIR"));
    let file = package.join("../testdata").join(path);
    if !file.exists() && package.join("Cargo.toml.orig").exists() {
        eprintln!("skipped: testdata/{path} is in the repository, not in the published crate");
        return None;
    }
    Some(file)
}
