use super::*;
use crate::model::region::{Purge, Region};
use crate::model::sizes::Figure;
use crate::model::{Backing, Named};

/// A file mapping with every kind of value: strings to escape, a figure
/// past 32 bits, the page sizes, attributes and unknown size keys.
fn odd() -> Region {
    let mut r = Region::new(Backing::File);
    (r.start, r.end, r.offset, r.inode) = (Some(0x1000), Some(0x3000), Some(0), Some(42));
    r.perms = "r-xp".into();
    r.device = Some("fe:00".into());
    r.path = Some("/tmp/a \"quoted\" \\ name\n\t\u{1}\u{7f} é (deleted)".into());
    r.vm_flags = Some("rd ex mr mw me".into());
    r.sizes.size = Some(8192);
    r.sizes.kernel_page_size = Some(4096);
    r.sizes.mmu_page_size = Some(4096);
    r.sizes.rss = Some(0);
    r.sizes.swap = Some(u64::MAX);
    r.sizes.extra = vec![("new_key".into(), 7), ("odd\"name".into(), 1)];
    r.attributes = vec![("thp_eligible".into(), "0".into()), ("path".into(), "shadow".into())];
    r
}

fn written<D: RegionDoc>(w: &mut RegionWriter<D>, r: &RegionRef<'_>) -> String {
    let mut out = Vec::new();
    w.write(r, &mut out);
    String::from_utf8(out).unwrap()
}

fn serde<D: RegionDoc>(r: &RegionRef<'_>) -> String {
    let object = RegionObject::<D>::new(*r);
    if D::DOC.sorted {
        // As the document holds it: a sorted map, a later key winning.
        let value = serde_json::to_value(object).unwrap();
        return serde_json::to_string(&value).unwrap();
    }
    serde_json::to_string(&object).unwrap()
}

/// Each document's objects, as bytes and as serde objects, are the same
/// whatever the shape of the region (the sorted one's layout kept from
/// region to region and worked out again where the shape changes).
#[test]
fn the_writer_writes_what_serde_writes_for_every_document() {
    let bare = Region::new(Backing::Anonymous);
    let regions = [odd(), bare.clone(), odd(), bare];
    let mut show = RegionWriter::<ShowRegion>::default();
    let mut snapshot = RegionWriter::<SnapshotRegion>::default();
    let mut vmmap = RegionWriter::<VmmapRegion>::default();
    for (i, r) in regions.iter().enumerate() {
        let linux = RegionRef::linux(r, "file_code");
        assert_eq!(written(&mut show, &linux), serde::<ShowRegion>(&linux), "{i}");
        assert_eq!(written(&mut snapshot, &linux), serde::<SnapshotRegion>(&linux), "{i}");
        let line = RegionRef::vmmap(i + 1, r);
        assert_eq!(written(&mut vmmap, &line), serde::<VmmapRegion>(&line), "{i}");
    }
}

/// The keys and their order, as the documents have always had them
/// (docs/json.md, docs/snapshot.md, docs/vmmap-json.md).
#[test]
fn each_document_has_its_keys_in_its_order() {
    let mut r = odd();
    r.path = Some("/usr/lib/libc.so.6".into());
    r.sizes.extra.clear();
    r.attributes.truncate(1);
    let linux = RegionRef::linux(&r, "file_code");
    assert_eq!(
        written(&mut RegionWriter::<ShowRegion>::default(), &linux),
        "{\"category\":\"file_code\",\"device\":\"fe:00\",\"end\":12288,\"inode\":42,\
         \"kernel_page_size\":4096,\"mmu_page_size\":4096,\"offset\":0,\
         \"path\":\"/usr/lib/libc.so.6\",\"perms\":\"r-xp\",\"rss\":0,\"size\":8192,\
         \"start\":4096,\"swap\":18446744073709551615,\"thp_eligible\":\"0\",\
         \"vm_flags\":\"rd ex mr mw me\"}"
    );
    assert_eq!(
        written(&mut RegionWriter::<SnapshotRegion>::default(), &linux),
        "{\"start\":4096,\"end\":12288,\"perms\":\"r-xp\",\"path\":\"/usr/lib/libc.so.6\",\
         \"category\":\"file_code\",\"offset\":0,\"inode\":42,\"size\":8192,\"rss\":0,\
         \"swap\":18446744073709551615}"
    );
    let mut vmmap = Region::new(Backing::Unknown);
    vmmap.region_type = Some("MALLOC_SMALL".into());
    vmmap.perms = "rw-".into();
    vmmap.sizes.size = Some(4096);
    vmmap.purge = Purge::NonVolatile;
    assert_eq!(
        written(&mut RegionWriter::<VmmapRegion>::default(), &RegionRef::vmmap(7, &vmmap)),
        "{\"line\":7,\"region_type\":\"MALLOC_SMALL\",\"start\":null,\"end\":null,\
         \"vsize\":4096,\"resident\":null,\"dirty\":null,\"swap\":null,\"purge\":\"N\",\
         \"share_mode\":null,\"protection\":\"rw-\",\"max_protection\":null,\"detail\":null}"
    );
}

/// A snapshot's region serializes as `snapshot` streams it: a vmmap
/// snapshot's purge and region type there, a Linux one's left out.
#[test]
fn a_snapshot_region_is_written_from_the_same_keys() {
    let r = odd();
    let mut streamed = Vec::new();
    write_linux_region(&mut streamed, &r, "file_code");
    let snap = SnapRegion {
        start: r.start,
        end: r.end,
        perms: r.perms.clone(),
        path: r.path.clone(),
        category: "file_code".into(),
        region_type: None,
        purge: None,
        offset: r.offset,
        inode: r.inode,
        sizes: r.sizes.clone(),
    };
    assert_eq!(serde_json::to_vec(&snap).unwrap(), streamed);
    let vmmap = SnapRegion {
        region_type: Some("IOSurface".into()),
        purge: Some(Purge::Volatile),
        offset: None,
        inode: None,
        ..snap
    };
    let json = serde_json::to_string(&vmmap).unwrap();
    assert!(json.contains(",\"category\":\"file_code\",\"region_type\":\"IOSurface\",\"purge\":\"V\",\"size\":8192"), "{json}");
}

/// Every known figure is a key of each document that writes figures,
/// from its one line in `known_sizes!`; a document leaves out only the
/// figures it says.
#[test]
fn every_known_figure_reaches_every_document_with_figures() {
    let mut r = Region::new(Backing::Anonymous);
    for (i, f) in Figure::ALL.iter().take(KNOWN_KEYS.len()).enumerate() {
        *r.sizes.field_mut(*f).unwrap() = Some(i as u64 + 1);
    }
    let linux = RegionRef::linux(&r, "heap");
    let show: serde_json::Value =
        serde_json::from_str(&written(&mut RegionWriter::<ShowRegion>::default(), &linux)).unwrap();
    let snapshot: serde_json::Value =
        serde_json::from_str(&written(&mut RegionWriter::<SnapshotRegion>::default(), &linux))
            .unwrap();
    for (i, k) in KNOWN_KEYS.iter().enumerate() {
        assert_eq!(show[k.name], i as u64 + 1, "{}", k.name);
        let per_mapping = ["kernel_page_size", "mmu_page_size"].contains(&k.name);
        assert_eq!(snapshot.get(k.name).is_none(), per_mapping, "{}", k.name);
    }
}
