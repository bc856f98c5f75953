//! Reading [`Sizes`] from a JSON object as its entries stream by, with no
//! tree of values in between: each key is matched against the known
//! figures without a copy, and only a name this build does not know is
//! kept as a string. A snapshot's region and row objects are read through
//! [`SizesReader`], so reading one costs no allocation per figure.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::LazyLock;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::sizes::{Sizes, KNOWN_KEYS};

/// The figures of one object, gathered key by key. Reads exactly as a
/// map of the whole object then kept integers did: the last value of a
/// key wins, a non-integer value leaves the figure absent, and unknown
/// names go to `extra` in name order (the first [`super::sizes::MAX_EXTRA`]).
#[derive(Default)]
pub(crate) struct SizesReader {
    sizes: Sizes,
    unknown: BTreeMap<String, Option<u64>>,
}

impl SizesReader {
    /// Reads the value of entry `key` from `map` as a figure.
    pub(crate) fn entry<'de, A: MapAccess<'de>>(
        &mut self,
        key: &str,
        map: &mut A,
    ) -> Result<(), A::Error> {
        let value = map.next_value::<Integer>()?.0;
        match known_at(key) {
            Some(at) => {
                if let Some(slot) = self.sizes.slot_at(at) {
                    *slot = value;
                }
            }
            None => {
                self.unknown.insert(key.to_string(), value);
            }
        }
        Ok(())
    }

    /// The figures read.
    pub(crate) fn finish(self) -> Sizes {
        let mut sizes = self.sizes;
        for (name, value) in self.unknown {
            if let Some(v) = value {
                sizes.set(&name, v);
            }
        }
        sizes
    }
}

/// Where the figure named `key` is in [`KNOWN_KEYS`]: one hash and one
/// comparison (a search of the names, each compared, was a tenth of
/// `diff`'s time).
fn known_at(key: &str) -> Option<usize> {
    type Index = HashMap<&'static str, usize, foldhash::fast::FixedState>;
    static INDEX: LazyLock<Index> =
        LazyLock::new(|| KNOWN_KEYS.iter().enumerate().map(|(i, k)| (k.name, i)).collect());
    INDEX.get(key).copied()
}

/// A JSON value read as a figure: `Some` for a non-negative integer,
/// `None` for anything else (skipped without being kept).
struct Integer(Option<u64>);

impl<'de> Deserialize<'de> for Integer {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(IntegerVisitor)
    }
}

struct IntegerVisitor;

impl<'de> Visitor<'de> for IntegerVisitor {
    type Value = Integer;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_u64<E>(self, v: u64) -> Result<Integer, E> {
        Ok(Integer(Some(v)))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Integer, E> {
        Ok(Integer(u64::try_from(v).ok()))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Integer, E> {
        Ok(Integer(None))
    }
    fn visit_bool<E>(self, _: bool) -> Result<Integer, E> {
        Ok(Integer(None))
    }
    fn visit_str<E>(self, _: &str) -> Result<Integer, E> {
        Ok(Integer(None))
    }
    fn visit_unit<E>(self) -> Result<Integer, E> {
        Ok(Integer(None))
    }
    fn visit_none<E>(self) -> Result<Integer, E> {
        Ok(Integer(None))
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Integer, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Integer, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Integer(None))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Integer, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Integer(None))
    }
}

/// A map key read into a reusable buffer (no allocation once it is big
/// enough): the keys of a snapshot are short ASCII names.
pub(crate) struct KeyInto<'a>(pub(crate) &'a mut String);

impl<'de> serde::de::DeserializeSeed<'de> for KeyInto<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeyInto<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string key")
    }
    fn visit_str<E>(self, v: &str) -> Result<(), E> {
        self.0.clear();
        self.0.push_str(v);
        Ok(())
    }
}

/// Reads a flat map back: every integer value becomes the figure of that
/// name (unknown names go to `extra`); other values (strings, nulls) are
/// skipped, so a region or row object can be read as its sizes.
impl<'de> Deserialize<'de> for Sizes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(SizesVisitor)
    }
}

struct SizesVisitor;

impl<'de> Visitor<'de> for SizesVisitor {
    type Value = Sizes;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a map of sizes in bytes")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Sizes, A::Error> {
        let mut reader = SizesReader::default();
        let mut key = String::new();
        while map.next_key_seed(KeyInto(&mut key))?.is_some() {
            reader.entry(&key, &mut map)?;
        }
        Ok(reader.finish())
    }
}
