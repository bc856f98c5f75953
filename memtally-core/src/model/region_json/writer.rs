//! A region's object as bytes, straight into the output buffer: the
//! keys of its document in their order, the figures' keys made at
//! compile time from the figure list.

use std::marker::PhantomData;

use super::bytes::{decimal, opt_u64, string, ShortBytes, SHORT_BYTES};
use super::docs::{left_out, RegionDoc, SnapshotRegion};
use super::values::RegionRef;
use crate::model::region::Region;
use crate::model::sizes::{Sizes, KNOWN_KEYS};

/// `,"name":` of each of [`KNOWN_KEYS`], made at compile time.
static FIGURE_KEYS: [ShortBytes; KNOWN_KEYS.len()] = {
    let mut out = [const { ShortBytes::key("") }; KNOWN_KEYS.len()];
    let mut i = 0;
    while i < KNOWN_KEYS.len() {
        out[i] = ShortBytes::key(KNOWN_KEYS[i].name);
        i += 1;
    }
    out
};

/// The most bytes a number takes (`u64::MAX`).
const NUMBER_MOST: usize = 20;

/// Writes region objects of one document, straight into a buffer.
#[derive(Debug)]
pub struct RegionWriter<D> {
    /// A sorted document's key order for the last shape of region.
    layout: Option<Layout>,
    doc: PhantomData<D>,
}

impl<D: RegionDoc> Default for RegionWriter<D> {
    fn default() -> Self {
        RegionWriter { layout: None, doc: PhantomData }
    }
}

impl<D: RegionDoc> RegionWriter<D> {
    /// The known figures the document leaves out.
    const LEFT_OUT: u64 = left_out(&D::DOC);

    /// Appends `r`'s object.
    pub fn write(&mut self, r: &RegionRef<'_>, out: &mut Vec<u8>) {
        let at = out.len();
        if D::DOC.sorted {
            self.write_sorted(r, out);
        } else {
            self.write_listed(r, out);
        }
        close(out, at);
    }

    /// The keys in the order listed, then the figures.
    fn write_listed(&self, r: &RegionRef<'_>, out: &mut Vec<u8>) {
        for key in D::DOC.keys.iter() {
            let got = r.get(key.value);
            if key.omitted && got.is_none() {
                continue;
            }
            key.bytes.write(out);
            got.write(out);
        }
        if D::DOC.attributes {
            for (name, value) in r.attributes {
                out.push(b',');
                string(out, name);
                out.push(b':');
                string(out, value);
            }
        }
        if let Some(s) = r.sizes().filter(|_| D::DOC.figures.is_some()) {
            // One reserve for the figures: no key or number grows the
            // buffer on its own.
            out.reserve(KNOWN_KEYS.len() * (SHORT_BYTES + NUMBER_MOST));
            for (i, (key, value)) in FIGURE_KEYS.iter().zip(s.known()).enumerate() {
                if let Some(value) = value.filter(|_| Self::LEFT_OUT & 1 << i == 0) {
                    key.write(out);
                    decimal(out, value);
                }
            }
            for (name, value) in &s.extra {
                out.push(b',');
                string(out, name);
                out.push(b':');
                decimal(out, *value);
            }
        }
    }

    fn write_sorted(&mut self, r: &RegionRef<'_>, out: &mut Vec<u8>) {
        let sizes = r.sizes();
        let known = sizes.map(Sizes::known).unwrap_or([None; KNOWN_KEYS.len()]);
        let present = known.iter().enumerate().fold(0, |m, (i, v)| m | (v.is_some() as u64) << i);
        let present = present & !Self::LEFT_OUT;
        let layout = match self.layout.take() {
            Some(l) if l.fits(r, present) => l,
            _ => Layout::new::<D>(r, present),
        };
        out.reserve(layout.most_bytes);
        for (key, entry) in &layout.entries {
            key.write(out);
            match *entry {
                Entry::Key(i) => r.get(D::DOC.keys[i].value).write(out),
                Entry::Attribute(i) => string(out, &r.attributes[i].1),
                Entry::Figure(i) => opt_u64(out, known[i]),
                Entry::Extra(i) => opt_u64(out, sizes.map(|s| s.extra[i].1)),
            }
        }
        self.layout = Some(layout);
    }
}

/// Makes what was written from `at` on an object: the first key's comma
/// becomes its `{` (or an empty object's), then `}`.
fn close(out: &mut Vec<u8>, at: usize) {
    match out.get_mut(at) {
        Some(comma) => *comma = b'{',
        None => out.push(b'{'),
    }
    out.push(b'}');
}

/// Which value of a region a sorted object's key takes.
#[derive(Debug, Clone, Copy)]
enum Entry {
    /// One of the document's keys (its place in them).
    Key(usize),
    Attribute(usize),
    /// A known figure (its place in [`KNOWN_KEYS`]).
    Figure(usize),
    Extra(usize),
}

/// A key as the bytes before its value: a short one written as one
/// fixed copy, a longer one (an attribute of a crafted file) from its own.
#[derive(Debug)]
enum KeyBytes {
    Short(ShortBytes),
    Long(Vec<u8>),
}

impl KeyBytes {
    fn new(name: &str) -> KeyBytes {
        let mut bytes = vec![b','];
        string(&mut bytes, name);
        bytes.push(b':');
        match ShortBytes::new(&bytes) {
            Some(short) => KeyBytes::Short(short),
            None => KeyBytes::Long(bytes),
        }
    }

    #[inline]
    fn write(&self, out: &mut Vec<u8>) {
        match self {
            KeyBytes::Short(short) => short.write(out),
            KeyBytes::Long(bytes) => out.extend_from_slice(bytes),
        }
    }

    fn len(&self) -> usize {
        match self {
            KeyBytes::Short(short) => short.len(),
            KeyBytes::Long(bytes) => bytes.len(),
        }
    }
}

/// A sorted document's keys for one shape of region: which figures it
/// has, which attributes and unknown size keys, by name.
#[derive(Debug)]
struct Layout {
    present: u64,
    attributes: Vec<String>,
    extras: Vec<String>,
    entries: Vec<(KeyBytes, Entry)>,
    /// What the keys and their values take at most (strings aside).
    most_bytes: usize,
}

impl Layout {
    /// The keys sorted, a later key of the same name taking the place of
    /// the earlier (the order of a document built as a sorted map).
    fn new<D: RegionDoc>(r: &RegionRef<'_>, present: u64) -> Layout {
        let mut keys = std::collections::BTreeMap::new();
        for (i, k) in D::DOC.keys.iter().enumerate() {
            keys.insert(k.name, Entry::Key(i));
        }
        for (i, (name, _)) in r.attributes.iter().enumerate() {
            keys.insert(name, Entry::Attribute(i));
        }
        for (i, k) in KNOWN_KEYS.iter().enumerate().filter(|&(i, _)| present & 1 << i != 0) {
            keys.insert(k.name, Entry::Figure(i));
        }
        let extra = r.sizes().map_or(&[][..], |s| &s.extra[..]);
        for (i, (name, _)) in extra.iter().enumerate() {
            keys.insert(name, Entry::Extra(i));
        }
        let entries: Vec<(KeyBytes, Entry)> =
            keys.into_iter().map(|(name, e)| (KeyBytes::new(name), e)).collect();
        let most_bytes =
            entries.iter().map(|(k, _)| k.len().max(SHORT_BYTES) + NUMBER_MOST).sum::<usize>() + 2;
        Layout {
            present,
            attributes: r.attributes.iter().map(|(k, _)| k.clone()).collect(),
            extras: extra.iter().map(|(k, _)| k.clone()).collect(),
            entries,
            most_bytes,
        }
    }

    /// Whether `r` has this layout's shape.
    fn fits(&self, r: &RegionRef<'_>, present: u64) -> bool {
        let extra = r.sizes().map_or(&[][..], |s| &s.extra[..]);
        self.present == present
            && self.attributes.len() == r.attributes.len()
            && self.attributes.iter().zip(r.attributes).all(|(a, (b, _))| a == b)
            && self.extras.len() == extra.len()
            && self.extras.iter().zip(extra).all(|(a, (b, _))| a == b)
    }
}

/// Appends region `r`, of category key `category`, as a snapshot writes
/// it (the object of the
/// [`SnapRegion`](crate::model::snapshot::SnapRegion) it would make).
pub(crate) fn write_linux_region(out: &mut Vec<u8>, r: &Region, category: &str) {
    RegionWriter::<SnapshotRegion>::default().write(&RegionRef::linux(r, category), out);
}
