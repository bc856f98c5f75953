//! A region of `vmmap --format json` written straight from the line it
//! was read from: no owned copy of the region, no serializer, byte for
//! byte what serde_json writes for [`JsonRegion`](super::json) (its keys
//! in declaration order).

use std::io;

use memtally_core::model::vmmap::VRegion;
use memtally_core::model::Purge;

use memtally_core::write::json_bytes::{opt_string, opt_u64, string};

/// `{"line":N`: the start of a region's object.
pub(super) fn start(w: &mut Vec<u8>, line: usize) {
    w.extend_from_slice(b"{\"line\":");
    opt_u64(w, Some(line as u64));
}

/// The rest of a region's object after its line number, `}` included.
pub(super) fn rest(w: &mut Vec<u8>, r: &VRegion<'_>) -> io::Result<()> {
    w.extend_from_slice(b",\"region_type\":");
    string(w, r.region_type);
    w.extend_from_slice(b",\"start\":");
    opt_u64(w, r.start);
    w.extend_from_slice(b",\"end\":");
    opt_u64(w, r.end);
    w.extend_from_slice(b",\"vsize\":");
    opt_u64(w, r.vsize);
    w.extend_from_slice(b",\"resident\":");
    opt_u64(w, r.resident);
    w.extend_from_slice(b",\"dirty\":");
    opt_u64(w, r.dirty);
    w.extend_from_slice(b",\"swap\":");
    opt_u64(w, r.swap);
    // Each purge code, which needs no escaping, as one constant.
    w.extend_from_slice(match r.purge {
        Purge::NonVolatile => b",\"purge\":\"N\"",
        Purge::Volatile => b",\"purge\":\"V\"",
        Purge::Empty => b",\"purge\":\"E\"",
        Purge::Unmarked => b",\"purge\":\"-\"",
    });
    w.extend_from_slice(b",\"share_mode\":");
    opt_string(w, r.share_mode);
    w.extend_from_slice(b",\"protection\":");
    string(w, r.prot);
    w.extend_from_slice(b",\"max_protection\":");
    opt_string(w, r.max_prot);
    w.extend_from_slice(b",\"detail\":");
    opt_string(w, r.detail);
    w.push(b'}');
    Ok(())
}

#[cfg(test)]
mod tests {
    use memtally_core::model::{Backing, Purge, Region};

    use super::*;

    /// The region as the serializer's path has it (`VRegion::to_region`).
    fn owned(r: &VRegion<'_>) -> Region {
        let mut o = Region::new(Backing::Unknown);
        o.region_type = Some(r.region_type.to_string());
        (o.start, o.end) = (r.start, r.end);
        o.perms = r.prot.to_string();
        o.max_perms = r.max_prot.map(str::to_string);
        o.share_mode = r.share_mode.map(str::to_string);
        o.purge = r.purge;
        o.path = r.detail.map(str::to_string);
        (o.sizes.size, o.sizes.rss, o.sizes.dirty, o.sizes.swap) =
            (r.vsize, r.resident, r.dirty, r.swap);
        o
    }

    #[test]
    fn a_region_is_written_as_serde_json_writes_it() {
        let plain = VRegion {
            region_type: "IOSurface",
            start: Some(0x1_0000_0000),
            end: Some(u64::MAX),
            vsize: Some(16 << 20),
            resident: Some(0),
            dirty: Some(4096),
            swap: Some(1),
            prot: "rw-",
            max_prot: Some("rwx"),
            share_mode: Some("SHM"),
            purge: Purge::Volatile,
            detail: Some("/usr/lib/dyld"),
        };
        let odd = VRegion {
            region_type: "type \"quoted\" \\ caf\u{e9}\t",
            start: None,
            end: None,
            vsize: Some(1),
            resident: None,
            dirty: None,
            swap: None,
            prot: "r\u{1}-",
            max_prot: None,
            share_mode: None,
            purge: Purge::Unmarked,
            detail: None,
        };
        let each_purge = [Purge::NonVolatile, Purge::Volatile, Purge::Empty, Purge::Unmarked]
            .map(|purge| VRegion { purge, ..plain.clone() });
        for (line, r) in
            [(1, &plain), (1234567, &odd)].into_iter().chain(each_purge.iter().map(|r| (7, r)))
        {
            let mut w = Vec::new();
            start(&mut w, line);
            rest(&mut w, r).unwrap();
            let o = owned(r);
            let want = serde_json::to_vec(&super::super::json::json_region(line, &o)).unwrap();
            assert_eq!(String::from_utf8(w).unwrap(), String::from_utf8(want).unwrap());
        }
    }
}
