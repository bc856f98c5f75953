//! `memtally report`: one self-contained HTML page. It lays out and draws
//! what the report use case returns (the snapshot, `top`'s machine
//! picture, the groups' sums) and computes no figure of its own; it
//! embeds the snapshot JSON so `diff` and `report` read the page back.
//! No request leaves the file (inline style, SVG and script, allowed by
//! their hashes); the page reads and prints with scripts off.

mod faults;
mod growth;
mod page;
pub mod redact;
mod sections;
pub mod series;
mod svg;
mod tables;
pub mod tree;
pub mod treemap;

use std::fmt::Write as _;

use memtally_core::analyze::diff::Diff;
use memtally_core::analyze::report::Report;
use memtally_core::model::snapshot::Snapshot;

use crate::render::notes::words;
use crate::render::units::{human, plural, signed};

/// What the page says about itself, beside the report.
#[derive(Debug, Clone)]
pub struct PageInfo {
    /// Where the figures came from, for the header (`/proc`, a file).
    pub input: String,
    /// Whether `--redact` replaced the private strings.
    pub redacted: bool,
    /// The page's size budget, bytes.
    pub max_size: u64,
}

/// How many processes get a detail section.
const DETAILED: usize = 10;
/// How many mappings each detail lists.
const DETAIL_MAPPINGS: usize = 12;
/// What the page takes besides its embedded data and treemap nodes, about.
const FIXED: u64 = 48 << 10;
/// About what one treemap node takes on the page.
const PER_NODE: u64 = 330;
/// The treemap boxes a page draws however small its budget.
const MIN_NODES: usize = 64;

pub use crate::render::svg::esc;

/// What a page of `max_size` bytes can show of a document's regions: as
/// many treemap boxes as its budget has room for in the best case, each
/// detail table's mappings, the snapshot JSON it embeds whole.
pub fn page_room(max_size: u64) -> memtally_core::analyze::report::PageRoom {
    memtally_core::analyze::report::PageRoom {
        boxes: (max_size / PER_NODE).max(MIN_NODES as u64) as usize,
        largest: DETAIL_MAPPINGS,
        embedded: max_size / 2,
    }
}

/// The snapshot as JSON to embed in a `<script>` element: every `<`
/// written `\u003c` (JSON reads it back the same), so no `</script>` in a
/// path or command line can end the element.
fn embed(snapshot: &Snapshot) -> String {
    let json = serde_json::to_string(snapshot).unwrap_or_else(|_| "{}".into());
    json.replace('<', "\\u003c")
}

/// The snapshot to embed: whole when it fits in half the budget; else the
/// regions of the smallest processes are left out (their totals and
/// categories stay) until it fits, and a note says how many.
fn embedded(report: &Report, notes: &[String], budget: u64) -> (String, Option<String>) {
    let mut snap = report.snapshot.clone();
    snap.notes.extend(notes.iter().cloned());
    let json = embed(&snap);
    // Regions left out when read do not fit: the read kept them all else.
    if (json.len() as u64) <= budget / 2 && report.regions_left.is_empty() {
        return (json, None);
    }
    drop(json);
    let mut left_out = 0;
    if !report.regions_left.is_empty() {
        // The read cut these, as below, from every region's figures.
        for (i, p) in snap.processes.iter_mut().enumerate() {
            if report.regions_cut(i) && report.regions_of(&report.snapshot.processes[i]) > 0 {
                p.regions.clear();
                left_out += 1;
            }
        }
    }
    let mut order: Vec<usize> = (0..snap.processes.len()).collect();
    order.sort_by_key(|&i| {
        snap.processes[i].totals.pss.or(snap.processes[i].totals.rss).unwrap_or(0)
    });
    // Cut in steps (a tenth of the processes at a time), not one by one:
    // each try serializes the whole snapshot again.
    let step = (order.len() / 10).max(1);
    for chunk in order.chunks(step).take_while(|_| report.regions_left.is_empty()) {
        for &i in chunk {
            if !snap.processes[i].regions.is_empty() {
                snap.processes[i].regions.clear();
                left_out += 1;
            }
        }
        if (embed(&snap).len() as u64) <= budget / 2 {
            break;
        }
    }
    let note = format!(
        "the embedded snapshot leaves out the mappings of {} to stay within the page's size budget ({}): their totals and categories are kept; memtally snapshot writes every mapping",
        plural(left_out, "process", "processes"),
        human(budget)
    );
    snap.notes.push(note.clone());
    (embed(&snap), Some(note))
}

/// The whole page. With `diff` (`report --diff A B`, `report` being B's),
/// the treemap is the growth one and the growth tables come with it.
pub fn render(report: &Report, info: &PageInfo, diff: Option<&Diff>) -> String {
    let mut notes = words(&report.notes);
    // A saved vmmap text's warnings, as `memtally vmmap` prints them.
    if let Some(v) = &report.vmmap {
        notes.extend(crate::render::vmmap::warning_lines(v));
    }
    if report.summarized > 0 {
        let full = report.snapshot.processes.len() - report.summarized;
        notes.push(format!(
            "{} read in full (smaps: categories and mappings), the largest by PSS; the other {} are in these figures by their smaps_rollup totals, without categories or mappings (by default the largest always, then the next largest while they add up to at most 2,000 mappings and a quarter of the resident bytes; memtally report --detail N or --detail all reads more)",
            plural(full, "process was", "processes were"),
            plural(report.summarized, "process", "processes"),
        ));
    }
    let (json, cut) = embedded(report, &notes, info.max_size);
    notes.extend(cut);
    // The faults section first: it takes its share of the budget, and
    // the treemap's boxes link to what it shows.
    let share = info.max_size / faults::BUDGET_SHARE;
    let faults = report.faults.as_ref().map(|f| (f, faults::section(f, share)));
    let links = |pid: Option<u32>, category: &str, mapping: Option<&str>| {
        let (f, (shown, _)) = faults.as_ref()?;
        faults::link(f, *shown, pid, category, mapping)
    };
    let section = faults.as_ref().map_or("", |(_, (_, html))| html.as_str());
    // The recording as the section shows it, so the page read back
    // (`report --input`, `--diff`) draws the same section.
    let faults_json = faults.as_ref().map(|(f, (shown, _))| faults::embed(f, *shown));
    let mut full = match diff {
        Some(d) => growth::tree(d, tree::area_figure(report.snapshot.kind)),
        None => tree::build(report, &links),
    };
    let table_guess = 420 * (report.snapshot.processes.len() + report.unread.len()) as u64;
    let mut budget = info
        .max_size
        .saturating_sub(
            (json.len() + faults_json.as_ref().map_or(0, String::len)) as u64
                + FIXED
                + table_guess
                + section.len() as u64,
        )
        .checked_div(PER_NODE)
        .unwrap_or(0)
        .max(MIN_NODES as u64) as usize;
    // Fold, draw, and fold more if the page came out too big after all.
    loop {
        let mut root = full.clone();
        tree::fold(&mut root, budget);
        let html = page::page(
            &title(report),
            &body(report, info, &root, &notes, diff, section),
            Some(&json),
            faults_json.as_deref(),
        );
        if html.len() as u64 <= info.max_size {
            return html;
        }
        if budget <= MIN_NODES {
            // What is left (a row per process, the snapshot's totals) does
            // not fold: the page says it is over its budget.
            notes.push(format!(
                "this page is {}, over its size budget of {}: a row per process and the embedded snapshot's totals are not folded",
                human(html.len() as u64),
                human(info.max_size)
            ));
            return page::page(
                &title(report),
                &body(report, info, &root, &notes, diff, section),
                Some(&json),
                faults_json.as_deref(),
            );
        }
        budget /= 2;
        full = root;
    }
}

fn title(report: &Report) -> String {
    let s = &report.snapshot;
    match (&s.host, &s.time) {
        (Some(h), Some(t)) => format!("memtally report: {h}, {t}"),
        (Some(h), None) => format!("memtally report: {h}"),
        _ => "memtally report".into(),
    }
}

fn body(
    report: &Report,
    info: &PageInfo,
    root: &tree::Node,
    notes: &[String],
    diff: Option<&Diff>,
    faults: &str,
) -> String {
    let s = &report.snapshot;
    let mut b = String::new();
    let _ = write!(b, "<header><h1>{}</h1>", esc(&title(report)));
    let facts: Vec<String> = [
        Some(format!("input: {}", info.input)),
        s.kernel.as_ref().map(|k| format!("kernel {k}")),
        Some(plural(s.processes.len() + report.unread.len(), "process", "processes")),
        Some(format!("grouped by {}", memtally_core::model::Named::name(report.by))),
    ]
    .into_iter()
    .flatten()
    .collect();
    let _ = write!(b, r#"<p class="meta">{}</p>"#, esc(&facts.join(" · ")));
    let privacy = if info.redacted {
        r#"<p class="meta redacted" id="privacy" data-redacted="yes">Redacted: command-line arguments, user names, the host name, paths under home directories, the names of temporary files and shared memory objects, and the names of programs not installed on the system are placeholders.</p>"#
    } else {
        r#"<p class="meta" id="privacy" data-redacted="no">Not redacted: this page holds command lines, user names and paths (memtally report --redact replaces them).</p>"#
    };
    b.push_str(privacy);
    let to_faults = if faults.is_empty() { "" } else { r##"<a href="#faults">faults</a>"## };
    let _ = write!(
        b,
        r##"<nav class="noprint"><a href="#map">treemap</a>{to_faults}<a href="#machine">machine</a><a href="#processes">processes</a><a href="#details">details</a><a href="#notes">notes</a><a href="#data">data</a></nav></header>"##
    );
    b.push_str(&headline(report, root));
    // The treemap first: of growth on a diff page, else of where the
    // memory is; then the notes and the machine.
    b.push_str(&map(report, root, diff));
    b.push_str(faults);
    for n in notes.iter().chain(&s.notes) {
        let _ = write!(b, r#"<p class="note">{}</p>"#, esc(n));
    }
    // The machine.
    b.push_str(r#"<section id="machine"><h2>The machine</h2>"#);
    match &report.machine {
        Some(m) => {
            let from = if report.machine_from_file {
                " (from the meminfo the snapshot recorded, beside its processes)"
            } else {
                ""
            };
            let _ = write!(
                b,
                "<p>MemTotal {} split into lines that add up to it{from}; used {}, available {}.</p>",
                human(m.total),
                human(m.used),
                m.available.map_or_else(|| "-".to_string(), human)
            );
            b.push_str(&svg::waterfall(m));
            // A negative remainder, said in words beside its hatched box:
            // the bar's parts then run past MemTotal by that much.
            if m.unexplained < 0 {
                let _ = write!(
                    b,
                    r#"<p class="over" id="waterfall-over">The lines add up to {} more than MemTotal: <code>unexplained</code> is {}, drawn hatched at the bar's end, left of it the mark at MemTotal (figures read at different moments, or pages counted in two lines).</p>"#,
                    human(m.unexplained.unsigned_abs()),
                    signed(m.unexplained)
                );
            }
            b.push_str(r#"<ul class="legend" id="waterfall-groups">"#);
            for (group, bytes, _) in m.groups() {
                let _ = write!(
                    b,
                    "<li>{}{}: {}</li>",
                    tables::swatch(svg::group_colour(group)),
                    group,
                    signed(bytes)
                );
            }
            b.push_str(r##"</ul><p class="noprint"><a href="#lines">every line and its source</a></p>"##);
        }
        None => b.push_str("<p>No machine picture: it needs every process and the machine's meminfo (a live read of everything, or a snapshot that recorded them).</p>"),
    }
    if let Some(Ok(g)) = &report.gpu {
        b.push_str(&gpu_line(g));
    }
    b.push_str("</section>");
    rest(b, report, notes)
}

/// GPU memory as a line of the machine: where its drivers say it lives.
/// Device memory is outside MemTotal (not in the bar); system RAM is
/// inside it, in the bar's drivers line where a driver reports its pool
/// (amdgpu's GTT), else in `unexplained`.
fn gpu_line(g: &memtally_core::analyze::gpu::GpuReport) -> String {
    use memtally_core::analyze::gpu::Residence;
    let parts: Vec<String> = g
        .by_residence()
        .into_iter()
        .map(|(r, bytes)| {
            let what = match r {
                Some(Residence::SystemRam) => "in system RAM (inside MemTotal: in the bar's drivers line where the driver reports its pool, else in unexplained)",
                Some(Residence::Device) => "in device memory (outside MemTotal: not in the bar)",
                Some(Residence::Unknown) => "where the driver does not say",
                None => "in dma-bufs no driver here exported",
            };
            format!(r#"<span data-v="{bytes}">{}</span> {what}"#, human(bytes))
        })
        .collect();
    format!(
        r##"<p id="gpu-machine">GPU memory: <b data-v="{}">{}</b> (<a href="#gpu">per process</a>): {}.</p>"##,
        g.proportional,
        human(g.proportional),
        parts.join("; ")
    )
}

/// The page's first line: the selection's PSS (resident for vmmap), its
/// dirty share, and the three largest programs (a vmmap text's largest
/// region types), from the report's own figures.
fn headline(report: &Report, root: &tree::Node) -> String {
    let s = &report.snapshot;
    let kind = s.kind;
    let vmmap = kind == memtally_core::model::snapshot::SnapshotKind::Vmmap;
    // vmmap: the footprint the treemap draws (its root's area).
    let area = match vmmap {
        true => Some(root.value),
        false => s.totals.figure(tree::area_figure(kind)),
    };
    let mut parts = vec![format!(
        "<b>{} {}</b> in {}",
        if vmmap { "Footprint" } else { "PSS" },
        area.map_or_else(|| "-".to_string(), human),
        plural(s.processes.len() + report.unread.len(), "process", "processes")
    )];
    // vmmap: the header's figure and memtally's check of it (the
    // footprint is dirty bytes already: no dirty share).
    if let Some(v) = &report.vmmap {
        if let Some(p) = v.doc.header.physical_footprint {
            let check = match &v.footprint_check {
                Some(c) if c.agrees => ", memtally's the same within vmmap's rounding".to_string(),
                Some(c) => format!(
                    ", memtally's {} {} (see the vmmap section)",
                    human(c.difference.unsigned_abs()),
                    if c.difference > 0 { "less" } else { "more" }
                ),
                None => String::new(),
            };
            parts.push(format!("Physical footprint (vmmap's header) {}{check}", human(p)));
        }
    }
    let dirty = tree::dirty_of(&s.totals, kind).filter(|_| !vmmap);
    if let (Some(d), Some(a)) = (dirty, area.filter(|&a| a > 0)) {
        parts.push(format!(
            "{:.0}% dirty ({} {})",
            100.0 * d as f64 / a as f64,
            esc(tables::dirty_name(report)),
            human(d)
        ));
    }
    let share = |v: u64| match area.filter(|&a| a > 0) {
        Some(a) => format!(" ({:.0}%)", 100.0 * v as f64 / a as f64),
        None => String::new(),
    };
    let largest: Vec<String> = if vmmap {
        // The types as the treemap draws them (under each process).
        fn walk<'a>(n: &'a tree::Node, out: &mut Vec<&'a tree::Node>) {
            match n.kind {
                tree::Kind::Category => out.push(n),
                _ => n.children.iter().for_each(|c| walk(c, out)),
            }
        }
        let mut types: Vec<&tree::Node> = Vec::new();
        walk(root, &mut types);
        types.sort_by_key(|c| std::cmp::Reverse(c.value));
        types
            .iter()
            .filter(|c| c.value > 0)
            .take(memtally_core::analyze::report::HEADLINE_PROGRAMS)
            .map(|c| format!("{} {}{}", esc(&c.label), human(c.value), share(c.value)))
            .collect()
    } else {
        report
            .programs
            .iter()
            .map(|g| {
                let v = g.totals.figure(tree::area_figure(kind)).unwrap_or(0);
                format!("{} {}{}", esc(&g.key), human(v), share(v))
            })
            .collect()
    };
    if let Some(Ok(g)) = report.gpu.as_ref().filter(|_| !vmmap) {
        if g.proportional > 0 {
            parts.push(format!("GPU memory {}", human(g.proportional)));
        }
    }
    if !largest.is_empty() {
        let what = if vmmap { "largest region types" } else { "largest programs" };
        parts.push(format!("{what}: {}", largest.join(", ")));
    }
    format!(r#"<p id="headline">{}</p>"#, parts.join(" · "))
}

/// The treemap's section: of growth on a diff page, else of where the
/// memory is.
fn map(report: &Report, root: &tree::Node, diff: Option<&Diff>) -> String {
    let kind = report.snapshot.kind;
    let mut b = String::new();
    if let Some(d) = diff {
        let area = if kind == memtally_core::model::snapshot::SnapshotKind::Vmmap {
            "resident"
        } else {
            "PSS"
        };
        let map = format!(
            r#"<p id="crumbs" class="noprint"></p><p id="sel"></p>{}"#,
            svg::treemap(root, "dirty", area)
        );
        let _ = write!(b, r#"<div id="map">{}</div>"#, growth::section(d, &map));
        return b;
    }
    let gpu = matches!(&report.gpu, Some(Ok(g)) if g.proportional > 0);
    let area = match kind {
        memtally_core::model::snapshot::SnapshotKind::Vmmap => "footprint",
        memtally_core::model::snapshot::SnapshotKind::Linux if gpu => "PSS and GPU memory",
        memtally_core::model::snapshot::SnapshotKind::Linux => "PSS",
    };
    let dirty = tables::dirty_name(report);
    let _ = write!(
        b,
        r#"<section id="map"><h2>Where the memory goes</h2><p>Area: {}; colour: the {dirty} share. Machine → {} → process → category → mapping. Click to go down, the path above to go up; hover for figures.</p>"#,
        match kind {
            memtally_core::model::snapshot::SnapshotKind::Vmmap => "footprint (dirty + swapped, volatile purgeable left out, as memtally vmmap counts it)",
            memtally_core::model::snapshot::SnapshotKind::Linux if gpu => "PSS; beside the programs, GPU memory (as memtally gpu divides it) per process and where its driver says it lives: system RAM or device memory",
            memtally_core::model::snapshot::SnapshotKind::Linux => "PSS",
        },
        memtally_core::model::Named::name(report.by)
    );
    b.push_str(r#"<ul class="legend" id="legend"><li><span class="sw s-clean"></span>clean</li><li><span class="sw s-half"></span>half dirty</li><li><span class="sw s-dirty"></span>all dirty</li><li><span class="sw s-unk"></span>dirty unknown</li><li><span class="sw s-small"></span>N smaller, folded</li><li><span class="sw s-unread"></span>not readable (status RSS)</li></ul>"#);
    b.push_str(r#"<p id="crumbs" class="noprint"></p><p id="sel"></p>"#);
    b.push_str(&svg::treemap(root, dirty, area));
    b.push_str("</section>");
    b
}

/// The sections after the treemap: every process, details, the machine's
/// lines, notes, data.
fn rest(mut b: String, report: &Report, notes: &[String]) -> String {
    let s = &report.snapshot;
    let kind = s.kind;
    // Every process.
    let mut largest: Vec<&memtally_core::model::snapshot::SnapProcess> =
        s.processes.iter().filter(|p| !p.categories.is_empty()).collect();
    largest.sort_by_key(|p| std::cmp::Reverse(p.totals.figure(tree::area_figure(kind))));
    largest.truncate(DETAILED);
    let detailed: Vec<u32> = largest.iter().filter_map(|p| p.pid).collect();
    let _ = write!(
        b,
        r#"<section id="processes"><h2>Processes</h2><p>Every process read; click a heading to sort.</p>{}{}</section>"#,
        match tables::exclusive_sentence(report) {
            t if t.is_empty() => String::new(),
            t => format!(r#"<p id="exclusive-note">{t}</p>"#),
        },
        tables::processes(report, &detailed)
    );
    b.push_str(r#"<section id="details"><h2>The largest processes</h2>"#);
    for p in &largest {
        b.push_str(&tables::detail(p, report, DETAIL_MAPPINGS));
    }
    b.push_str("</section>");
    if let Some(v) = &report.vmmap {
        b.push_str(&sections::vmmap(v));
    }
    if let Some(g) = &report.gpu {
        b.push_str(&sections::gpu(g));
    }
    if let Some(c) = &report.cgroups {
        b.push_str(&sections::cgroups(c));
    }
    if let Some(m) = &report.machine {
        let _ = write!(
            b,
            r#"<section id="lines"><h2>The machine, line by line</h2>{}</section>"#,
            tables::waterfall_legend(m)
        );
    }
    b.push_str(r#"<section id="notes"><h2>Notes</h2>"#);
    if notes.is_empty() && s.notes.is_empty() {
        b.push_str(match kind {
            memtally_core::model::snapshot::SnapshotKind::Linux => {
                "<p>None: every selected process was read in full.</p>"
            }
            memtally_core::model::snapshot::SnapshotKind::Vmmap => {
                "<p>None: every line of the input was read.</p>"
            }
        });
    }
    for n in notes.iter().chain(&s.notes) {
        let _ = write!(b, "<p>{}</p>", esc(n));
    }
    b.push_str("</section>");
    b.push_str(r#"<section id="data"><h2>Data</h2><p>This page carries its snapshot (the JSON <code>memtally snapshot</code> writes): <code>memtally diff this.html other.json</code> and <code>memtally report --input this.html</code> read it back.</p></section>"#);
    b
}

#[cfg(test)]
mod tests {
    use super::esc;

    /// Names from the input reach the page as the text views print them:
    /// ESC, NUL, BEL, U+2028 and a direction override never raw, markup
    /// escaped.
    #[test]
    fn page_text_escapes_controls_as_the_text_views_do() {
        let name = "a\u{1b}[31mb\u{0}c\u{7}d\u{2028}e\u{202E}f<g>&\"h\ni";
        let page = esc(name);
        assert_eq!(page, "a?[31mb?c?d?e?f&lt;g&gt;&amp;&quot;h\\ni");
        assert!(!page.chars().any(|c| c.is_control() || c == '\u{2028}'));
        assert_eq!(esc("/usr/lib/libc.so.6 (deleted)"), "/usr/lib/libc.so.6 (deleted)");
    }
}
