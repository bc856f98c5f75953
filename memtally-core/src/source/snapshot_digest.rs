//! Reads a `memtally snapshot` document into a [`Digest`] as it streams
//! by: each region is parsed, counted into its process's path sums and
//! identities, and dropped unless asked for. Memory grows by about 8
//! bytes a region (its identity), not by the region.

use std::collections::HashSet;
use std::fmt;
use std::io::Read;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::model::snapshot::{Digest, RegionDigest, SnapProcess, SnapRegion, Snapshot};

/// Reads a snapshot from `r`, keeping of process `i`'s regions those whose
/// [`SnapRegion::id`] is in `keep[i]` (none when `keep` has no such
/// entry); every region when `keep` is `None`.
pub fn read(r: impl Read, keep: Option<&[HashSet<u64>]>) -> serde_json::Result<Digest> {
    let mut de = serde_json::Deserializer::from_reader(r);
    let d = SnapshotSeed { keep }.deserialize(&mut de)?;
    de.end()?;
    Ok(d)
}

struct SnapshotSeed<'a> {
    keep: Option<&'a [HashSet<u64>]>,
}

impl<'de> DeserializeSeed<'de> for SnapshotSeed<'_> {
    type Value = Digest;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Digest, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for SnapshotSeed<'_> {
    type Value = Digest;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a memtally snapshot object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Digest, A::Error> {
        // Everything but the processes is small: kept as JSON, then typed.
        let mut head = Map::new();
        let mut processes = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == "processes" {
                processes = Some(map.next_value_seed(ProcessesSeed { keep: self.keep })?);
            } else {
                head.insert(key, map.next_value::<Value>()?);
            }
        }
        let processes = processes.ok_or_else(|| serde::de::Error::missing_field("processes"))?;
        head.insert("processes".into(), Value::Array(Vec::new()));
        let snapshot: Snapshot =
            serde_json::from_value(Value::Object(head)).map_err(serde::de::Error::custom)?;
        let mut d = Digest::empty(snapshot);
        for (p, regions) in processes {
            d.snapshot.processes.push(p);
            d.push(regions);
        }
        Ok(d)
    }
}

type ProcessDigest = (SnapProcess, RegionDigest);

struct ProcessesSeed<'a> {
    keep: Option<&'a [HashSet<u64>]>,
}

impl<'de> DeserializeSeed<'de> for ProcessesSeed<'_> {
    type Value = Vec<ProcessDigest>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for ProcessesSeed<'_> {
    type Value = Vec<ProcessDigest>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of processes")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        let none = HashSet::new();
        loop {
            let keep = match self.keep {
                None => None,
                Some(k) => Some(k.get(out.len()).unwrap_or(&none)),
            };
            let Some(p) = seq.next_element_seed(ProcessSeed { keep })? else { break };
            out.push(p);
        }
        Ok(out)
    }
}

struct ProcessSeed<'a> {
    keep: Option<&'a HashSet<u64>>,
}

impl<'de> DeserializeSeed<'de> for ProcessSeed<'_> {
    type Value = ProcessDigest;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ProcessSeed<'_> {
    type Value = ProcessDigest;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a snapshot process object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut head = Map::new();
        let mut regions = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == "regions" {
                regions = Some(map.next_value_seed(RegionsSeed { keep: self.keep })?);
            } else {
                head.insert(key, map.next_value::<Value>()?);
            }
        }
        let (kept, digest) = regions.ok_or_else(|| serde::de::Error::missing_field("regions"))?;
        head.insert("regions".into(), Value::Array(Vec::new()));
        let mut p: SnapProcess =
            serde_json::from_value(Value::Object(head)).map_err(serde::de::Error::custom)?;
        p.regions = kept;
        Ok((p, digest))
    }
}

struct RegionsSeed<'a> {
    keep: Option<&'a HashSet<u64>>,
}

impl<'de> DeserializeSeed<'de> for RegionsSeed<'_> {
    type Value = (Vec<SnapRegion>, RegionDigest);
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for RegionsSeed<'_> {
    type Value = (Vec<SnapRegion>, RegionDigest);
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of regions")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut digest = RegionDigest::default();
        let mut kept = Vec::new();
        while let Some(r) = seq.next_element::<SnapRegion>()? {
            digest.add(&r);
            if self.keep.is_none_or(|k| k.contains(&r.id())) {
                kept.push(r);
            }
        }
        Ok((kept, digest))
    }
}
