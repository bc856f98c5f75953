//! A region of `vmmap --format json` written straight from the line it
//! was read from (`region_json::VmmapRegion`): no owned copy of the
//! region, no serializer. And the part of the regions one reader thread
//! prints (`source::vmmap::split`), which cannot know its lines' numbers
//! until the parts before it are merged.

use std::io::{self, Write};

use memtally_core::model::vmmap::{SplitSink, VRegion, VRegionSink};
use memtally_core::model::Flow;

use super::VmmapStream;

use memtally_core::model::region_json::{RegionRef, RegionWriter, VmmapRegion};

/// `{"line":N`: the start of a region's object.
pub(super) fn start(w: &mut Vec<u8>, line: usize) {
    RegionWriter::<VmmapRegion>::write_line(w, line);
}

/// The rest of a region's object after its line number, `}` included.
pub(super) fn rest(w: &mut Vec<u8>, r: &VRegion<'_>) -> io::Result<()> {
    RegionWriter::<VmmapRegion>::default().write_rest(&RegionRef::vmmap_line(0, r), w);
    Ok(())
}

/// The regions of one part, each object without its start (`{"line":N`),
/// which the merge writes once it knows the line numbers.
#[derive(Default)]
pub struct JsonPart {
    /// The objects' rests, one after the other.
    pub(super) text: Vec<u8>,
    /// For each region: where its rest ends in `text`, and its line in the part.
    pub(super) ends: Vec<(usize, usize)>,
    /// The first write that failed (none can into a `Vec`; kept for the
    /// merge to report rather than hide).
    pub(super) failed: Option<io::Error>,
}

impl JsonPart {
    /// Empties the part for the next one, keeping its memory.
    pub(super) fn clear(&mut self) {
        self.text.clear();
        self.ends.clear();
    }
}

/// A part's regions, as it reads them.
impl VRegionSink for JsonPart {
    fn region(&mut self, line: usize, r: &VRegion<'_>) -> Flow {
        if let Err(e) = rest(&mut self.text, r) {
            self.failed.get_or_insert(e);
        }
        self.ends.push((self.text.len(), line));
        Flow::Continue
    }
}

/// A [`VmmapStream`] printing the regions of a read in parts.
pub struct VmmapParts<'a> {
    pub(super) stream: &'a mut VmmapStream,
    pub(super) out: &'a mut dyn Write,
}

impl VmmapParts<'_> {
    /// One region's object, its start and rest written by `write`.
    fn item(&mut self, write: impl FnOnce(&mut Vec<u8>) -> io::Result<()>) -> Flow {
        let s = &mut *self.stream;
        let written = (|| {
            if !s.started() {
                s.start()?;
            }
            s.doc.item(write)?;
            s.doc.flush_if_full(self.out)
        })();
        s.doc.keep(written)
    }
}

impl VRegionSink for VmmapParts<'_> {
    fn region(&mut self, line: usize, r: &VRegion<'_>) -> Flow {
        self.item(|w| {
            start(w, line);
            rest(w, r)
        })
    }
}

impl SplitSink<JsonPart> for VmmapParts<'_> {
    fn absorb(&mut self, part: &mut JsonPart, line_offset: usize) -> Flow {
        if let Some(e) = part.failed.take() {
            self.stream.doc.keep(Err(e));
            return Flow::Stop;
        }
        let mut from = 0;
        for &(end, line) in &part.ends {
            let text = &part.text[from..end];
            from = end;
            let flow = self.item(|w| {
                start(w, line_offset + line);
                w.extend_from_slice(text);
                Ok(())
            });
            if flow.is_stop() {
                return flow;
            }
        }
        part.clear();
        Flow::Continue
    }
}

#[cfg(test)]
mod tests {
    use memtally_core::model::region_json::RegionObject;
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
            let mut whole = Vec::new();
            RegionWriter::<VmmapRegion>::default().write(&RegionRef::vmmap(line, &o), &mut whole);
            let serde = RegionObject::<VmmapRegion>::new(RegionRef::vmmap(line, &o));
            let serde = serde_json::to_vec(&serde).unwrap();
            let w = String::from_utf8(w).unwrap();
            assert_eq!(w, String::from_utf8(whole).unwrap());
            assert_eq!(w, String::from_utf8(serde).unwrap());
        }
        // The keys and their order, as docs/vmmap-json.md has them.
        let mut w = Vec::new();
        start(&mut w, 1);
        rest(&mut w, &plain).unwrap();
        assert_eq!(
            String::from_utf8(w).unwrap(),
            "{\"line\":1,\"region_type\":\"IOSurface\",\"start\":4294967296,\
             \"end\":18446744073709551615,\"vsize\":16777216,\"resident\":0,\"dirty\":4096,\
             \"swap\":1,\"purge\":\"V\",\"share_mode\":\"SHM\",\"protection\":\"rw-\",\
             \"max_protection\":\"rwx\",\"detail\":\"/usr/lib/dyld\"}"
        );
    }
}
