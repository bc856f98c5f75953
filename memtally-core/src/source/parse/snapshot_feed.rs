//! A one-object JSON document (a snapshot of format 1, as a report page
//! embeds it, or the JSON of `show`) read from a stream with its regions
//! handed on one at a time as serde reads them: never a list of them,
//! never a tree of the document. What is kept of a process besides its
//! regions (a few figures and its categories) is read as it is. Every
//! other reader of a snapshot hands its regions to the same [`RegionFeed`]
//! (a vmmap report's through [`VmmapFeed`]).

use std::borrow::Cow;
use std::fmt;
use std::io::Read;

use serde::de::{DeserializeSeed, Error as _, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::model::group::Grouper;
use crate::model::snap_region_de::RegionRef;
use crate::model::snapshot::{SnapProcess, SnapRegion, Snapshot, SnapshotKind, VmmapTypes};
use crate::model::vmmap::{Document, VRegion, VRegionSink};
use crate::model::{Flow, SizeSource, Sizes};

/// What a reader does with a document's regions, handed in order.
pub(crate) trait RegionFeed {
    /// A region of the process being read.
    fn region(&mut self, region: RegionRef<'_>);
    /// The regions handed since the last call are one process's.
    fn process(&mut self);
    /// The regions that follow are a vmmap report's (text or JSON).
    fn vmmap(&mut self) {}
}

/// A feed that can take back regions: what a snapshot file (whose
/// `dropped` lines do so) is read with.
pub(crate) trait LinesFeed: RegionFeed {
    /// The regions handed since the last process are no process's.
    fn dropped(&mut self);
    /// Where the line of the region handed next begins in the file read
    /// (a snapshot file's own, not one a page embeds).
    fn at(&mut self, _offset: u64) {}
    /// A snapshot file's process line, as it is kept, before its `process`.
    fn line(&mut self, _process: &mut SnapProcess) {}
}

/// Every region kept, by process: the whole snapshot, once
/// [`into_snapshot`](Kept::into_snapshot) puts them back.
#[derive(Default)]
pub(crate) struct Kept {
    processes: Vec<Vec<SnapRegion>>,
    pending: Vec<SnapRegion>,
}

impl RegionFeed for Kept {
    fn region(&mut self, region: RegionRef<'_>) {
        self.pending.push(region.into_owned());
    }
    fn process(&mut self) {
        self.processes.push(std::mem::take(&mut self.pending));
    }
}

impl LinesFeed for Kept {
    fn dropped(&mut self) {
        self.pending.clear();
    }
}

impl Kept {
    /// `snap`, read with this feed, with its regions (each process is
    /// handed its own: a reader calls [`RegionFeed::process`] once a process).
    pub(crate) fn into_snapshot(self, mut snap: Snapshot) -> Snapshot {
        for (p, regions) in snap.processes.iter_mut().zip(self.processes) {
            p.regions = regions;
        }
        snap
    }
}

/// A vmmap report's regions (text or JSON) handed to a feed as snapshot
/// regions (their category the region type, folded past the first
/// types) and summed by category as they come.
pub(crate) struct VmmapFeed<'f, F> {
    feed: &'f mut F,
    types: VmmapTypes,
    categories: Grouper,
}

impl<'f, F: RegionFeed> VmmapFeed<'f, F> {
    pub(crate) fn new(feed: &'f mut F) -> VmmapFeed<'f, F> {
        feed.vmmap();
        VmmapFeed { feed, types: VmmapTypes::default(), categories: Grouper::new() }
    }

    /// The snapshot of the report `doc` these regions were read from, its
    /// one process handed to the feed.
    pub(crate) fn finish(self, doc: &Document) -> Snapshot {
        self.feed.process();
        Snapshot::of_vmmap_folded(doc, self.categories.into_groups(), Vec::new(), self.types)
    }
}

impl<F: RegionFeed> VRegionSink for VmmapFeed<'_, F> {
    fn region(&mut self, _line: usize, r: &VRegion<'_>) -> Flow {
        let category = self.types.category(r.region_type);
        let sizes = SnapRegion::vmmap_sizes(r);
        self.categories.add_sizes(category, 1, &sizes);
        self.feed.region(RegionRef {
            start: r.start,
            end: r.end,
            perms: Cow::Borrowed(r.prot),
            path: r.detail.map(Cow::Borrowed),
            category: Cow::Borrowed(category),
            region_type: Some(Cow::Borrowed(r.region_type)),
            purge: Some(r.purge),
            offset: None,
            inode: None,
            sizes,
        });
        Flow::Continue
    }
}

/// The shapes read this way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FeedShape {
    /// A `memtally snapshot` document of one object (format 1).
    Snapshot,
    /// The JSON of `show`: of one process, or of several (told by its
    /// keys as `snapshot::Keys` tells them, as they come).
    Show,
    /// The JSON of `show` of one process, told so by its keys before
    /// (`snapshot::Keys`): any other key is passed over.
    ShowProcess,
    /// The JSON of `show` of several processes, told so before.
    ShowSelection,
}

/// The document in `r`, of shape `shape`, its regions handed to `feed`
/// (the snapshot returned has none). Its format version is not checked.
pub(crate) fn read(
    r: impl Read,
    shape: FeedShape,
    feed: &mut impl RegionFeed,
) -> Result<Snapshot, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_reader(r);
    let mut at = At { feed, shape, categories: Grouper::new() };
    let snap = serde::Deserializer::deserialize_map(&mut de, Top(&mut at))?;
    de.end()?;
    Ok(snap)
}

/// The feed, and what is summed of the process being read.
struct At<'f, F> {
    feed: &'f mut F,
    shape: FeedShape,
    /// The process's regions by category (what `show`'s JSON leaves out).
    categories: Grouper,
}

impl<F: RegionFeed> At<'_, F> {
    /// Whether a key of a process (not its regions) is kept.
    fn keeps(&self, key: &str) -> bool {
        match self.shape {
            FeedShape::Snapshot => true,
            FeedShape::Show | FeedShape::ShowProcess | FeedShape::ShowSelection => {
                matches!(key, "pid" | "comm" | "command" | "source" | "totals")
            }
        }
    }

    /// The process whose other keys are `rest`, its regions handed on.
    fn process(&mut self, mut rest: Map<String, Value>) -> Result<SnapProcess, String> {
        rest.insert("regions".into(), Value::Array(Vec::new()));
        let categories = std::mem::take(&mut self.categories).into_groups();
        self.feed.process();
        let v = Value::Object(rest);
        match self.shape {
            FeedShape::Snapshot => serde_json::from_value(v).map_err(|e| e.to_string()),
            FeedShape::Show | FeedShape::ShowProcess | FeedShape::ShowSelection => {
                let p: ShowProcess = serde_json::from_value(v).map_err(|e| e.to_string())?;
                let mut p = SnapProcess::from(p);
                p.categories = categories;
                Ok(p)
            }
        }
    }
}

/// The document's object.
struct Top<'a, 'f, F>(&'a mut At<'f, F>);

impl<'de, F: RegionFeed> Visitor<'de> for Top<'_, '_, F> {
    type Value = Snapshot;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Snapshot, A::Error> {
        let at = self.0;
        match at.shape {
            FeedShape::Snapshot => {
                let (mut rest, mut processes) = (Map::new(), None);
                while let Some(key) = m.next_key::<String>()? {
                    match key.as_str() {
                        "processes" if processes.is_some() => {
                            return Err(A::Error::duplicate_field("processes"))
                        }
                        "processes" => processes = Some(m.next_value_seed(Processes(&mut *at))?),
                        _ => {
                            rest.insert(key, m.next_value::<Value>()?);
                        }
                    }
                }
                rest.insert("processes".into(), Value::Array(Vec::new()));
                let mut snap: Snapshot =
                    serde_json::from_value(Value::Object(rest)).map_err(A::Error::custom)?;
                snap.processes = processes.ok_or_else(|| A::Error::missing_field("processes"))?;
                Ok(snap)
            }
            FeedShape::Show | FeedShape::ShowProcess | FeedShape::ShowSelection => show(at, m),
        }
    }
}

/// The JSON of `show`, its shape told by its keys as they come: of one
/// process (`pid` and `regions`) or of several (`processes` and
/// `categories`). Any other (a snapshot, `vmmap`'s JSON) is an error here,
/// unless its shape was told before.
fn show<'de, F: RegionFeed, A: MapAccess<'de>>(
    at: &mut At<'_, F>,
    mut m: A,
) -> Result<Snapshot, A::Error> {
    let other = || A::Error::custom("not the JSON of show");
    let told = at.shape != FeedShape::Show;
    let (mut rest, mut processes) = (Map::new(), None);
    let (mut pid, mut regions, mut categories) = (false, false, false);
    while let Some(key) = m.next_key::<String>()? {
        match key.as_str() {
            "memtally_snapshot" | "regions_read" | "header" if !told => return Err(other()),
            // What the shape told leaves out.
            "regions" if at.shape == FeedShape::ShowSelection => {
                m.next_value::<IgnoredAny>()?;
            }
            "processes" if at.shape == FeedShape::ShowProcess => {
                m.next_value::<IgnoredAny>()?;
            }
            "regions" if processes.is_none() && !regions => {
                m.next_value_seed(Regions(&mut *at))?;
                regions = true;
            }
            "processes" if !regions && processes.is_none() => {
                processes = Some(m.next_value_seed(Processes(&mut *at))?)
            }
            "regions" | "processes" => return Err(other()),
            _ => {
                pid |= key == "pid";
                categories |= key == "categories";
                match at.keeps(&key) {
                    true => {
                        rest.insert(key, m.next_value::<Value>()?);
                    }
                    false => {
                        m.next_value::<IgnoredAny>()?;
                    }
                }
            }
        }
    }
    match processes {
        None if pid && regions => {
            let p = at.process(rest).map_err(A::Error::custom)?;
            Ok(Snapshot::of(vec![p], SnapshotKind::Linux))
        }
        Some(processes) if categories => Ok(Snapshot::of(processes, SnapshotKind::Linux)),
        _ => Err(other()),
    }
}

/// A process object of the JSON show view (top level or in `processes`):
/// what a snapshot takes of it besides its regions.
#[derive(Deserialize)]
struct ShowProcess {
    pid: Option<u64>,
    comm: Option<String>,
    command: Option<String>,
    source: Option<SizeSource>,
    #[serde(default)]
    totals: Sizes,
}

impl From<ShowProcess> for SnapProcess {
    fn from(p: ShowProcess) -> SnapProcess {
        SnapProcess {
            pid: p.pid.map(|p| p as u32),
            ppid: None,
            user: None,
            comm: p.comm.unwrap_or_default(),
            command: p.command.unwrap_or_default(),
            source: p.source.unwrap_or(SizeSource::Smaps),
            totals: p.totals,
            categories: Vec::new(),
            regions: Vec::new(),
            purgeable: Vec::new(),
            physical_footprint: None,
            exclusive: None,
        }
    }
}

/// A document's `processes`.
struct Processes<'a, 'f, F>(&'a mut At<'f, F>);

impl<'de, F: RegionFeed> DeserializeSeed<'de> for Processes<'_, '_, F> {
    type Value = Vec<SnapProcess>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, F: RegionFeed> Visitor<'de> for Processes<'_, '_, F> {
    type Value = Vec<SnapProcess>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of processes")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(p) = s.next_element_seed(Process(&mut *self.0))? {
            out.push(p);
        }
        Ok(out)
    }
}

/// A process object, its regions handed on.
struct Process<'a, 'f, F>(&'a mut At<'f, F>);

impl<'de, F: RegionFeed> DeserializeSeed<'de> for Process<'_, '_, F> {
    type Value = SnapProcess;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, F: RegionFeed> Visitor<'de> for Process<'_, '_, F> {
    type Value = SnapProcess;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a process object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<SnapProcess, A::Error> {
        let at = self.0;
        let (mut rest, mut regions) = (Map::new(), false);
        while let Some(key) = m.next_key::<String>()? {
            if key == "regions" && regions {
                return Err(A::Error::duplicate_field("regions"));
            } else if key == "regions" {
                m.next_value_seed(Regions(&mut *at))?;
                regions = true;
            } else if at.keeps(&key) {
                rest.insert(key, m.next_value::<Value>()?);
            } else {
                m.next_value::<IgnoredAny>()?;
            }
        }
        at.process(rest).map_err(A::Error::custom)
    }
}

/// A process's `regions`, each handed on as read.
struct Regions<'a, 'f, F>(&'a mut At<'f, F>);

impl<'de, F: RegionFeed> DeserializeSeed<'de> for Regions<'_, '_, F> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, F: RegionFeed> Visitor<'de> for Regions<'_, '_, F> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of regions")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<(), A::Error> {
        let at = self.0;
        while let Some(r) = s.next_element::<RegionRef<'de>>()? {
            if at.shape != FeedShape::Snapshot {
                at.categories.add_sizes(&r.category, 1, &r.sizes);
            }
            at.feed.region(r);
        }
        Ok(())
    }
}
