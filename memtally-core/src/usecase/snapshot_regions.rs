//! One process's regions as `snapshot` writes them, taken from the reader
//! one at a time: each is added to the process's categories and swapped
//! shared memory, written as its JSON object and dropped, so no process's
//! regions are ever held (issue 25: a process of 1,000,000 mappings held
//! them twice, 2 GiB). The document puts a process's regions after its
//! totals and categories, known only once the last region is read, so the
//! objects wait as bytes: in memory up to [`IN_MEMORY`], then in an
//! unnamed temporary file, and memory stays flat in the mappings.

use std::collections::BTreeMap;
use std::io::{Seek, SeekFrom, Write};

use crate::analyze::category::categorize;
use crate::analyze::category::CategorySums;
use crate::analyze::shmem_swap::{self, Object};
use crate::model::region_json::write_linux_region;
use crate::model::{Flow, Group, Region, RegionSink};
use crate::usecase::spill::{copy, spill_file, ReadWriteSeek};

/// The most bytes of region objects kept in memory before the rest go to
/// a file: some 2,000 mappings, more than almost any process has, so the
/// file is made only for the rare large one.
const IN_MEMORY: usize = 1 << 20;

/// One process's regions as the document's `regions` list holds them,
/// with what its head needs of them.
#[derive(Default)]
pub(crate) struct RegionsJson {
    categories: CategorySums,
    objects: BTreeMap<Object, u64>,
    /// The list's bytes (objects separated by commas, no brackets) not in
    /// `file`; they follow its first `in_file` bytes.
    bytes: Vec<u8>,
    file: Option<Box<dyn ReadWriteSeek>>,
    in_file: u64,
    regions: usize,
    /// Why the file could not be written (the read was stopped then).
    failed: Option<std::io::Error>,
}

impl RegionsJson {
    /// Drops every region taken: a new process, or a new read of one.
    /// The file is kept for the next large process, written from its start.
    pub(crate) fn restart(&mut self) {
        self.categories = CategorySums::default();
        self.objects.clear();
        self.bytes.clear();
        self.in_file = 0;
        self.regions = 0;
        self.failed = None;
    }

    /// The regions' categories, those present, in table order.
    pub(crate) fn take_categories(&mut self) -> Vec<Group> {
        std::mem::take(&mut self.categories).into_groups().into_iter().map(|(_, g)| g).collect()
    }

    /// The regions' swapped shared memory, by object.
    pub(crate) fn take_objects(&mut self) -> BTreeMap<Object, u64> {
        std::mem::take(&mut self.objects)
    }

    /// Why the regions could not all be kept, if they could not.
    pub(crate) fn take_failure(&mut self) -> Option<std::io::Error> {
        self.failed.take()
    }

    /// Writes the list's objects (between its brackets) to `out`.
    pub(crate) fn write_to(&mut self, out: &mut dyn Write) -> std::io::Result<()> {
        if let Some(file) = self.file.as_mut().filter(|_| self.in_file > 0) {
            file.seek(SeekFrom::Start(0))?;
            copy(&mut **file, out, self.in_file)?;
        }
        out.write_all(&self.bytes)
    }

    /// Moves the bytes in memory to the end of the file.
    fn spill(&mut self) -> std::io::Result<()> {
        let file = self.file.get_or_insert_with(spill_file);
        file.seek(SeekFrom::Start(self.in_file))?;
        file.write_all(&self.bytes)?;
        self.in_file += self.bytes.len() as u64;
        self.bytes.clear();
        Ok(())
    }
}

impl RegionSink for RegionsJson {
    fn restart(&mut self) -> bool {
        RegionsJson::restart(self);
        true
    }

    fn region(&mut self, _line: usize, r: &Region) -> Flow {
        let category = categorize(r);
        self.categories.add(category, r);
        shmem_swap::add_region(&mut self.objects, r);
        if self.regions > 0 {
            self.bytes.push(b',');
        }
        self.regions += 1;
        write_linux_region(&mut self.bytes, r, category.key());
        if self.bytes.len() < IN_MEMORY {
            return Flow::Continue;
        }
        match self.spill() {
            Ok(()) => Flow::Continue,
            Err(e) => {
                self.failed = Some(e);
                Flow::Stop
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::analyze::category::categorize;
    use crate::analyze::snapshot::linux_region;
    use crate::model::region_json::write_linux_region;
    use crate::source::parse::smaps::SmapsReader;

    /// Every recorded mapping streams as the snapshot held whole writes
    /// it (`linux_region`, serialized).
    #[test]
    fn every_recorded_region_streams_as_the_whole_snapshot_writes_it() {
        let root =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/fixtures/linux");
        let mut compared = 0;
        for tree in std::fs::read_dir(root).unwrap() {
            let proc = tree.unwrap().path().join("proc");
            let Ok(pids) = std::fs::read_dir(&proc) else { continue };
            for pid in pids {
                let smaps = pid.unwrap().path().join("smaps");
                let Ok(text) = std::fs::read(&smaps) else { continue };
                let mut reader = SmapsReader::new(&text[..]);
                while let Some((_, r)) = reader.next_located().unwrap() {
                    let mut streamed = Vec::new();
                    write_linux_region(&mut streamed, r, categorize(r).key());
                    let whole = serde_json::to_vec(&linux_region(r)).unwrap();
                    assert_eq!(streamed, whole, "{}", smaps.display());
                    compared += 1;
                }
            }
        }
        assert!(compared > 1000, "only {compared} regions compared");
    }
}
