//! `diff`: two documents read back and compared.

use std::path::Path;

use crate::analyze::diff::{diff, Diff, DiffOptions, DIFF_FIGURES};
use crate::error::{Error, Result};
use crate::usecase::snapshot::load;
use crate::usecase::top::check_sort;

/// What changed from `before` to `after` (any documents [`load`] reads,
/// both of one kind: two Linux snapshots or two vmmap reports).
pub fn diff_files(before: &Path, after: &Path, opts: &DiffOptions) -> Result<Diff> {
    check_sort(&opts.sort, DIFF_FIGURES)?;
    let a = load(before)?;
    let b = load(after)?;
    if a.kind != b.kind {
        return Err(Error::Usage(format!(
            "cannot compare a {} snapshot ({}) with a {} one ({})",
            a.kind,
            before.display(),
            b.kind,
            after.display()
        )));
    }
    Ok(diff(&a, &b, opts))
}
