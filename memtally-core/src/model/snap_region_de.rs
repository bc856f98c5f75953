//! Reading a snapshot region straight from its JSON object, as a
//! [`RegionRef`]: each key matched as it comes (no tree of values, no
//! buffering as `serde(flatten)` does), the region's own fields typed and
//! the rest read as figures ([`SizesReader`]); strings borrowed from the
//! input where they have no escape (a snapshot line read from a slice).
//! [`SnapRegion`] is read through it and owned.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserialize, Deserializer, Error, MapAccess, Visitor};

use super::region::Purge;
use super::sizes::Sizes;
use super::sizes_de::SizesReader;
use super::snapshot::{path_key_of, region_id, SnapRegion};

/// A snapshot region whose strings are borrowed where they can be.
#[derive(Debug)]
pub(crate) struct RegionRef<'a> {
    pub start: Option<u64>,
    pub end: Option<u64>,
    pub perms: Cow<'a, str>,
    pub path: Option<Cow<'a, str>>,
    pub category: Cow<'a, str>,
    pub region_type: Option<Cow<'a, str>>,
    pub purge: Option<Purge>,
    pub offset: Option<u64>,
    pub inode: Option<u64>,
    pub sizes: Sizes,
}

impl RegionRef<'_> {
    /// The region, owned.
    pub(crate) fn into_owned(self) -> SnapRegion {
        SnapRegion {
            start: self.start,
            end: self.end,
            perms: self.perms.into_owned(),
            path: self.path.map(Cow::into_owned),
            category: self.category.into_owned(),
            region_type: self.region_type.map(Cow::into_owned),
            purge: self.purge,
            offset: self.offset,
            inode: self.inode,
            sizes: self.sizes,
        }
    }

    /// [`SnapRegion::id`] of the owned region, without owning it.
    pub(crate) fn id(&self) -> u64 {
        region_id(self.start, self.end, &self.perms, self.path.as_deref())
    }

    /// [`SnapRegion`]'s per-path grouping name.
    pub(crate) fn path_key(&self) -> &str {
        let region_type = self.region_type.as_ref().map(|_| self.category.as_ref());
        path_key_of(self.path.as_deref(), region_type)
    }
}

impl<'de> Deserialize<'de> for RegionRef<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(RegionVisitor)
    }
}

impl<'de> Deserialize<'de> for SnapRegion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        RegionRef::deserialize(d).map(RegionRef::into_owned)
    }
}

/// A string, borrowed from the input when it has no escape.
struct Text<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(TextVisitor)
    }
}

struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = Text<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Text<'de>, E> {
        Ok(Text(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Text<'de>, E> {
        Ok(Text(Cow::Owned(v.to_string())))
    }
    fn visit_string<E>(self, v: String) -> Result<Text<'de>, E> {
        Ok(Text(Cow::Owned(v)))
    }
}

struct RegionVisitor;

/// A field read once; a second time is an error, as the derived reader had it.
fn once<'de, T: Deserialize<'de>, A: MapAccess<'de>>(
    slot: &mut Option<T>,
    name: &'static str,
    map: &mut A,
) -> Result<(), A::Error> {
    if slot.is_some() {
        return Err(A::Error::duplicate_field(name));
    }
    *slot = Some(map.next_value()?);
    Ok(())
}

impl<'de> Visitor<'de> for RegionVisitor {
    type Value = RegionRef<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a snapshot region object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RegionRef<'de>, A::Error> {
        let mut start: Option<Option<u64>> = None;
        let mut end: Option<Option<u64>> = None;
        let mut perms: Option<Text<'de>> = None;
        let mut path: Option<Option<Text<'de>>> = None;
        let mut category: Option<Text<'de>> = None;
        let mut region_type: Option<Option<Text<'de>>> = None;
        let mut purge: Option<Option<Purge>> = None;
        let mut offset: Option<Option<u64>> = None;
        let mut inode: Option<Option<u64>> = None;
        let mut sizes = SizesReader::default();
        while let Some(Text(key)) = map.next_key::<Text<'de>>()? {
            match key.as_ref() {
                "start" => once(&mut start, "start", &mut map)?,
                "end" => once(&mut end, "end", &mut map)?,
                "perms" => once(&mut perms, "perms", &mut map)?,
                "path" => once(&mut path, "path", &mut map)?,
                "category" => once(&mut category, "category", &mut map)?,
                "region_type" => once(&mut region_type, "region_type", &mut map)?,
                "purge" => once(&mut purge, "purge", &mut map)?,
                "offset" => once(&mut offset, "offset", &mut map)?,
                "inode" => once(&mut inode, "inode", &mut map)?,
                other => sizes.entry(other, &mut map)?,
            }
        }
        let text = |t: Option<Option<Text<'de>>>| t.flatten().map(|t| t.0);
        Ok(RegionRef {
            start: start.flatten(),
            end: end.flatten(),
            perms: perms.map_or(Cow::Borrowed(""), |t| t.0),
            path: text(path),
            category: category.ok_or_else(|| A::Error::missing_field("category"))?.0,
            region_type: text(region_type),
            purge: purge.flatten(),
            offset: offset.flatten(),
            inode: inode.flatten(),
            sizes: sizes.finish(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sizes::MAX_EXTRA;
    use serde_json::Value;

    /// The derived reader's outcome, rebuilt the way it worked: the
    /// region's own fields typed, every other entry through a map of JSON
    /// values whose integers become figures.
    fn reference(json: &str) -> SnapRegion {
        let Value::Object(o) = serde_json::from_str::<Value>(json).unwrap() else { panic!() };
        let own = [
            "start",
            "end",
            "perms",
            "path",
            "category",
            "region_type",
            "purge",
            "offset",
            "inode",
        ];
        let get = |k: &str| o.get(k).cloned().unwrap_or(Value::Null);
        let mut sizes = crate::model::Sizes::default();
        let rest: std::collections::BTreeMap<&String, &Value> =
            o.iter().filter(|(k, _)| !own.contains(&k.as_str())).collect();
        for (k, v) in rest {
            if let Some(n) = v.as_u64() {
                sizes.set(k, n);
            }
        }
        SnapRegion {
            start: serde_json::from_value(get("start")).unwrap(),
            end: serde_json::from_value(get("end")).unwrap(),
            perms: o.get("perms").and_then(Value::as_str).unwrap_or_default().to_string(),
            path: serde_json::from_value(get("path")).unwrap(),
            category: o["category"].as_str().unwrap().to_string(),
            region_type: serde_json::from_value(get("region_type")).unwrap(),
            purge: serde_json::from_value(get("purge")).unwrap(),
            offset: serde_json::from_value(get("offset")).unwrap(),
            inode: serde_json::from_value(get("inode")).unwrap(),
            sizes,
        }
    }

    fn same(a: &SnapRegion, b: &SnapRegion) -> bool {
        serde_json::to_string(a).unwrap() == serde_json::to_string(b).unwrap() && a.sizes == b.sizes
    }

    #[test]
    fn reads_every_shape_as_the_derived_reader_did() {
        let many: String =
            (0..MAX_EXTRA + 5).rev().map(|i| format!(",\"zz_key_{i:03}\":{i}")).collect();
        let cases = [
            r#"{"start":4096,"end":8192,"perms":"rw-p","path":null,"category":"heap","offset":0,"inode":0,"rss":4096,"private_dirty":4096,"thp_eligible":"0"}"#.to_string(),
            r#"{"category":"MALLOC","region_type":"MALLOC","purge":"V","start":null,"end":null,"size":1,"dirty":2}"#.to_string(),
            // Unknown figures, non-integers, nested values, a repeated figure (the last wins).
            r#"{"category":"x","rss":1,"rss":"two","pss":-3,"swap":1.5,"new_key":7,"a":{"b":[1,2]},"b_key":[1],"anonymous":9,"anonymous":10}"#.to_string(),
            r#"{"category":"x","rss":"one","rss":5}"#.to_string(),
            format!("{{\"category\":\"many\"{many}}}"),
            r#"{"category":"x","path":"/usr/lib/libc.so.6","perms":"r-xp","start":1,"end":18446744073709551615}"#.to_string(),
        ];
        for json in &cases {
            let new: SnapRegion = serde_json::from_str(json).unwrap();
            let old = reference(json);
            assert!(same(&new, &old), "{json}\nnew {new:?}\nold {old:?}");
            let streamed: SnapRegion = serde_json::from_reader(json.as_bytes()).unwrap();
            assert!(same(&streamed, &old), "{json} from a reader");
        }
    }

    #[test]
    fn refuses_what_the_derived_reader_refused() {
        for json in [
            r#"{"start":1,"end":2}"#,
            r#"{"category":"x","start":"one"}"#,
            r#"{"category":"x","purge":"Q"}"#,
            r#"{"category":"x","category":"y"}"#,
            r#"{"category":1}"#,
            r#"[1,2]"#,
        ] {
            assert!(serde_json::from_str::<SnapRegion>(json).is_err(), "{json}");
        }
    }
}
