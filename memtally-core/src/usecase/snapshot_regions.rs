//! Where `snapshot` meets the reader, in one place: each process is read
//! with its regions handed to [`RegionLines`] one at a time, each added to
//! the process's categories and swapped shared memory, written as its
//! `{"region":…}` line and dropped, so no region is ever held (issue 25: a
//! process of 1,000,000 mappings held them twice, 2 GiB).

use std::collections::BTreeMap;
use std::io::Write;

use crate::analyze::category::categorize;
use crate::analyze::category::CategorySums;
use crate::analyze::shmem_swap::{self, Object};
use crate::error::Result;
use crate::model::region_json::write_linux_region;
use crate::model::{Flow, Group, ProcInfo, Process, Region, RegionSink};
use crate::source::{ProcRoot, ReadPlan};

/// Reads the process `info` names, its regions handed to `sink` (the
/// snapshot's [`RegionLines`], or `by_mapping`'s sums).
/// A read that did not stand (the process exec'd and is read again) has
/// its region lines taken back by a `dropped` line; so has a failed one,
/// by the caller ([`RegionLines::drop_written`]).
pub(crate) fn read_process(
    root: &ProcRoot,
    info: &ProcInfo,
    sink: &mut impl RegionSink,
) -> Result<Process> {
    // One process after another on this thread: no helper threads (each
    // would cost more than it saves), what the selection read of it not
    // read again.
    let plan = ReadPlan::default().with_threads(false).with_known(Some(info)).with_retry(true);
    root.process(info.pid, plan, sink)
}

/// One process's regions as lines of the snapshot file, with what its
/// process line and the end line need of them.
pub(crate) struct RegionLines<'a> {
    out: &'a mut dyn Write,
    /// The file's first line, while it is not written yet.
    head: &'a mut Option<Vec<u8>>,
    categories: CategorySums,
    objects: BTreeMap<Object, u64>,
    /// Region lines written since the last process line.
    written: u64,
    line: Vec<u8>,
    /// Why a line could not be written (the read was stopped then).
    failed: Option<std::io::Error>,
}

impl<'a> RegionLines<'a> {
    /// Lines to `out`, `head` written before the first.
    pub(crate) fn new(out: &'a mut dyn Write, head: &'a mut Option<Vec<u8>>) -> RegionLines<'a> {
        RegionLines {
            out,
            head,
            categories: CategorySums::default(),
            objects: BTreeMap::new(),
            written: 0,
            line: Vec::with_capacity(1024),
            failed: None,
        }
    }

    /// Takes back every region line written since the last process line
    /// (a `dropped` line), and what was summed of them.
    pub(crate) fn drop_written(&mut self) {
        if self.written > 0 {
            let line = format!("{{\"dropped\":{{\"regions\":{}}}}}\n", self.written);
            if let Err(e) = self.out.write_all(line.as_bytes()) {
                self.failed.get_or_insert(e);
            }
        }
        self.categories = CategorySums::default();
        self.objects.clear();
        self.written = 0;
    }

    /// The regions' categories, those present, in table order, and their
    /// swapped shared memory by object; or why their lines could not all
    /// be written.
    pub(crate) fn finish(self) -> std::io::Result<(Vec<Group>, BTreeMap<Object, u64>)> {
        match self.failed {
            Some(e) => Err(e),
            None => Ok((
                self.categories.into_groups().into_iter().map(|(_, g)| g).collect(),
                self.objects,
            )),
        }
    }

    fn write(&mut self, r: &Region, category: &str) -> std::io::Result<()> {
        if let Some(head) = self.head.take() {
            self.out.write_all(&head)?;
        }
        self.line.clear();
        self.line.extend_from_slice(b"{\"region\":");
        write_linux_region(&mut self.line, r, category);
        self.line.extend_from_slice(b"}\n");
        self.out.write_all(&self.line)
    }
}

impl RegionSink for RegionLines<'_> {
    fn restart(&mut self) -> bool {
        self.drop_written();
        true
    }

    fn region(&mut self, _line: usize, r: &Region) -> Flow {
        let category = categorize(r);
        self.categories.add(category, r);
        shmem_swap::add_region(&mut self.objects, r);
        match self.write(r, category.key()) {
            Ok(()) => {
                self.written += 1;
                Flow::Continue
            }
            Err(e) => {
                self.failed = Some(e);
                Flow::Stop
            }
        }
    }
}
