//! Where the test data is: the repository's `testdata/`, and `../shared`
//! beside the repository when this checkout has it.

use std::path::{Path, PathBuf};

/// The repository's top directory (the workspace).
pub fn repo() -> PathBuf {
    let core = Path::new(env!("CARGO_MANIFEST_DIR"));
    core.parent().unwrap_or(core).to_path_buf()
}

pub mod child;
pub mod recorded;
pub mod rollup;
pub mod shown;
