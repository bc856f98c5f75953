//! The human report of `memtally vmmap`.

use memtally_core::analyze::vmmap::VmmapReport;
use memtally_core::analyze::vmmap::{
    bucket_footprint, bucket_reclaimable, row_footprint, row_reclaimable, total_footprint, Bucket,
    FootprintCheck, FootprintFrom, GPU_TYPES,
};
use memtally_core::model::vmmap::{Header, SummaryRow};

use super::{count_and_sizes, detail, VmmapView};
use crate::render::blocks::{section, Block};
use crate::render::table::{Align, Table};
use crate::render::units::{human, human_opt};

fn header_line(h: &Header) -> String {
    let mut parts = Vec::new();
    match (&h.process, h.pid) {
        (Some(p), Some(pid)) => parts.push(format!("{p} [{pid}]")),
        (Some(p), None) => parts.push(p.clone()),
        (None, Some(pid)) => parts.push(format!("process {pid}")),
        (None, None) => parts.push("process not stated".into()),
    }
    if let Some(os) = &h.os_version {
        parts.push(os.clone());
    }
    if let Some(f) = h.physical_footprint {
        let peak =
            h.physical_footprint_peak.map(|p| format!(" (peak {})", human(p))).unwrap_or_default();
        parts.push(format!("physical footprint {}{peak}", human(f)));
    }
    if let Some(p) = h.page_size {
        parts.push(format!("page size {p}"));
    }
    if h.pages {
        let used = h.page_size_used.map(|p| p.to_string()).unwrap_or_else(|| "?".into());
        let assumed = if h.page_size_assumed { ", assumed" } else { "" };
        parts.push(format!("sizes were page counts (x {used} bytes{assumed})"));
    }
    parts.join(", ")
}

/// The human report: the footprint, GPU memory by purge state (or the
/// selected types by purge state, or `--by` groups), the footprint by
/// type, vmmap's TOTAL row; histograms and regions only when asked
/// (their bars are sized to `width`).
pub(super) fn blocks(r: &VmmapView, width: Option<usize>) -> Vec<Block> {
    let rep = r.report;
    let doc = &rep.doc;
    let mut out = vec![Block::Heading(format!("vmmap: {}", header_line(&doc.header)))];
    let types = rep.tally.filter.types();
    out.push(Block::Line(format!(
        "types: {}; {} of {} region lines selected",
        if types.iter().all(|t| t.is_empty()) { "all".to_string() } else { types.join(", ") },
        rep.tally.selected,
        rep.tally.regions_read
    )));
    footprint_line(r, &mut out);
    if let Some((key, groups)) = &rep.groups {
        section(&mut out, format!("By {key}:"));
        let mut t = Table::new(&[
            (key.to_uppercase().as_str(), Align::Left),
            ("REGIONS", Align::Right),
            ("VSIZE", Align::Right),
            ("RESIDENT", Align::Right),
            ("DIRTY", Align::Right),
            ("SWAP", Align::Right),
        ]);
        for g in groups {
            let mut row = vec![g.key.clone()];
            row.extend(count_and_sizes(g.regions as u64, &g.sizes));
            t.row(row);
        }
        let tot = &rep.tally.total;
        let mut footer = vec!["total".to_string()];
        footer.extend(count_and_sizes(tot.regions, &tot.sizes));
        t.footer(footer);
        out.push(Block::Table(t));
    } else if rep.tally.regions_read > 0 {
        purge_breakdown(r, &mut out);
    }
    if rep.tally.regions_read == 0 {
        summary_gpu(r, &mut out);
    }
    footprint_table(r, &mut out);
    summary_table(r, &mut out);
    detail::histograms(r, width, &mut out);
    detail::region_list(r, &mut out);
    warnings(r, &mut out);
    out
}

/// `--types`, or the seed's GPU types when none were given.
fn shown_types(r: &VmmapView) -> (Vec<String>, String) {
    let types = r.report.tally.filter.types();
    if types.is_empty() {
        let gpu: Vec<String> = GPU_TYPES.iter().map(|s| s.to_string()).collect();
        let title = format!("GPU memory ({}) by purge state", gpu.join(", "));
        (gpu, title)
    } else if types.iter().all(|t| t.is_empty()) {
        // `--types ''`: every type, as the seed reads it.
        (vec![String::new()], "Every region type by purge state".to_string())
    } else {
        (types.to_vec(), format!("{} by purge state", types.join(", ")))
    }
}

fn wanted(types: &[String], t: &str) -> bool {
    types.iter().any(|w| t.contains(w.as_str()))
}

/// One line: the footprint (Apple's definition), the reclaimable bytes,
/// and the footprint vmmap's header states.
fn footprint_line(r: &VmmapView, out: &mut Vec<Block>) {
    let rep = r.report;
    let f = &rep.footprint;
    let from = match rep.footprint_from {
        FootprintFrom::Regions => "the region lines",
        FootprintFrom::Summary => "the summary table, rounded",
        FootprintFrom::None => return,
    };
    out.push(Block::Blank);
    let Some(fp) = f.footprint else {
        out.push(Block::Line("Footprint: - (the input has no dirty or swapped sizes)".into()));
        return;
    };
    let (fp, rec) = (human(fp), human_opt(f.reclaimable));
    let w = fp.len().max(rec.len());
    out.push(Block::Line(format!(
        "Footprint:   {fp:>w$}  dirty + swapped, volatile purgeable left out ({from})"
    )));
    out.push(Block::Line(format!(
        "Reclaimable: {rec:>w$}  volatile purgeable: the system may discard it"
    )));
    if let Some(p) = rep.doc.header.physical_footprint {
        out.push(Block::Line(format!("vmmap's physical footprint (whole process): {}", human(p))));
    }
    if let Some(c) = &rep.footprint_check {
        out.push(Block::Line(footprint_check_line(c)));
    }
}

/// memtally's footprint of every type beside the header's: agreeing
/// within vmmap's rounding, or the difference (the report page's too).
pub(crate) fn footprint_check_line(c: &FootprintCheck) -> String {
    let from = match c.from {
        FootprintFrom::Regions => "the region lines",
        FootprintFrom::Summary | FootprintFrom::None => "the summary table",
    };
    let ours = format!("memtally's of every type ({from}): {}", human(c.memtally));
    if c.agrees {
        return format!("{ours}, the same within vmmap's rounding ({})", human(c.rounding));
    }
    // Worded by direction: below the header, the input may lack regions;
    // above it, memtally counts something xnu's ledger does not.
    let (more_or_less, why) = if c.difference > 0 {
        (
            "less",
            "the input lacks regions (cut short?) or the header counts memory no region line shows",
        )
    } else {
        ("more", "memtally counts memory the header does not (a region type xnu charges otherwise, or regions listed twice)")
    };
    format!(
        "{ours}: {} {more_or_less} than vmmap's, more than its rounding ({}) explains: {why}",
        human(c.difference.unsigned_abs()),
        human(c.rounding)
    )
}

fn fp_cells(footprint: Option<u64>, reclaimable: Option<u64>) -> [String; 2] {
    [human_opt(footprint), human_opt(reclaimable)]
}

/// The seed's view, from memtally's parse: (type, purge) rows of the GPU
/// types (or `--types`), with footprint and reclaimable bytes.
fn purge_breakdown(r: &VmmapView, out: &mut Vec<Block>) {
    let (types, title) = shown_types(r);
    let rows: Vec<_> =
        r.report.tally.breakdown.iter().filter(|((t, _), _)| wanted(&types, t)).collect();
    if rows.is_empty() {
        return section(out, format!("{title}: no such regions"));
    }
    section(out, format!("{title}:"));
    let mut t = Table::new(&[
        ("REGION TYPE", Align::Left),
        ("PURGE", Align::Left),
        ("REGIONS", Align::Right),
        ("VSIZE", Align::Right),
        ("RESIDENT", Align::Right),
        ("DIRTY", Align::Right),
        ("SWAP", Align::Right),
        ("FOOTPRINT", Align::Right),
        ("RECLAIMABLE", Align::Right),
    ]);
    let mut tot = Bucket::default();
    let (mut fp, mut rec) = (None, None);
    for (&(ref rtype, purge), b) in rows {
        let mut row = vec![rtype.clone(), purge.label().into()];
        row.extend(count_and_sizes(b.regions, &b.sizes));
        let (f, c) = (bucket_footprint(rtype, purge, b), bucket_reclaimable(purge, b));
        row.extend(fp_cells(f, c));
        // Narrow, the purge state is its code (`N` for `N (Non-Volatile)`).
        t.row_with_compact(row, 1, purge.code().into());
        tot.regions += b.regions;
        tot.sizes.add(&b.sizes);
        add(&mut fp, f);
        add(&mut rec, c);
    }
    let mut footer = vec!["total".to_string(), String::new()];
    footer.extend(count_and_sizes(tot.regions, &tot.sizes));
    footer.extend(fp_cells(fp, rec));
    t.footer(footer);
    t.narrow_first(1);
    out.push(Block::Table(t));
}

fn add(slot: &mut Option<u64>, v: Option<u64>) {
    if let Some(v) = v {
        *slot = Some(slot.unwrap_or(0).saturating_add(v));
    }
}

const SUMMARY_HEADERS: [(&str, Align); 9] = [
    ("REGION TYPE", Align::Left),
    ("COUNT", Align::Right),
    ("VIRTUAL", Align::Right),
    ("RESIDENT", Align::Right),
    ("DIRTY", Align::Right),
    ("SWAPPED", Align::Right),
    ("VOLATILE", Align::Right),
    ("NONVOL", Align::Right),
    ("EMPTY", Align::Right),
];

fn summary_cells(s: &SummaryRow) -> Vec<String> {
    vec![
        s.region_type.clone(),
        s.count.map_or("-".into(), |c| c.to_string()),
        human_opt(s.virtual_size),
        human_opt(s.resident),
        human_opt(s.dirty),
        human_opt(s.swapped),
        human_opt(s.volatile),
        human_opt(s.nonvol),
        human_opt(s.empty),
    ]
}

/// Input without region lines: the GPU rows (or `--types` rows) of the
/// summary table by purgeable state, and vmmap's purgeable totals.
fn summary_gpu(r: &VmmapView, out: &mut Vec<Block>) {
    let doc = &r.report.doc;
    if doc.summary.is_empty() {
        return;
    }
    let (types, title) = shown_types(r);
    let rows: Vec<&SummaryRow> =
        doc.summary.iter().filter(|s| wanted(&types, &s.region_type)).collect();
    if rows.is_empty() {
        section(out, format!("{title} (from the summary table): no such rows"));
    } else {
        section(out, format!("{title} (from the summary table):"));
        let mut headers = SUMMARY_HEADERS.to_vec();
        headers.extend([("FOOTPRINT", Align::Right), ("RECLAIMABLE", Align::Right)]);
        let mut t = Table::new(&headers);
        for s in rows {
            let mut row = summary_cells(s);
            row.extend(fp_cells(row_footprint(s), row_reclaimable(s)));
            t.row(row);
        }
        out.push(Block::Table(t));
    }
    if let Some(c) = &r.report.total_check {
        let tot = &c.total;
        if tot.volatile.is_some() || tot.nonvol.is_some() || tot.empty.is_some() {
            out.push(Block::Line(format!(
                "Purgeable (vmmap's TOTAL row): volatile {} (reclaimable), non-volatile {}, empty {}",
                human_opt(tot.volatile),
                human_opt(tot.nonvol),
                human_opt(tot.empty)
            )));
        }
    }
}

/// How many types the footprint table shows before it sums up the rest.
const FOOTPRINT_ROWS: usize = 15;

/// The footprint per selected type of the region lines, largest first
/// (without region lines the summary table carries these columns).
fn footprint_table(r: &VmmapView, out: &mut Vec<Block>) {
    let rep = r.report;
    let mut rows: Vec<(String, u64, Option<u64>, Option<u64>)> = rep
        .tally
        .footprint
        .iter()
        .map(|(k, f)| (k.clone(), f.regions, f.footprint, f.reclaimable))
        .collect();
    if rows.iter().all(|x| x.2.is_none()) {
        return;
    }
    rows.sort_by(|a, b| b.2.cmp(&a.2).then(b.3.cmp(&a.3)).then(a.0.cmp(&b.0)));
    section(out, "Footprint by region type (dirty + swapped, volatile purgeable left out):".into());
    let mut t = Table::new(&[
        ("REGION TYPE", Align::Left),
        ("REGIONS", Align::Right),
        ("FOOTPRINT", Align::Right),
        ("RECLAIMABLE", Align::Right),
    ]);
    let shown =
        |x: &(String, u64, Option<u64>, Option<u64>)| x.2.unwrap_or(0) > 0 || x.3.unwrap_or(0) > 0;
    let nonzero = rows.iter().filter(|x| shown(x)).count();
    for (k, n, f, c) in rows.iter().filter(|x| shown(x)).take(FOOTPRINT_ROWS) {
        let mut row = vec![k.clone(), n.to_string()];
        row.extend(fp_cells(*f, *c));
        t.row(row);
    }
    let f = &rep.footprint;
    let mut footer = vec!["total".to_string(), f.regions.to_string()];
    footer.extend(fp_cells(f.footprint, f.reclaimable));
    t.footer(footer);
    out.push(Block::Table(t));
    let (more, zero) = (nonzero.saturating_sub(FOOTPRINT_ROWS), rows.len() - nonzero);
    let mut left = Vec::new();
    if more > 0 {
        left.push(format!("{more} more type(s) with a footprint"));
    }
    if zero > 0 {
        left.push(format!("{zero} type(s) with none"));
    }
    if !left.is_empty() {
        out.push(Block::Line(format!(
            "(not shown: {}; --format json lists every type)",
            left.join(", ")
        )));
    }
}

/// vmmap's summary table: in full when the input has no region lines (or
/// `--types` picks rows), else its TOTAL row; the TOTAL checked against
/// the sum of the rows.
fn summary_table(r: &VmmapView, out: &mut Vec<Block>) {
    let rep = r.report;
    let full = rep.tally.regions_read == 0 || !rep.tally.filter.types().is_empty();
    let rows: Vec<&SummaryRow> = if full { r.selected_summary().collect() } else { Vec::new() };
    let check = rep.total_check.as_ref();
    if rows.is_empty() && check.is_none() {
        return;
    }
    // Without region lines, the footprint per type is the table's.
    let with_fp = rep.tally.regions_read == 0 && rows.iter().any(|s| row_footprint(s).is_some());
    let cells = |s: &SummaryRow| {
        let mut c = summary_cells(s);
        if with_fp {
            c.extend(fp_cells(row_footprint(s), row_reclaimable(s)));
        }
        c
    };
    section(out, "Summary table (as vmmap printed it):".into());
    let mut headers = SUMMARY_HEADERS.to_vec();
    if with_fp {
        headers.extend([("FOOTPRINT", Align::Right), ("RECLAIMABLE", Align::Right)]);
    }
    let mut t = Table::new(&headers);
    for s in rows {
        t.row(cells(s));
    }
    if let Some(c) = check {
        // The TOTAL's footprint as the headline counts it (with the owned
        // unmapped graphics memory, which vmmap's TOTAL has in RESIDENT only).
        let mut foot = summary_cells(&c.total);
        if with_fp {
            foot.extend(fp_cells(total_footprint(&rep.doc), row_reclaimable(&c.total)));
        }
        t.footer(foot);
    }
    out.push(Block::Table(t));
    if let Some(c) = check {
        let rows = rep.doc.summary.len();
        out.push(Block::Line(if c.differences.is_empty() {
            format!("(vmmap's TOTAL agrees with the sum of its {rows} rows)")
        } else {
            format!(
                "(vmmap's TOTAL differs from the sum of its {rows} rows: {})",
                c.differences.join("; ")
            )
        }));
    }
}

fn warnings(r: &VmmapView, out: &mut Vec<Block>) {
    let lines = warning_lines(r.report);
    if !lines.is_empty() {
        section(out, "Warnings:".into());
        out.extend(lines.into_iter().map(|l| Block::Line(format!("  {l}"))));
    }
}

/// The table's warnings, one line each (the report page's notes too).
pub(crate) fn warning_lines(report: &VmmapReport) -> Vec<String> {
    let d = &report.doc.diagnostics;
    let mut lines: Vec<String> = Vec::new();
    if report.tally.overcommits > 0 {
        let s = &report.tally.overcommit_samples[0];
        lines.push(format!(
            "{} region(s) report dirty + swap above their virtual size (first: line {}, {} {} dirty + {} swap > {} vsize)",
            report.tally.overcommits,
            s.line,
            s.region_type,
            human(s.dirty),
            human(s.swap),
            human(s.vsize)
        ));
    }
    for m in &report.mismatches {
        lines.push(format!(
            "{}: {} region line(s), but the summary table counts {}",
            m.region_type, m.region_lines, m.summary_count
        ));
    }
    if d.unreadable > 0 {
        let first: Vec<String> = d
            .unreadable_samples
            .iter()
            .take(5)
            .map(|p| format!("line {}: {}", p.line, p.reason))
            .collect();
        lines.push(format!(
            "PARTIAL: {} line(s) look like regions or table rows but could not be read ({}); --format json lists them",
            d.unreadable,
            first.join("; ")
        ));
    }
    if d.damaged > 0 {
        let p = &d.damaged_samples[0];
        lines.push(format!(
            "{} region line(s) read with damaged non-size fields (first: line {}: {})",
            d.damaged, p.line, p.reason
        ));
    }
    if d.elisions > 0 {
        lines.push(format!(
            "PARTIAL: the input has {} elision line(s) (`...`): regions were left out by whoever saved it",
            d.elisions
        ));
    }
    lines.extend(d.notes.iter().map(super::notes::document_note));
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 37, item 11: the check is worded by direction; "cut short?"
    /// only where memtally is below the header.
    #[test]
    fn the_footprint_check_is_worded_by_direction() {
        let check = |difference: i64| FootprintCheck {
            vmmap: 900 << 20,
            memtally: (900i64 * (1 << 20) - difference) as u64,
            from: FootprintFrom::Summary,
            difference,
            rounding: 1 << 19,
            agrees: false,
        };
        let below = footprint_check_line(&check(100 << 20));
        assert!(
            below.contains("100M less than vmmap's") && below.contains("cut short?"),
            "{below}"
        );
        let above = footprint_check_line(&check(-(3 << 20)));
        assert!(above.contains("3.0M more than vmmap's"), "{above}");
        assert!(
            !above.contains("cut short") && above.contains("counts memory the header does not")
        );
    }
}
