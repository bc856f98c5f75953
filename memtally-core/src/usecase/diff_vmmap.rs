//! `diff` of saved vmmap text or the JSON of `memtally vmmap`: the report
//! is read twice, never held, each region handed on as a snapshot region
//! (`VmmapFeed`) to the feeds `diff_json` reads other documents with. The
//! first read folds each region into its report's sums (by category, by
//! path, each type's footprint) and keeps its identity (8 bytes, 16 with a
//! purge state); the second keeps the few regions `diff` lists. JSON that
//! does not read so is loaded (which says why).

use std::io::BufRead;
use std::path::Path;

use crate::analyze::diff_regions::{RegionCap, RegionIds};
use crate::analyze::vmmap::TypeSides;
use crate::error::{Error, Result, Uncomparable};
use crate::model::snap_digest::Digest;
use crate::source::bounded;
use crate::source::parse::snapshot_feed::VmmapFeed;
use crate::source::parse::vmmap;
use crate::source::parse::vmmap_json::{self, OtherKeys};
use crate::usecase::diff_json::{Keep, Sums};
use crate::usecase::snapshot::{changed_meanwhile, input_error};

/// How a vmmap report is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// Saved `vmmap` text.
    Text,
    /// The JSON of `memtally vmmap`.
    Json,
}

/// The digest of saved vmmap text read from `r` (`path`), no region
/// kept, and its figures by type for `diff`'s footprint table.
pub(crate) fn digest(path: &Path, r: impl BufRead) -> Result<(Digest, TypeSides)> {
    let mut sums = Sums::new(true);
    let mut fold = VmmapFeed::new(&mut sums);
    let doc = vmmap::parse(r, Default::default(), &mut fold).map_err(|e| input_error(path, e))?;
    if doc.regions == 0 && doc.summary.is_empty() {
        return Err(Error::NotComparable { path: path.to_path_buf(), input: Uncomparable::Text });
    }
    let snap = fold.finish(&doc);
    Ok(sums.vmmap(snap, doc.regions))
}

/// [`digest`] of the JSON of `memtally vmmap` in the regular file `path`;
/// `None` where it does not read so, or lists no region (read whole).
pub(crate) fn digest_json(path: &Path) -> Option<(Digest, TypeSides)> {
    let r = std::io::BufReader::with_capacity(64 << 10, bounded::open_input(path).ok()?);
    let mut sums = Sums::new(true);
    let mut fold = VmmapFeed::new(&mut sums);
    let doc = vmmap_json::read(r, OtherKeys::Refused, &mut fold).ok()?;
    let snap = fold.finish(&doc);
    (doc.regions > 0).then(|| sums.vmmap(snap, doc.regions))
}

/// Hands `cap` the regions named in `keep` of a [`digest`] of `path`,
/// read again (in file order, each as
/// [`load`](crate::usecase::snapshot::load) keeps it).
pub(crate) fn fetch_regions(
    path: &Path,
    form: Form,
    d: &Digest,
    keep: &RegionIds,
    cap: &mut RegionCap,
) -> Result<()> {
    if keep.is_empty() {
        return Ok(());
    }
    let f = bounded::open_input(path).map_err(|e| input_error(path, e))?;
    let r = std::io::BufReader::with_capacity(64 << 10, f);
    let mut sink = Keep::new(std::slice::from_ref(keep), cap);
    let mut fold = VmmapFeed::new(&mut sink);
    let doc = match form {
        Form::Text => {
            vmmap::parse(r, Default::default(), &mut fold).map_err(|e| input_error(path, e))?
        }
        Form::Json => vmmap_json::read(r, OtherKeys::Refused, &mut fold)
            .map_err(|_| changed_meanwhile(path))?,
    };
    fold.finish(&doc);
    sink.same(d).then_some(()).ok_or_else(|| changed_meanwhile(path))
}
