//! `diff` of saved vmmap text or the JSON of `memtally vmmap`: the report
//! is read twice, never held. The first read folds each region into its
//! report's sums (by category, by path, each type's footprint) and keeps
//! its identity (8 bytes, 16 with a purge state); the second keeps the few
//! regions `diff` lists. A report that cannot be read twice (a pipe) is
//! loaded whole, as is JSON that does not read so (which says why).

use std::io::BufRead;
use std::path::Path;

use crate::analyze::diff_regions::{RegionCap, RegionIds};
use crate::analyze::vmmap::TypeSides;
use crate::error::{Error, Result, Uncomparable};
use crate::model::group::Grouper;
use crate::model::snap_digest::{Digest, RegionDigest};
use crate::model::snapshot::{path_key_of, region_id, SnapRegion, Snapshot, VmmapTypes};
use crate::model::vmmap::{Document, VRegion, VRegionSink};
use crate::model::Flow;
use crate::source::bounded;
use crate::source::parse::vmmap;
use crate::source::parse::vmmap_json::{self, OtherKeys};
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
    let mut fold = Fold::default();
    let doc = vmmap::parse(r, Default::default(), &mut fold).map_err(|e| input_error(path, e))?;
    if doc.regions == 0 && doc.summary.is_empty() {
        return Err(Error::NotComparable { path: path.to_path_buf(), input: Uncomparable::Text });
    }
    Ok(fold.digest(&doc))
}

/// [`digest`] of the JSON of `memtally vmmap` in the regular file `path`;
/// `None` where it does not read so, or lists no region (read whole).
pub(crate) fn digest_json(path: &Path) -> Option<(Digest, TypeSides)> {
    let r = std::io::BufReader::with_capacity(64 << 10, bounded::open_input(path).ok()?);
    let mut fold = Fold::default();
    let doc = vmmap_json::read(r, OtherKeys::Refused, &mut fold).ok()?;
    (doc.regions > 0).then(|| fold.digest(&doc))
}

/// A report's regions folded as read (see [`digest`]).
#[derive(Default)]
struct Fold {
    types: VmmapTypes,
    categories: Grouper,
    one: RegionDigest,
    sides: TypeSides,
}

impl VRegionSink for Fold {
    fn region(&mut self, _line: usize, r: &VRegion<'_>) -> Flow {
        let sizes = SnapRegion::vmmap_sizes(r);
        let category = self.types.category(r.region_type);
        self.categories.add_sizes(category, 1, &sizes);
        self.sides.add_region(category, Some(r.region_type), Some(r.purge), &sizes);
        let id = region_id(r.start, r.end, r.prot, r.detail);
        let key = path_key_of(r.detail, Some(category));
        self.one.add_parts(key, &sizes, id, Some(r.purge));
        Flow::Continue
    }
}

impl Fold {
    /// The digest of the report `doc` these regions were read from.
    fn digest(self, doc: &Document) -> (Digest, TypeSides) {
        let categories = self.categories.into_groups();
        let snap = Snapshot::of_vmmap_folded(doc, categories, Vec::new(), self.types);
        // Without region lines, the summary's rows are the figures by type.
        let sides = match doc.regions {
            0 => snap.processes.first().map(TypeSides::of).unwrap_or_default(),
            _ => self.sides,
        };
        let mut d = Digest::empty(snap);
        d.push(self.one);
        (d, sides)
    }
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
    struct Keep<'k> {
        types: VmmapTypes,
        keep: &'k RegionIds,
        cap: &'k mut RegionCap,
        found: usize,
        seen: usize,
    }
    impl VRegionSink for Keep<'_> {
        fn region(&mut self, _line: usize, r: &VRegion<'_>) -> Flow {
            self.seen += 1;
            // Every type counts, kept or not: the first 1000 stay apart.
            let category = self.types.category(r.region_type);
            if self.keep.contains(&region_id(r.start, r.end, r.prot, r.detail)) {
                let mut region = SnapRegion::of_vmmap(r);
                region.category = category.to_string();
                self.found += 1;
                self.cap.offer(0, region);
            }
            Flow::Continue
        }
    }
    if keep.is_empty() {
        return Ok(());
    }
    let f = bounded::open_input(path).map_err(|e| input_error(path, e))?;
    let r = std::io::BufReader::with_capacity(64 << 10, f);
    let mut sink = Keep { types: VmmapTypes::default(), keep, cap, found: 0, seen: 0 };
    match form {
        Form::Text => {
            vmmap::parse(r, Default::default(), &mut sink).map_err(|e| input_error(path, e))?;
        }
        Form::Json => {
            vmmap_json::read(r, OtherKeys::Refused, &mut sink)
                .map_err(|_| changed_meanwhile(path))?;
        }
    }
    if sink.seen != d.ids[0].len() || sink.found < keep.len() {
        return Err(changed_meanwhile(path));
    }
    Ok(())
}
