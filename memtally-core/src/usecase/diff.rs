//! `diff`: two documents read back and compared.
//!
//! A `memtally snapshot` file is never held whole: it is streamed into a
//! digest (per process: regions summed by path, and each region's
//! identity). The later one is streamed once, against the earlier one's
//! identities, keeping the regions that may have appeared; of the
//! earlier one, the regions that vanished are read again where each
//! begins (its digest kept their offsets), not the whole file. Memory is
//! about 12 bytes a region of the earlier one and 8 of the later plus what changed.

use std::path::Path;

use crate::analyze::diff::{diff_digests, unmatched, Diff, DiffOptions};
use crate::error::{Error, Result};
use crate::usecase::snapshot::{fetch_regions, load_digest, load_digest_against, DigestRead};

/// What changed from `before` to `after` (any documents
/// [`load`](crate::usecase::snapshot::load) reads, both of one kind: two
/// Linux snapshots or two vmmap reports).
pub fn diff_files(before: &Path, after: &Path, opts: &DiffOptions) -> Result<Diff> {
    let DigestRead { digest: mut a, streamed: a_streamed } = load_digest(before)?;
    let b = load_digest_against(after, &a)?;
    let (ka, kb) = (a.snapshot.kind.name(), b.snapshot.kind.name());
    if ka != kb {
        return Err(Error::KindsDiffer {
            before: before.to_path_buf(),
            before_kind: ka,
            after: after.to_path_buf(),
            after_kind: kb,
        });
    }
    // `b` kept (at least) every region `a` lacks; a streamed `a` kept
    // none: the ones to list are read where they begin.
    let (keep_a, _) = unmatched(&a, &b);
    if a_streamed && keep_a.iter().any(|k| !k.is_empty()) {
        fetch_regions(before, &mut a, &keep_a)?;
    }
    Ok(diff_digests(&a, &b, opts))
}
