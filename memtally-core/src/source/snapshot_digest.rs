//! Reads a `memtally snapshot` document into a [`Digest`] as it streams
//! by: each region is parsed, counted into its process's path sums and
//! identities, and dropped unless asked for. Memory grows by about 8
//! bytes a region (its identity), not by the region.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::io::Read;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::model::snapshot::{Digest, RegionDigest, SnapProcess, SnapRegion, Snapshot};

/// Reads a snapshot from `r`, keeping of process `i`'s regions those whose
/// [`SnapRegion::id`] is in `keep[i]` (none when `keep` has no such
/// entry); every region when `keep` is `None`.
pub fn read(r: impl Read, keep: Option<&[HashSet<u64>]>) -> serde_json::Result<Digest> {
    let keep = match keep {
        None => Keep::All,
        Some(k) => Keep::Only(k),
    };
    read_keeping(r, keep)
}

/// Reads the later snapshot of a `diff` from `r`, keeping (at least) every
/// region that `before` may not have: so it is read once, where keeping
/// none and reading again for the ones that appeared read it twice.
/// Kept: a region absent from some process of `before` with the region's
/// process's pid (from `before`'s one process when it has one; every
/// region of a process whose `pid` key comes after its regions), and any
/// region with a purge state. A process no process of `before` can match
/// keeps none.
pub fn read_against(r: impl Read, before: &Digest) -> serde_json::Result<Digest> {
    let mut by_pid: HashMap<Option<u32>, Vec<&[u64]>> = HashMap::new();
    for (p, ids) in before.snapshot.processes.iter().zip(&before.ids) {
        by_pid.entry(p.pid).or_default().push(ids);
    }
    let only = match before.ids.as_slice() {
        [one] => Some(one.as_slice()),
        _ => None,
    };
    read_keeping(r, Keep::Missing(&Against { by_pid, only }))
}

fn read_keeping(r: impl Read, keep: Keep<'_>) -> serde_json::Result<Digest> {
    let mut de = serde_json::Deserializer::from_reader(r);
    let d = SnapshotSeed { keep }.deserialize(&mut de)?;
    de.end()?;
    Ok(d)
}

/// The sorted region identities of the earlier snapshot, by pid.
struct Against<'a> {
    by_pid: HashMap<Option<u32>, Vec<&'a [u64]>>,
    /// Its only process's, when it has one (matched whatever its pid).
    only: Option<&'a [u64]>,
}

/// Which regions a read keeps.
#[derive(Clone, Copy)]
enum Keep<'a> {
    All,
    /// Of process `i`, those in `[i]`.
    Only(&'a [HashSet<u64>]),
    /// Those an earlier snapshot may lack (see [`read_against`]).
    Missing(&'a Against<'a>),
}

/// Which regions one process keeps.
#[derive(Clone, Copy)]
enum KeepHere<'a> {
    All,
    Only(&'a HashSet<u64>),
    /// Those missing from any of these sorted identity lists.
    MissingFrom(&'a [&'a [u64]], Option<&'a [u64]>),
    /// Not yet known (the pid is not read yet): every region, to be safe.
    Unknown(&'a Against<'a>),
}

impl KeepHere<'_> {
    fn keeps(&self, r: &SnapRegion) -> bool {
        match *self {
            KeepHere::All | KeepHere::Unknown(_) => true,
            KeepHere::Only(k) => k.contains(&r.id()),
            KeepHere::MissingFrom(lists, only) => {
                let id = r.id();
                r.purge.is_some()
                    || lists.iter().chain(only.as_ref()).any(|ids| ids.binary_search(&id).is_err())
            }
        }
    }
}

struct SnapshotSeed<'a> {
    keep: Keep<'a>,
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
    keep: Keep<'a>,
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
                Keep::All => KeepHere::All,
                Keep::Only(k) => KeepHere::Only(k.get(out.len()).unwrap_or(&none)),
                Keep::Missing(a) => KeepHere::Unknown(a),
            };
            let Some(p) = seq.next_element_seed(ProcessSeed { keep })? else { break };
            out.push(p);
        }
        Ok(out)
    }
}

struct ProcessSeed<'a> {
    keep: KeepHere<'a>,
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
        let mut keep = self.keep;
        while let Some(key) = map.next_key::<String>()? {
            if key == "regions" {
                regions = Some(map.next_value_seed(RegionsSeed { keep })?);
            } else {
                let value = map.next_value::<Value>()?;
                if let (KeepHere::Unknown(a), "pid") = (keep, key.as_str()) {
                    let pid = value.as_u64().and_then(|p| u32::try_from(p).ok());
                    keep = match a.by_pid.get(&pid) {
                        Some(lists) => KeepHere::MissingFrom(lists, a.only),
                        None => KeepHere::MissingFrom(&[], a.only),
                    };
                }
                head.insert(key, value);
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
    keep: KeepHere<'a>,
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
            if self.keep.keeps(&r) {
                kept.push(r);
            }
        }
        Ok((kept, digest))
    }
}
