//! A mapping's values as a region object reads them, borrowed from the
//! model's region, a vmmap line as read, or a snapshot's region.

use serde::Serialize;

use super::bytes::{opt_string, opt_u64};
use super::docs::Value;
use crate::model::region::{Purge, Region};
use crate::model::sizes::{Figure, Sizes};
use crate::model::snapshot::SnapRegion;
use crate::model::vmmap::VRegion;

/// A mapping as a region object reads it, borrowed: the model's
/// [`Region`] (with what a document adds: its category, its line), a
/// vmmap region line as it was read, or a snapshot's region.
#[derive(Debug, Clone, Copy)]
pub struct RegionRef<'a> {
    pub(super) line: usize,
    pub(super) category: &'a str,
    pub(super) start: Option<u64>,
    pub(super) end: Option<u64>,
    pub(super) perms: &'a str,
    pub(super) max_perms: Option<&'a str>,
    pub(super) offset: Option<u64>,
    pub(super) device: Option<&'a str>,
    pub(super) inode: Option<u64>,
    pub(super) path: Option<&'a str>,
    pub(super) region_type: Option<&'a str>,
    pub(super) purge: Option<Purge>,
    pub(super) share_mode: Option<&'a str>,
    pub(super) vm_flags: Option<&'a str>,
    pub(super) attributes: &'a [(String, String)],
    figures: Figures<'a>,
}

/// A mapping's figures: its sizes, or a vmmap line's four columns
/// (VSIZE, RSDNT, DIRTY, SWAP).
#[derive(Debug, Clone, Copy)]
enum Figures<'a> {
    Sizes(&'a Sizes),
    Columns([Option<u64>; 4]),
}

impl<'a> RegionRef<'a> {
    /// A Linux region, of category key `category` (`analyze::categorize`).
    pub fn linux(r: &'a Region, category: &'a str) -> RegionRef<'a> {
        RegionRef { category, purge: None, ..RegionRef::vmmap(0, r) }
    }

    /// A vmmap region read from input line `line`.
    pub fn vmmap(line: usize, r: &'a Region) -> RegionRef<'a> {
        RegionRef {
            line,
            category: "",
            start: r.start,
            end: r.end,
            perms: &r.perms,
            max_perms: r.max_perms.as_deref(),
            offset: r.offset,
            device: r.device.as_deref(),
            inode: r.inode,
            path: r.path.as_deref(),
            region_type: r.region_type.as_deref(),
            purge: Some(r.purge),
            share_mode: r.share_mode.as_deref(),
            vm_flags: r.vm_flags.as_deref(),
            attributes: &r.attributes,
            figures: Figures::Sizes(&r.sizes),
        }
    }

    /// A vmmap region line, as it was read from input line `line`.
    pub fn vmmap_line(line: usize, r: &VRegion<'a>) -> RegionRef<'a> {
        RegionRef {
            line,
            category: "",
            start: r.start,
            end: r.end,
            perms: r.prot,
            max_perms: r.max_prot,
            offset: None,
            device: None,
            inode: None,
            path: r.detail,
            region_type: Some(r.region_type),
            purge: Some(r.purge),
            share_mode: r.share_mode,
            vm_flags: None,
            attributes: &[],
            figures: Figures::Columns([r.vsize, r.resident, r.dirty, r.swap]),
        }
    }

    /// A snapshot's region.
    pub fn snapshot(r: &'a SnapRegion) -> RegionRef<'a> {
        RegionRef {
            line: 0,
            category: &r.category,
            start: r.start,
            end: r.end,
            perms: &r.perms,
            max_perms: None,
            offset: r.offset,
            device: None,
            inode: r.inode,
            path: r.path.as_deref(),
            region_type: r.region_type.as_deref(),
            purge: r.purge,
            share_mode: None,
            vm_flags: None,
            attributes: &[],
            figures: Figures::Sizes(&r.sizes),
        }
    }

    /// The figure `f`, as its sizes or columns have it.
    pub(super) fn figure(&self, f: Figure) -> Option<u64> {
        match self.figures {
            Figures::Sizes(s) => s.field(f),
            Figures::Columns([size, rss, dirty, swap]) => match f {
                Figure::Size => size,
                Figure::Rss => rss,
                Figure::Dirty => dirty,
                Figure::Swap => swap,
                _ => None,
            },
        }
    }

    /// What key value `v` holds here.
    pub(super) fn get(&self, v: Value) -> Got<'a> {
        match v {
            Value::Line => Got::Number(Some(self.line as u64)),
            Value::Start => Got::Number(self.start),
            Value::End => Got::Number(self.end),
            Value::Offset => Got::Number(self.offset),
            Value::Inode => Got::Number(self.inode),
            Value::Figure(f) => Got::Number(self.figure(f)),
            Value::Perms => Got::Text(Some(self.perms)),
            Value::Category => Got::Text(Some(self.category)),
            Value::MaxPerms => Got::Text(self.max_perms),
            Value::Device => Got::Text(self.device),
            Value::Path => Got::Text(self.path),
            Value::RegionType => Got::Text(self.region_type),
            Value::ShareMode => Got::Text(self.share_mode),
            Value::VmFlags => Got::Text(self.vm_flags),
            Value::Purge => Got::Text(self.purge.map(Purge::code)),
        }
    }

    /// Its sizes, when the document writes the figures it has.
    pub(super) fn sizes(&self) -> Option<&'a Sizes> {
        match self.figures {
            Figures::Sizes(s) => Some(s),
            Figures::Columns(_) => None,
        }
    }
}

/// A value of a region, as it is written.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(untagged)]
pub(super) enum Got<'a> {
    Number(Option<u64>),
    Text(Option<&'a str>),
}

impl Got<'_> {
    pub(super) fn is_none(self) -> bool {
        matches!(self, Got::Number(None) | Got::Text(None))
    }

    #[inline]
    pub(super) fn write(self, out: &mut Vec<u8>) {
        match self {
            Got::Number(n) => opt_u64(out, n),
            Got::Text(t) => opt_string(out, t),
        }
    }
}
