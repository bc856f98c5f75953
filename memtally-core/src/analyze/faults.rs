//! Sums sampled page faults by category, mapping, process and call
//! stack, and names the stacks' frames at the end: no I/O here (the
//! namer is handed in).

use std::collections::HashMap;

use crate::analyze::fault_report::{
    FaultAccess, FaultBytes, FaultCategory, FaultMapping, FaultProcess, FaultReport, FaultStack,
};
use crate::analyze::Category;

/// One sampled fault, its address already placed in a mapping.
#[derive(Debug, Clone)]
pub(crate) struct PlacedFault<'a> {
    /// The process it was taken in.
    pub pid: u32,
    /// The category of the mapping the address fell in; `None`: none found.
    pub category: Option<Category>,
    /// That mapping's name.
    pub mapping: &'a str,
    /// Read or write.
    pub access: FaultAccess,
    /// The bytes the sample stands for (period × page size).
    pub bytes: u64,
    /// Return addresses, innermost first.
    pub stack: &'a [u64],
}

/// The running sums.
#[derive(Debug, Default)]
pub(crate) struct FaultTally {
    /// By category, mapping, process and return addresses.
    stacks: HashMap<(Option<Category>, String, u32, Vec<u64>), FaultBytes>,
    processes: HashMap<u32, FaultBytes>,
    total: FaultBytes,
}

/// Stacks (named) and their bytes.
type Named = HashMap<Vec<String>, FaultBytes>;

impl FaultTally {
    /// Counts one fault.
    pub fn add(&mut self, f: &PlacedFault<'_>) {
        let key = (f.category, f.mapping.to_string(), f.pid, f.stack.to_vec());
        self.stacks.entry(key).or_default().add(f.access, f.bytes);
        self.processes.entry(f.pid).or_default().add(f.access, f.bytes);
        self.total.add(f.access, f.bytes);
    }

    /// The processes faults were counted for.
    pub fn pids(&self) -> impl Iterator<Item = u32> + '_ {
        self.processes.keys().copied()
    }

    /// The report: per category its `top` stacks (frames named by
    /// `name(pid, address)`; stacks whose names agree are one) and
    /// mappings, each mapping with its own `top` stacks; `command(pid)`
    /// names the processes.
    pub fn finish(
        self,
        top: usize,
        mut name: impl FnMut(u32, u64) -> Vec<String>,
        command: impl Fn(u32) -> String,
        header: FaultReport,
    ) -> FaultReport {
        let mut by_category: HashMap<Option<Category>, Named> = HashMap::new();
        let mut by_mapping: HashMap<(Option<Category>, String), Named> = HashMap::new();
        for ((category, mapping, pid, stack), bytes) in self.stacks {
            let frames: Vec<String> = stack.iter().flat_map(|&ip| name(pid, ip)).collect();
            let c = by_category.entry(category).or_default();
            c.entry(frames.clone()).or_default().merge(&bytes);
            let m = by_mapping.entry((category, mapping)).or_default();
            m.entry(frames).or_default().merge(&bytes);
        }
        let mut categories: HashMap<Option<Category>, FaultCategory> = HashMap::new();
        for (category, named) in by_category {
            let c = categories
                .entry(category)
                .or_insert_with(|| FaultCategory { category, ..Default::default() });
            (c.bytes, c.stacks, c.stacks_total) = ranked(named, top);
        }
        for ((category, mapping), named) in by_mapping {
            let c = categories
                .entry(category)
                .or_insert_with(|| FaultCategory { category, ..Default::default() });
            let (bytes, stacks, stacks_total) = ranked(named, top);
            c.mappings.push(FaultMapping { mapping, bytes, stacks, stacks_total });
        }
        let mut categories: Vec<FaultCategory> = categories.into_values().collect();
        for c in &mut categories {
            c.mappings
                .sort_by(|a, b| b.bytes.bytes.cmp(&a.bytes.bytes).then(a.mapping.cmp(&b.mapping)));
        }
        categories
            .sort_by(|a, b| b.bytes.bytes.cmp(&a.bytes.bytes).then(a.category.cmp(&b.category)));
        let mut processes: Vec<FaultProcess> = self
            .processes
            .into_iter()
            .map(|(pid, bytes)| FaultProcess { pid, command: command(pid), bytes })
            .collect();
        processes.sort_by(|a, b| b.bytes.bytes.cmp(&a.bytes.bytes).then(a.pid.cmp(&b.pid)));
        FaultReport { bytes: self.total, processes, categories, ..header }
    }
}

/// The sum of `named`, its `top` stacks (most bytes first), and how many
/// there were.
fn ranked(named: Named, top: usize) -> (FaultBytes, Vec<FaultStack>, usize) {
    let mut sum = FaultBytes::default();
    let mut stacks: Vec<FaultStack> = named
        .into_iter()
        .map(|(frames, bytes)| {
            sum.merge(&bytes);
            FaultStack { frames, bytes }
        })
        .collect();
    stacks.sort_by(|a, b| b.bytes.bytes.cmp(&a.bytes.bytes).then(a.frames.cmp(&b.frames)));
    let total = stacks.len();
    stacks.truncate(top);
    (sum, stacks, total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> FaultReport {
        FaultReport {
            seconds: 1.0,
            sample_period: 1,
            page_size: 4096,
            samples: 3,
            lost: 0,
            kernel_faults_seen: true,
            buffer_cut: None,
            bytes: FaultBytes::default(),
            processes: Vec::new(),
            categories: Vec::new(),
        }
    }

    #[test]
    fn stacks_that_name_alike_are_one_and_categories_sort_by_bytes() {
        let mut t = FaultTally::default();
        let heap = Some(Category::Heap);
        let f = |stack: &'static [u64], access, category| PlacedFault {
            pid: 1,
            category,
            mapping: "[heap]",
            access,
            bytes: 4096,
            stack,
        };
        t.add(&f(&[0x10, 0x20], FaultAccess::Write, heap));
        t.add(&f(&[0x11, 0x20], FaultAccess::Write, heap));
        t.add(&f(&[0x30], FaultAccess::Read, None));
        let name =
            |_pid, ip: u64| vec![if ip < 0x20 { "touch".to_string() } else { format!("f{ip:x}") }];
        let r = t.finish(10, name, |pid| format!("p{pid}"), header());
        assert_eq!(r.bytes.bytes, 3 * 4096);
        assert_eq!(r.categories[0].category, heap);
        assert_eq!(r.categories[0].stacks.len(), 1, "{:?}", r.categories[0].stacks);
        assert_eq!(r.categories[0].stacks[0].frames, ["touch", "f20"]);
        assert_eq!(r.categories[0].bytes.write, 2 * 4096);
        assert_eq!(r.categories[1].category, None);
        assert_eq!(r.categories[1].bytes.read, 4096);
        assert_eq!(r.processes[0].command, "p1");
        let heap_mappings = &r.categories[0].mappings;
        assert_eq!(heap_mappings.len(), 1);
        assert_eq!(heap_mappings[0].mapping, "[heap]");
        assert_eq!(heap_mappings[0].bytes.write, 2 * 4096);
        assert_eq!(heap_mappings[0].stacks[0].frames, ["touch", "f20"]);
        assert_eq!(heap_mappings[0].stacks_total, 1);
    }

    #[test]
    fn each_mapping_keeps_the_stacks_that_filled_it() {
        let mut t = FaultTally::default();
        let heap = Some(Category::Heap);
        let f = |mapping, stack: &'static [u64], access| PlacedFault {
            pid: 1,
            category: heap,
            mapping,
            access,
            bytes: 4096,
            stack,
        };
        t.add(&f("[heap]", &[0x10], FaultAccess::Write));
        t.add(&f("[heap]", &[0x10], FaultAccess::Write));
        t.add(&f("[anon]", &[0x30], FaultAccess::Write));
        t.add(&f("[anon]", &[0x40], FaultAccess::Read));
        let r = t.finish(1, |_, ip| vec![format!("f{ip:x}")], |_| String::new(), header());
        let c = &r.categories[0];
        assert_eq!((c.stacks_total, c.stacks.len()), (3, 1), "the top one of three");
        let m: Vec<(&str, u64, usize, &str)> = c
            .mappings
            .iter()
            .map(|m| {
                (m.mapping.as_str(), m.bytes.bytes, m.stacks_total, m.stacks[0].frames[0].as_str())
            })
            .collect();
        assert_eq!(m, [("[anon]", 8192, 2, "f30"), ("[heap]", 8192, 1, "f10")]);
        assert_eq!(c.mappings[0].bytes.read, 4096);
    }
}
