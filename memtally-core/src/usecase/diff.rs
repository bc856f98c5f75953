//! `diff`: two documents read back and compared.
//!
//! A `memtally snapshot` file is never held whole: it is streamed into a
//! digest (per process: regions summed by path, and each region's
//! identity). The later one is streamed once, against the earlier one's
//! identities, keeping the regions that may have appeared; the earlier
//! one is streamed once more, keeping just those that vanished, only when
//! some did. Memory is about 8 bytes a region plus what changed.

use std::path::Path;

use crate::analyze::diff::{diff_digests, unmatched, Diff, DiffOptions};
use crate::error::{Error, Result};
use crate::model::snapshot::Digest;
use crate::usecase::snapshot::{load_digest, load_digest_against, DigestRead};

/// What changed from `before` to `after` (any documents
/// [`load`](crate::usecase::snapshot::load) reads, both of one kind: two
/// Linux snapshots or two vmmap reports).
pub fn diff_files(before: &Path, after: &Path, opts: &DiffOptions) -> Result<Diff> {
    let DigestRead { digest: a, streamed: a_streamed } = load_digest(before, &[])?;
    let b = load_digest_against(after, &a)?;
    let (ka, kb) = (a.snapshot.kind.name(), b.snapshot.kind.name());
    if ka != kb {
        return Err(Error::Usage(format!(
            "cannot compare a {ka} snapshot ({}) with a {kb} one ({})",
            before.display(),
            after.display()
        )));
    }
    // `b` kept (at least) every region `a` lacks: only `a` may be read again.
    let (keep_a, _) = unmatched(&a, &b);
    // A streamed file kept no region: read again for the ones to list.
    let again =
        |path: &Path, streamed: bool, d: Digest, keep: &[std::collections::HashSet<u64>]| {
            if !streamed || keep.iter().all(|k| k.is_empty()) {
                return Ok(d);
            }
            let d2 = load_digest(path, keep)?.digest;
            if d2.ids != d.ids {
                return Err(Error::Parse {
                    path: path.to_path_buf(),
                    message: "changed while being compared; run again".into(),
                });
            }
            Ok(d2)
        };
    let a = again(before, a_streamed, a, &keep_a)?;
    Ok(diff_digests(&a, &b, opts))
}
