//! A region's JSON object written straight into the output buffer, with
//! the key order of [`RegionJson`](super::json::RegionJson) sorted: the
//! hot path of `show --format json` on a process with many mappings.

use memtally_core::analyze::categorize;
use memtally_core::model::sizes::KNOWN_KEYS;
use memtally_core::model::Region;

use memtally_core::write::json_bytes::{opt_string, opt_u64, string, ShortBytes, SHORT_BYTES};

/// Which value of a region a JSON key takes.
#[derive(Debug, Clone, Copy)]
enum Field {
    Start,
    End,
    Perms,
    Offset,
    Device,
    Inode,
    Path,
    Category,
    VmFlags,
    Attribute(usize),
    Known(usize),
    Extra(usize),
}

/// The keys of a region's JSON object in print order, worked out once for
/// each shape of region (which attributes and figures it has) and reused
/// while the next region has the same shape, as nearly all do.
#[derive(Default)]
pub(super) struct RegionWriter {
    attributes: Vec<String>,
    extras: Vec<String>,
    known: u64,
    /// (`"key":` as JSON, `,` before each but the first; field); `None`
    /// until the first region.
    layout: Option<Vec<(Key, Field)>>,
    /// What the layout's keys and figures take at most, reserved once a
    /// region so that no key or number grows the buffer on its own.
    most_bytes: usize,
}

/// A key as its JSON bytes: every key smaps has fits a [`ShortBytes`]
/// (no call to `memmove` a key); a longer one is written from its own.
enum Key {
    Short(ShortBytes),
    Long(Vec<u8>),
}

/// The most bytes an integer takes (`u64::MAX`).
const NUMBER_MOST: usize = 20;

impl Key {
    fn new(bytes: Vec<u8>) -> Key {
        match ShortBytes::new(&bytes) {
            Some(short) => Key::Short(short),
            None => Key::Long(bytes),
        }
    }

    #[inline]
    fn write(&self, w: &mut Vec<u8>) {
        match self {
            Key::Short(short) => short.write(w),
            Key::Long(bytes) => w.extend_from_slice(bytes),
        }
    }
}

impl RegionWriter {
    fn same_shape(&self, r: &Region, known: u64) -> bool {
        self.layout.is_some()
            && self.known == known
            && self.attributes.len() == r.attributes.len()
            && self.attributes.iter().zip(&r.attributes).all(|(a, (b, _))| a == b)
            && self.extras.len() == r.sizes.extra.len()
            && self.extras.iter().zip(&r.sizes.extra).all(|(a, (b, _))| a == b)
    }

    /// The key order `RegionJson` prints with: sorted, a later insert of
    /// the same key replacing the earlier value.
    fn relayout(&mut self, r: &Region, known: u64) -> std::io::Result<()> {
        let mut keys: std::collections::BTreeMap<&str, Field> = std::collections::BTreeMap::new();
        for (k, f) in [
            ("start", Field::Start),
            ("end", Field::End),
            ("perms", Field::Perms),
            ("offset", Field::Offset),
            ("device", Field::Device),
            ("inode", Field::Inode),
            ("path", Field::Path),
            ("category", Field::Category),
            ("vm_flags", Field::VmFlags),
        ] {
            keys.insert(k, f);
        }
        for (i, (k, _)) in r.attributes.iter().enumerate() {
            keys.insert(k, Field::Attribute(i));
        }
        for (i, k) in KNOWN_KEYS.iter().enumerate() {
            if known & (1 << i) != 0 {
                keys.insert(k.name, Field::Known(i));
            }
        }
        for (i, (k, _)) in r.sizes.extra.iter().enumerate() {
            keys.insert(k, Field::Extra(i));
        }
        let mut layout = Vec::with_capacity(keys.len());
        let mut most_bytes = 2;
        for (k, f) in keys {
            let mut key = Vec::with_capacity(k.len() + 4);
            if !layout.is_empty() {
                key.push(b',');
            }
            serde_json::to_writer(&mut key, k)?;
            key.push(b':');
            most_bytes += key.len().max(SHORT_BYTES) + NUMBER_MOST;
            layout.push((Key::new(key), f));
        }
        self.layout = Some(layout);
        self.most_bytes = most_bytes;
        self.known = known;
        self.attributes = r.attributes.iter().map(|(k, _)| k.clone()).collect();
        self.extras = r.sizes.extra.iter().map(|(k, _)| k.clone()).collect();
        Ok(())
    }

    pub(super) fn write(&mut self, r: &Region, w: &mut Vec<u8>) -> std::io::Result<()> {
        let known_values = r.sizes.known();
        let known =
            known_values.iter().enumerate().fold(0, |m, (i, v)| m | ((v.is_some() as u64) << i));
        if !self.same_shape(r, known) {
            self.relayout(r, known)?;
        }
        let layout = self.layout.as_deref().unwrap_or_default();
        // One reserve for the region; strings reserve what they add.
        w.reserve(self.most_bytes);
        w.push(b'{');
        for (key, field) in layout {
            key.write(w);
            match *field {
                Field::Start => opt_u64(w, r.start),
                Field::End => opt_u64(w, r.end),
                Field::Offset => opt_u64(w, r.offset),
                Field::Inode => opt_u64(w, r.inode),
                Field::Perms => string(w, &r.perms),
                Field::Device => opt_string(w, r.device.as_deref()),
                Field::Path => opt_string(w, r.path.as_deref()),
                Field::VmFlags => opt_string(w, r.vm_flags.as_deref()),
                Field::Category => string(w, categorize(r).key()),
                Field::Attribute(i) => string(w, &r.attributes[i].1),
                Field::Known(i) => opt_u64(w, known_values[i]),
                Field::Extra(i) => opt_u64(w, Some(r.sizes.extra[i].1)),
            }
        }
        w.push(b'}');
        Ok(())
    }
}
