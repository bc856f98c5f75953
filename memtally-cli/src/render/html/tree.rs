//! The treemap's hierarchy: machine -> group -> process -> category ->
//! mapping, each node's size the report's own figure (PSS; for vmmap
//! input, which has no PSS, the footprint as `memtally vmmap` counts it;
//! status RSS for a process that could not be read in detail, drawn
//! hatched). Small nodes are folded, per level,
//! into one "N smaller" node so the page stays within its size budget.

use memtally_core::analyze::category::Category;
use memtally_core::analyze::gpu::{GpuReport, Residence};
use memtally_core::analyze::report::Report;
use memtally_core::analyze::vmmap::{bucket_footprint, region_box, Bucket};
use memtally_core::model::snapshot::{SnapProcess, SnapshotKind};
use memtally_core::model::{Figure, Purge, Sizes};

/// What a node is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Machine,
    Group,
    Process,
    /// A process listed but not readable in detail.
    Unread,
    Category,
    Mapping,
    /// Siblings folded together to stay within the size budget.
    Smaller,
    /// A process's GPU memory where its driver says it lives.
    Gpu,
    /// Mappings the report read and did not keep (past what the page
    /// can draw), summed: folded into the "N smaller" box of their
    /// parent by the first [`fold`], never drawn.
    Left,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Machine => "machine",
            Kind::Group => "group",
            Kind::Process => "process",
            Kind::Unread => "unread",
            Kind::Category => "category",
            Kind::Mapping => "mapping",
            Kind::Smaller => "smaller",
            Kind::Gpu => "gpu",
            Kind::Left => "left",
        }
    }
}

/// One node of the hierarchy.
#[derive(Debug, Clone)]
pub struct Node {
    pub kind: Kind,
    pub label: String,
    /// Bytes: the area.
    pub value: u64,
    /// Dirty bytes of `value`, where known (the colour).
    pub dirty: Option<u64>,
    /// On a growth page: the change of `value` between the snapshots
    /// (the colour there).
    pub delta: Option<i128>,
    /// Where this node came from in the snapshot (process index), for
    /// links to the process's detail.
    pub pid: Option<u32>,
    /// How many nodes of the unfolded tree a "N smaller" node stands
    /// for (0 for the others).
    pub folded: usize,
    /// The id of the faults section's entry of the stacks that filled
    /// this box (a category or mapping of a traced process), if any.
    pub link: Option<String>,
    pub children: Vec<Node>,
}

impl Node {
    /// A box of `value` bytes with nothing else known: no dirty bytes,
    /// change, process, link or children.
    pub fn new(kind: Kind, label: String, value: u64) -> Node {
        Node {
            kind,
            label,
            value,
            dirty: None,
            delta: None,
            pid: None,
            folded: 0,
            link: None,
            children: Vec::new(),
        }
    }
}

/// The figure the areas are: PSS, or resident for vmmap (no PSS there).
pub fn area_figure(kind: SnapshotKind) -> Figure {
    match kind {
        SnapshotKind::Linux => Figure::Pss,
        SnapshotKind::Vmmap => Figure::Rss,
    }
}

/// The dirty figure that adds up: `pss_dirty`, else `private_dirty`
/// (Linux), vmmap's DIRTY.
pub fn dirty_of(s: &Sizes, kind: SnapshotKind) -> Option<u64> {
    match kind {
        SnapshotKind::Linux => s.pss_dirty.or(s.private_dirty),
        SnapshotKind::Vmmap => s.dirty(),
    }
}

fn leaf(kind: Kind, label: String, s: &Sizes, k: SnapshotKind) -> Node {
    let value = s.figure(area_figure(k)).unwrap_or(0);
    Node { dirty: dirty_of(s, k), ..Node::new(kind, label, value) }
}

/// A vmmap region's (or type's) footprint, as `memtally vmmap` counts
/// it: dirty + swapped, volatile purgeable left out, owned unmapped
/// memory at its resident size.
fn vmmap_footprint(region_type: &str, purge: Purge, s: &Sizes) -> u64 {
    bucket_footprint(region_type, purge, &Bucket { regions: 1, sizes: s.clone() }).unwrap_or(0)
}

/// The sum of `children`'s values.
fn sum(children: &[Node]) -> u64 {
    children.iter().map(|c| c.value).fold(0, u64::saturating_add)
}

/// The sum of `children`'s dirty bytes, where every one has them.
fn sum_dirty(children: &[Node]) -> Option<u64> {
    children.iter().map(|c| c.dirty).try_fold(0u64, |a, d| Some(a.saturating_add(d?)))
}

fn process(report: &Report, i: usize, links: &Links) -> Node {
    let p = &report.snapshot.processes[i];
    let k = report.snapshot.kind;
    let mut n = leaf(Kind::Process, label_of(p), &p.totals, k);
    n.pid = p.pid;
    let vmmap = k == SnapshotKind::Vmmap;
    n.children = p
        .categories
        .iter()
        .map(|c| {
            let label = category_label(&c.key, k).to_string();
            let mut cat = leaf(Kind::Category, label, &c.sizes, k);
            cat.link = links(p.pid, &c.key, None);
            cat.children = p
                .regions
                .iter()
                .filter(|r| r.category == c.key)
                .map(|r| {
                    let mut m = leaf(Kind::Mapping, r.path_label(), &r.sizes, k);
                    let name = super::faults::mapping_name(r.path.as_deref());
                    m.link = links(p.pid, &c.key, Some(name));
                    if vmmap {
                        let ty = r.region_type.as_deref().unwrap_or(&r.category);
                        (m.value, m.dirty) = region_box(ty, r.purge.unwrap_or_default(), &r.sizes);
                    }
                    m
                })
                .collect();
            if let Some(b) = report.boxes_left(i, &c.key) {
                let mut left = leaf(Kind::Left, String::new(), &Sizes::default(), k);
                (left.value, left.dirty, left.folded) = (b.value, b.dirty, b.regions);
                cat.children.push(left);
            }
            if vmmap {
                // A type's footprint is its regions' (each by its own
                // purge state); without regions (a summary), the type's.
                if !cat.children.is_empty() {
                    cat.value = sum(&cat.children);
                    cat.dirty = sum_dirty(&cat.children);
                } else {
                    cat.value = vmmap_footprint(&c.key, Purge::Unmarked, &c.sizes);
                }
            }
            cat
        })
        .collect();
    if vmmap {
        n.value = sum(&n.children);
        n.dirty = sum_dirty(&n.children);
    }
    n
}

/// A category as `show` prints it (`file read-only data`); a vmmap
/// region type as it is.
pub fn category_label(key: &str, kind: SnapshotKind) -> &str {
    match kind {
        SnapshotKind::Linux => Category::label_or_key(key),
        SnapshotKind::Vmmap => key,
    }
}

/// `comm (pid)`, or the command when the source gives no comm.
pub fn label_of(p: &SnapProcess) -> String {
    let name = if p.comm.is_empty() { p.command.as_str() } else { p.comm.as_str() };
    match p.pid {
        Some(pid) => format!("{name} ({pid})"),
        None => name.to_string(),
    }
}

/// Where a box links, by its process, category key and mapping name
/// (`None`: the category's box): see [`super::faults::link`].
pub type Links<'a> = dyn Fn(Option<u32>, &str, Option<&str>) -> Option<String> + 'a;

/// The whole hierarchy, unfolded; its category and mapping boxes link as
/// `links` says.
pub fn build(report: &Report, links: &Links) -> Node {
    let k = report.snapshot.kind;
    let groups = report
        .groups
        .iter()
        .map(|g| {
            let mut children: Vec<Node> =
                g.processes.iter().map(|&i| process(report, i, links)).collect();
            children.extend(g.unread.iter().map(|&i| {
                let u = &report.unread[i];
                let label = format!("{} ({}) unreadable", u.comm, u.pid);
                Node {
                    pid: Some(u.pid),
                    ..Node::new(Kind::Unread, label, u.sizes.rss.unwrap_or(0))
                }
            }));
            let mut n = leaf(Kind::Group, g.key.clone(), &g.totals, k);
            if k == SnapshotKind::Vmmap {
                // The footprint is drawn from the regions: the group's is
                // its processes'.
                n.value = sum(&children);
                n.dirty = sum_dirty(&children);
            }
            n.value = n.value.saturating_add(g.unread_rss);
            n.children = children;
            n
        })
        .collect::<Vec<_>>();
    let mut groups = groups;
    if let Some(Ok(g)) = &report.gpu {
        groups.extend(gpu_group(g));
    }
    let value = sum(&groups);
    // Processes not read in detail have no dirty figure: the machine's is
    // that of the groups that have one.
    let dirty = groups.iter().filter_map(|g| g.dirty).reduce(u64::saturating_add);
    Node { dirty, children: groups, ..Node::new(Kind::Machine, "all processes".into(), value) }
}

/// The group of GPU memory, as `memtally gpu` counts it (shared clients
/// and buffers divided among their holders): a box per process and place
/// its driver says the memory lives (system RAM, device memory), beside
/// the programs' PSS. `None` without GPU memory.
fn gpu_group(g: &GpuReport) -> Option<Node> {
    let mut children = Vec::new();
    for p in &g.processes {
        for (residence, bytes) in p.by_residence() {
            let place = residence.map_or("dma-buf", Residence::label);
            let label = format!("{} ({}) {place}", p.comm, p.pid);
            children.push(Node { pid: Some(p.pid), ..Node::new(Kind::Gpu, label, bytes) });
        }
    }
    (g.proportional > 0)
        .then(|| Node { children, ..Node::new(Kind::Group, "GPU memory".into(), g.proportional) })
}

#[cfg(test)]
/// How many nodes the tree holds, itself included.
pub fn count(n: &Node) -> usize {
    1 + n.children.iter().map(count).sum::<usize>()
}

/// Folds the tree to at most `budget` nodes besides the root: the
/// largest `budget` stay (of equal values, the first in depth-first
/// order), and at each level the children that do not become one
/// "N smaller" node (never more than one per parent; an earlier fold's
/// node is folded again with its count). Nodes of no size fold too.
///
/// [`Kind::Left`] nodes stand for the mappings they count, none of them
/// larger than a mapping kept beside them: the budget's threshold is
/// that of the whole tree as long as the report kept at least `budget`
/// mappings of each process (see `page_room`).
pub fn fold(root: &mut Node, budget: usize) {
    let mut values = Vec::new();
    let left = collect(root, &mut values);
    let (min, mut ties) = if values.len() + left <= budget {
        (1, usize::MAX)
    } else {
        values.sort_unstable_by(|a, b| b.cmp(a));
        // Past the values kept, those left out: of 0 bytes, or the
        // report would have kept `budget` mappings of more.
        let min = values.get(budget.max(1) - 1).copied().unwrap_or(0).max(1);
        // Of the nodes of exactly `min`, only as many as the budget has
        // room for after the larger ones: a process of 60,000 mappings of
        // one page each would otherwise keep them all.
        let above = values.iter().take_while(|&&v| v > min).count();
        (min, budget.saturating_sub(above))
    };
    fold_below(root, min, &mut ties);
}

/// The values of the nodes under `n` into `out`; the count of the
/// mappings [`Kind::Left`] nodes stand for returned.
fn collect(n: &Node, out: &mut Vec<u64>) -> usize {
    let mut left = 0;
    for c in &n.children {
        match c.kind {
            Kind::Left => left += c.folded,
            _ => out.push(c.value),
        }
        left += collect(c, out);
    }
    left
}

fn fold_below(n: &mut Node, min: u64, ties: &mut usize) {
    let mut keep = Vec::new();
    let mut small = Vec::new();
    for c in std::mem::take(&mut n.children) {
        let folds = matches!(c.kind, Kind::Smaller | Kind::Left);
        let kept = !folds && (c.value > min || (c.value == min && *ties > 0));
        if kept && c.value == min && *ties != usize::MAX {
            *ties -= 1;
        }
        if kept {
            keep.push(c);
        } else {
            small.push(c);
        }
    }
    n.children = keep;
    for c in &mut n.children {
        fold_below(c, min, ties);
    }
    if !small.is_empty() {
        let (value, dirty) = (sum(&small), sum_dirty(&small));
        let folded = small
            .iter()
            .map(|c| if matches!(c.kind, Kind::Smaller | Kind::Left) { c.folded } else { 1 })
            .sum();
        n.children.push(Node {
            dirty,
            delta: small.iter().map(|c| c.delta).try_fold(0i128, |a, d| Some(a + d?)),
            folded,
            ..Node::new(Kind::Smaller, format!("{folded} smaller"), value)
        });
    }
}

/// A label for a mapping: its path, else region type, else `[anonymous]`.
trait PathLabel {
    fn path_label(&self) -> String;
}

impl PathLabel for memtally_core::model::snapshot::SnapRegion {
    fn path_label(&self) -> String {
        let name = self
            .path
            .clone()
            .filter(|p| !p.is_empty())
            .or_else(|| self.region_type.clone())
            .unwrap_or_else(|| "[anonymous]".into());
        match self.start {
            Some(s) => format!("{name} @{s:x}"),
            None => name,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(value: u64, children: Vec<Node>) -> Node {
        Node { children, ..Node::new(Kind::Category, value.to_string(), value) }
    }

    #[test]
    fn nodes_of_equal_size_fold_too_and_a_second_fold_keeps_the_count() {
        // One process of 1,000 one-page mappings: all equal.
        let leaves: Vec<Node> = (0..1000).map(|_| n(4096, vec![])).collect();
        let mut root = n(4096 * 1000, vec![n(4096 * 1000, leaves)]);
        fold(&mut root, 64);
        assert!(count(&root) <= 66, "{} nodes", count(&root));
        let kids = &root.children[0].children;
        let last = kids.last().unwrap();
        assert_eq!(last.kind, Kind::Smaller);
        assert_eq!(kids.len() - 1 + last.folded, 1000);
        assert_eq!(kids.iter().map(|c| c.value).sum::<u64>(), 4096 * 1000);
        // Folded again to fewer: the new node counts what the old one held.
        fold(&mut root, 8);
        let kids = &root.children[0].children;
        let last = kids.last().unwrap();
        assert!(count(&root) <= 10, "{} nodes", count(&root));
        assert_eq!(last.label, format!("{} smaller", 1000 - (kids.len() - 1)));
        assert_eq!(kids.iter().map(|c| c.value).sum::<u64>(), 4096 * 1000);
    }

    #[test]
    fn folding_keeps_the_largest_and_says_how_many_it_folded() {
        let mut root = n(
            100,
            vec![
                n(60, vec![n(50, vec![]), n(5, vec![]), n(5, vec![])]),
                n(30, vec![]),
                n(4, vec![]),
                n(3, vec![]),
                n(3, vec![]),
            ],
        );
        assert_eq!(count(&root), 9);
        fold(&mut root, 3);
        let top: Vec<(Kind, u64)> = root.children.iter().map(|c| (c.kind, c.value)).collect();
        assert_eq!(top, [(Kind::Category, 60), (Kind::Category, 30), (Kind::Smaller, 10)]);
        assert_eq!(root.children[2].label, "3 smaller");
        let under: Vec<u64> = root.children[0].children.iter().map(|c| c.value).collect();
        assert_eq!(under, [50, 10], "5 and 5 fold into one");
        // Nothing is lost: each level still adds up.
        assert_eq!(root.children.iter().map(|c| c.value).sum::<u64>(), 100);
    }

    #[test]
    fn a_tree_within_the_budget_folds_only_what_has_no_size() {
        let mut root = n(10, vec![n(10, vec![]), n(0, vec![])]);
        fold(&mut root, 100);
        assert_eq!(root.children.len(), 2);
        assert_eq!(root.children[1].kind, Kind::Smaller);
        assert_eq!(root.children[1].value, 0);
    }
}
