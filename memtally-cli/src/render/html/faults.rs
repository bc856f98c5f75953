//! The page's faults section (`report --faults`, `--faults-input`): which
//! code filled the treemap's boxes. Per category, and per mapping under
//! it, the call stacks whose page faults made its bytes resident or
//! dirtied them (innermost frame first, bytes written and read), as
//! `memtally faults` recorded them. The treemap's category and mapping
//! boxes of the traced processes link to their entry here. The section
//! keeps the top stacks of each box that fit its share of the page's
//! size budget and folds the rest into one "N other stacks" row.

use std::fmt::Write as _;

use memtally_core::analyze::fault_report::{FaultBytes, FaultReport, FaultStack};
use memtally_core::analyze::Category;

use super::esc;
use crate::render::units::{human, plural};
use crate::render::width::cut;

/// How much of a faults report the section shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shown {
    /// Stacks per box (category, mapping); the rest are one row.
    pub stacks: usize,
    /// Mappings per category; the rest are one line.
    pub mappings: usize,
}

/// The steps the section is cut down by until it fits its budget: the
/// first that fits is drawn.
const STEPS: [Shown; 5] = [
    Shown { stacks: 10, mappings: 12 },
    Shown { stacks: 5, mappings: 6 },
    Shown { stacks: 3, mappings: 3 },
    Shown { stacks: 1, mappings: 1 },
    Shown { stacks: 0, mappings: 0 },
];

/// Frames shown of one stack: the innermost ones (where the bytes were
/// touched); the outer ones are counted.
const FRAMES: usize = 24;

/// Characters shown of one frame's name (C++ and Rust names run long).
const FRAME_CHARS: usize = 160;

/// The share of the page's size budget the section may take: one in this
/// many bytes.
pub const BUDGET_SHARE: u64 = 8;

/// The recording as the page carries it (JSON, every `<` escaped): what
/// the section shows at `shown`, the stacks it leaves out dropped (their
/// count and bytes stay in `stacks_total` and the figures), so the page
/// read back draws the same section within the same budget.
pub fn embed(r: &FaultReport, shown: Shown) -> String {
    let mut kept = r.clone();
    for c in &mut kept.categories {
        c.stacks.truncate(shown.stacks);
        for (i, m) in c.mappings.iter_mut().enumerate() {
            m.stacks.truncate(if i < shown.mappings { shown.stacks } else { 0 });
        }
    }
    let json = serde_json::to_string(&kept).unwrap_or_else(|_| "{}".into());
    json.replace('<', "\\u003c")
}

/// A category's key, or `unmapped` for addresses in no mapping.
fn key(c: Option<Category>) -> &'static str {
    c.map_or("unmapped", |c| c.key())
}

/// The id of a category's entry.
fn category_anchor(c: Option<Category>) -> String {
    format!("faults-{}", key(c))
}

/// The id of the `i`th mapping's entry under a category.
fn mapping_anchor(c: Option<Category>, i: usize) -> String {
    format!("faults-{}-m{i}", key(c))
}

/// The name `faults` gives a mapping: its path, `[anon]` without one.
pub fn mapping_name(path: Option<&str>) -> &str {
    path.filter(|p| !p.is_empty()).unwrap_or("[anon]")
}

/// Where a treemap box of a traced process links: its mapping's entry
/// (when the section shows it), else its category's; `None` for a box
/// the recording has no fault in, or of a process it did not trace.
/// `category` is the snapshot's category key, `mapping` the mapping's
/// name as [`mapping_name`] gives it (`None`: the category's box).
pub fn link(
    r: &FaultReport,
    shown: Shown,
    pid: Option<u32>,
    category: &str,
    mapping: Option<&str>,
) -> Option<String> {
    let pid = pid?;
    if !r.processes.iter().any(|p| p.pid == pid) {
        return None;
    }
    let c = r.categories.iter().find(|c| c.category.is_some_and(|c| c.key() == category))?;
    let Some(name) = mapping else { return Some(category_anchor(c.category)) };
    let i = c.mappings.iter().position(|m| m.mapping == name)?;
    Some(match i < shown.mappings {
        true => mapping_anchor(c.category, i),
        false => category_anchor(c.category),
    })
}

/// The section within `budget` bytes, and how much of the report it
/// shows (the treemap's links follow it). Cut step by step; the last
/// step (no stacks, the categories' figures) is drawn whatever its size.
pub fn section(r: &FaultReport, budget: u64) -> (Shown, String) {
    for shown in STEPS {
        let html = draw(r, shown);
        if html.len() as u64 <= budget || shown == STEPS[STEPS.len() - 1] {
            return (shown, html);
        }
    }
    unreachable!("the last step is drawn")
}

fn draw(r: &FaultReport, shown: Shown) -> String {
    let mut b = String::new();
    let who: Vec<String> =
        r.processes.iter().map(|p| format!("{} ({})", p.command, p.pid)).collect();
    let sampled = match r.sample_period {
        1 => String::new(),
        n => format!(", one in {n} faults (bytes scaled by {n})"),
    };
    let _ = write!(
        b,
        r#"<section id="faults"><h2>Which code filled it: page faults</h2><p id="faults-summary">The page faults of {} over {:.1}s: {}{sampled}; <b data-v="{}">{}</b> made resident or dirtied ({}). The category and mapping boxes of these processes in the treemap link here (click a box: the link is under the path). Stacks are innermost frame first; a figure is the recording's, summed over its processes.</p>"#,
        esc(&if who.is_empty() { "the selection".to_string() } else { who.join(", ") }),
        r.seconds,
        plural(r.samples as usize, "sample", "samples"),
        r.bytes.bytes,
        human(r.bytes.bytes),
        split(&r.bytes),
    );
    for note in crate::render::faults::notes(r) {
        let _ = write!(b, r#"<p class="note">{}</p>"#, esc(&note));
    }
    b.push_str(r#"<table class="sortable" id="faults-categories"><thead><tr><th>category</th><th class="n">faulted</th><th class="n">written</th><th class="n">read</th><th class="n">not told</th><th class="n">stacks</th></tr></thead><tbody>"#);
    for c in &r.categories {
        let x = &c.bytes;
        let _ = write!(
            b,
            r##"<tr><td><a href="#{}">{}</a></td>{}{}{}{}<td class="n" data-v="{n}">{n}</td></tr>"##,
            category_anchor(c.category),
            esc(c.category.map_or("no mapping", |c| c.label())),
            cell(x.bytes),
            cell(x.write),
            cell(x.read),
            cell(x.unknown),
            n = c.stacks_total,
        );
    }
    b.push_str("</tbody></table>");
    for c in &r.categories {
        let label = c.category.map_or("no mapping", |c| c.label());
        let _ = write!(
            b,
            r#"<h3 id="{}">{}: {} faulted ({})</h3>"#,
            category_anchor(c.category),
            esc(label),
            human(c.bytes.bytes),
            split(&c.bytes)
        );
        b.push_str(&stacks(&c.stacks, c.stacks_total, &c.bytes, shown.stacks));
        for (i, m) in c.mappings.iter().take(shown.mappings).enumerate() {
            let _ = write!(
                b,
                r#"<h4 id="{}"><code>{}</code> ({}): {} faulted ({})</h4>"#,
                mapping_anchor(c.category, i),
                esc(&m.mapping),
                esc(label),
                human(m.bytes.bytes),
                split(&m.bytes)
            );
            b.push_str(&stacks(&m.stacks, m.stacks_total, &m.bytes, shown.stacks));
        }
        let rest = &c.mappings[c.mappings.len().min(shown.mappings)..];
        if !rest.is_empty() {
            let bytes: u64 = rest.iter().map(|m| m.bytes.bytes).sum();
            let _ = write!(
                b,
                r#"<p class="faults-other">{} more: {} faulted.</p>"#,
                plural(rest.len(), "mapping", "mappings"),
                human(bytes)
            );
        }
    }
    b.push_str("</section>");
    b
}

/// `N written, N read, N not told` (the last only where there are some).
fn split(b: &FaultBytes) -> String {
    let mut s = format!("{} written, {} read", human(b.write), human(b.read));
    if b.unknown > 0 {
        let _ = write!(s, ", {} not told read or written", human(b.unknown));
    }
    s
}

fn cell(v: u64) -> String {
    format!(r#"<td class="n" data-v="{v}">{}</td>"#, human(v))
}

/// A box's stacks: the first `n` of those kept, then one row for the
/// others (those the recording kept past `n` and those it did not keep).
fn stacks(list: &[FaultStack], total: usize, all: &FaultBytes, n: usize) -> String {
    let mut b = String::from(
        r#"<table class="stacks"><thead><tr><th class="n">faulted</th><th class="n">written</th><th class="n">read</th><th>stack, innermost frame first</th></tr></thead><tbody>"#,
    );
    let mut shown = FaultBytes::default();
    for s in list.iter().take(n) {
        shown.merge(&s.bytes);
        let mut frames: Vec<String> =
            s.frames.iter().take(FRAMES).map(|f| esc(&cut(f, FRAME_CHARS))).collect();
        if s.frames.len() > FRAMES {
            frames.push(format!("… {} more", plural(s.frames.len() - FRAMES, "frame", "frames")));
        }
        let _ = write!(
            b,
            r#"<tr>{}{}{}<td class="stack"><code>{}</code></td></tr>"#,
            cell(s.bytes.bytes),
            cell(s.bytes.write),
            cell(s.bytes.read),
            frames.join(" &lt; ")
        );
    }
    let others = total.saturating_sub(list.len().min(n));
    if others > 0 {
        let rest = |a: u64, b: u64| a.saturating_sub(b);
        let _ = write!(
            b,
            r#"<tr class="other">{}{}{}<td>{}</td></tr>"#,
            cell(rest(all.bytes, shown.bytes)),
            cell(rest(all.write, shown.write)),
            cell(rest(all.read, shown.read)),
            plural(others, "other stack", "other stacks")
        );
    }
    b.push_str("</tbody></table>");
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use memtally_core::analyze::fault_report::{FaultCategory, FaultMapping, FaultProcess};

    fn bytes(write: u64) -> FaultBytes {
        FaultBytes { bytes: write, read: 0, write, unknown: 0 }
    }

    /// A heap of `n` stacks, each of its own function, in `[heap]`.
    pub(crate) fn report(n: usize, frame: &str) -> FaultReport {
        let stacks: Vec<FaultStack> = (0..n)
            .map(|i| FaultStack {
                frames: vec![format!("{frame}{i}"), "main".into()],
                bytes: bytes(4096 * (n - i) as u64),
            })
            .collect();
        let all = stacks.iter().fold(FaultBytes::default(), |mut a, s| {
            a.merge(&s.bytes);
            a
        });
        FaultReport {
            seconds: 2.0,
            sample_period: 1,
            page_size: 4096,
            samples: n as u64,
            lost: 0,
            kernel_faults_seen: true,
            buffer_cut: None,
            bytes: all,
            processes: vec![FaultProcess { pid: 42, command: "grow".into(), bytes: all }],
            categories: vec![FaultCategory {
                category: Some(Category::Heap),
                bytes: all,
                stacks: stacks.clone(),
                stacks_total: n,
                mappings: vec![FaultMapping {
                    mapping: "[heap]".into(),
                    bytes: all,
                    stacks,
                    stacks_total: n,
                }],
            }],
        }
    }

    #[test]
    fn boxes_link_to_their_mapping_or_category_of_traced_processes_only() {
        let r = report(3, "touch");
        let all = STEPS[0];
        assert_eq!(link(&r, all, Some(42), "heap", Some("[heap]")).unwrap(), "faults-heap-m0");
        assert_eq!(link(&r, all, Some(42), "heap", None).unwrap(), "faults-heap");
        let none = Shown { stacks: 0, mappings: 0 };
        assert_eq!(link(&r, none, Some(42), "heap", Some("[heap]")).unwrap(), "faults-heap");
        assert_eq!(link(&r, all, Some(42), "heap", Some("[anon]")), None, "no fault there");
        assert_eq!(link(&r, all, Some(7), "heap", None), None, "not traced");
        assert_eq!(link(&r, all, Some(42), "stack", None), None);
    }

    #[test]
    fn the_section_names_the_stacks_and_folds_the_rest_into_one_row() {
        let (shown, html) = section(&report(14, "touch_<b>"), 1 << 20);
        assert_eq!(shown, STEPS[0]);
        assert!(html.contains(r#"<h3 id="faults-heap">"#), "{html}");
        assert!(html.contains(r#"<h4 id="faults-heap-m0"><code>[heap]</code>"#), "{html}");
        assert!(html.contains("touch_&lt;b&gt;0 &lt; main"), "escaped, innermost first: {html}");
        assert!(!html.contains("touch_<b>"), "never raw");
        // 14 stacks, 10 shown: the 4 smallest (4, 3, 2, 1 pages) folded.
        assert!(html.contains(r#"<td class="n" data-v="40960">40.0K</td>"#), "{html}");
        assert!(html.contains("4 other stacks"), "{html}");
        // A tight budget: fewer stacks, more folded, within it.
        let (shown, small) = section(&report(14, "touch"), 3000);
        assert!(shown.stacks < 10 && small.len() <= 3000, "{shown:?}: {}", small.len());
        assert!(small.contains(&format!("{} other stacks", 14 - shown.stacks)), "{small}");
    }
}
