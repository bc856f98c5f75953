//! The JSON of `memtally vmmap` (docs/vmmap-json.md) read from a stream:
//! each region handed to a [`VRegionSink`] as serde reads it, as the text
//! reader hands its region lines, never a list of them nor a tree of the
//! document. What a snapshot takes besides (its header and summary rows)
//! is kept as written.

use std::fmt;
use std::io::Read;

use serde::de::{DeserializeSeed, Error as _, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use crate::model::vmmap::{Document, Header, SummaryRow, VRegion, VRegionSink};
use crate::model::Purge;

/// What [`read`] does with a key of another document's shape (`show`'s
/// JSON, a snapshot's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OtherKeys {
    /// The document was told to be vmmap's by all its keys: passed over.
    Skipped,
    /// Not yet told: an error at the first such key, the document read
    /// no further (the caller reads it whole, which tells its shape).
    Refused,
}

/// The document in `r`, its regions handed to `sink` (their count in
/// `regions`; the line handed with each is 0). One without `header` and
/// `regions_read` is an error, as one with a key of another shape is
/// where `others` says so.
pub(crate) fn read(
    r: impl Read,
    others: OtherKeys,
    sink: &mut impl VRegionSink,
) -> serde_json::Result<Document> {
    let mut de = serde_json::Deserializer::from_reader(r);
    let doc = serde::Deserializer::deserialize_map(&mut de, Top(sink, others))?;
    de.end()?;
    Ok(doc)
}

/// A region of the JSON view: what a snapshot takes of it.
#[derive(Deserialize)]
struct VmmapRegion {
    region_type: Option<String>,
    start: Option<u64>,
    end: Option<u64>,
    vsize: Option<u64>,
    resident: Option<u64>,
    dirty: Option<u64>,
    swap: Option<u64>,
    purge: Option<Purge>,
    protection: Option<String>,
    detail: Option<String>,
}

impl VmmapRegion {
    /// The region as the text reader hands it (a missing type or
    /// protection is `""`, a missing purge state unmarked).
    fn as_vregion(&self) -> VRegion<'_> {
        VRegion {
            region_type: self.region_type.as_deref().unwrap_or_default(),
            start: self.start,
            end: self.end,
            vsize: self.vsize,
            resident: self.resident,
            dirty: self.dirty,
            swap: self.swap,
            prot: self.protection.as_deref().unwrap_or_default(),
            max_prot: None,
            share_mode: None,
            purge: self.purge.unwrap_or_default(),
            detail: self.detail.as_deref(),
        }
    }
}

/// The document's object.
struct Top<'s, S>(&'s mut S, OtherKeys);

impl<'de, S: VRegionSink> Visitor<'de> for Top<'_, S> {
    type Value = Document;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Document, A::Error> {
        let mut header: Option<Header> = None;
        let mut summary: Option<Vec<SummaryRow>> = None;
        let (mut regions, mut listed, mut read) = (0u64, false, false);
        while let Some(key) = m.next_key::<String>()? {
            match key.as_str() {
                "header" if header.is_none() => header = Some(m.next_value()?),
                "summary" if summary.is_none() => summary = Some(m.next_value()?),
                "regions" if !listed => {
                    regions = m.next_value_seed(Regions(&mut *self.0))?;
                    listed = true;
                }
                "header" | "summary" | "regions" => {
                    return Err(A::Error::duplicate_field(match key.as_str() {
                        "header" => "header",
                        "summary" => "summary",
                        _ => "regions",
                    }))
                }
                // Keys of the other shapes (`show`'s, a snapshot's).
                "memtally_snapshot" | "pid" | "processes" | "categories" | "comm" | "command"
                | "by"
                    if self.1 == OtherKeys::Refused =>
                {
                    return Err(A::Error::custom("not the JSON of vmmap"))
                }
                _ => {
                    read |= key == "regions_read";
                    m.next_value::<IgnoredAny>()?;
                }
            }
        }
        match (header, read) {
            (Some(header), true) => Ok(Document {
                header,
                summary: summary.unwrap_or_default(),
                regions,
                ..Default::default()
            }),
            _ => Err(A::Error::custom("not the JSON of vmmap")),
        }
    }
}

/// The document's `regions`, each handed on as read; how many.
struct Regions<'s, S>(&'s mut S);

impl<'de, S: VRegionSink> DeserializeSeed<'de> for Regions<'_, S> {
    type Value = u64;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<u64, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, S: VRegionSink> Visitor<'de> for Regions<'_, S> {
    type Value = u64;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a sequence")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<u64, A::Error> {
        let mut n = 0;
        while let Some(r) = s.next_element::<VmmapRegion>()? {
            n += 1;
            // A sink's stop is not asked for here: every region is read.
            let _ = self.0.region(0, &r.as_vregion());
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Flow;

    #[test]
    fn regions_are_handed_on_and_other_shapes_refused_at_their_key() {
        let header = serde_json::to_string(&Header { pid: Some(7), ..Default::default() }).unwrap();
        let doc = format!(
            r#"{{"regions":[{{"region_type":"Stack","start":4096,"end":8192,"vsize":4096,
            "dirty":4096,"purge":"V","protection":"rw-","detail":"thread 1","x":1}}],
            "regions_read":1,"header":{header},"summary":[]}}"#
        );
        struct Seen(Vec<(String, Option<u64>, Purge)>);
        impl VRegionSink for Seen {
            fn region(&mut self, _line: usize, r: &VRegion<'_>) -> Flow {
                self.0.push((r.region_type.to_string(), r.dirty, r.purge));
                Flow::Continue
            }
        }
        let mut seen = Seen(Vec::new());
        let d = read(doc.as_bytes(), OtherKeys::Refused, &mut seen).unwrap();
        assert_eq!((d.regions, d.header.pid), (1, Some(7)));
        assert_eq!(seen.0, [("Stack".to_string(), Some(4096), Purge::Volatile)]);
        let pid = format!(r#"{{"pid":1,"regions":[],"regions_read":0,"header":{header}}}"#);
        assert!(read(pid.as_bytes(), OtherKeys::Refused, &mut Seen(Vec::new())).is_err());
        assert!(read(pid.as_bytes(), OtherKeys::Skipped, &mut Seen(Vec::new())).is_ok());
        let unread = format!(r#"{{"regions":[],"header":{header}}}"#);
        assert!(read(unread.as_bytes(), OtherKeys::Skipped, &mut Seen(Vec::new())).is_err());
    }
}
