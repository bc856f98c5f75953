//! Where the repository's recordings are: shared by the command-line
//! tests and the in-process printer tests (`src/tests`, by `#[path]`).

use std::path::{Path, PathBuf};

/// The repository's top directory (the workspace), where `testdata/` is.
pub fn repo() -> PathBuf {
    let cli = Path::new(env!("CARGO_MANIFEST_DIR"));
    cli.parent().unwrap_or(cli).to_path_buf()
}

/// A path below the repository's top directory, as a string (for arguments).
pub fn repo_path(rel: &str) -> String {
    repo().join(rel).display().to_string()
}

/// `../shared` beside the repository, when this checkout has it.
pub fn shared() -> Option<PathBuf> {
    let p = repo().join("../shared");
    p.is_dir().then_some(p)
}
