//! The human report of `memtally vmmap`.

use std::io::{self, Write};

use memtally_core::analyze::vmmap::Footprint;
use memtally_core::model::vmmap::{Header, SummaryRow};
use memtally_core::model::Purge;

use super::{count_and_sizes, VmmapView};
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

/// The human report.
pub(super) fn table(r: &VmmapView, out: &mut dyn Write) -> io::Result<()> {
    let doc = &r.report.doc;
    writeln!(out, "vmmap: {}", header_line(&doc.header))?;
    let types = r.report.tally.filter.types();
    writeln!(
        out,
        "types: {}; {} of {} region lines selected",
        if types.is_empty() { "all".to_string() } else { types.join(", ") },
        r.report.tally.selected,
        r.report.tally.regions_read
    )?;
    let summary: Vec<&SummaryRow> = r.selected_summary().collect();
    if !summary.is_empty() {
        writeln!(out, "\nSummary table (as vmmap printed it):")?;
        let mut t = Table::new(&[
            ("REGION TYPE", Align::Left),
            ("COUNT", Align::Right),
            ("VIRTUAL", Align::Right),
            ("RESIDENT", Align::Right),
            ("DIRTY", Align::Right),
            ("SWAPPED", Align::Right),
            ("VOLATILE", Align::Right),
            ("NONVOL", Align::Right),
            ("EMPTY", Align::Right),
        ]);
        for s in summary {
            t.row(vec![
                s.region_type.clone(),
                s.count.map_or("-".into(), |c| c.to_string()),
                human_opt(s.virtual_size),
                human_opt(s.resident),
                human_opt(s.dirty),
                human_opt(s.swapped),
                human_opt(s.volatile),
                human_opt(s.nonvol),
                human_opt(s.empty),
            ]);
        }
        out.write_all(t.render().as_bytes())?;
    }
    if let Some((key, groups)) = &r.report.groups {
        writeln!(out, "\nBy {key}:")?;
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
        let tot = &r.report.tally.total;
        let mut footer = vec!["total".to_string()];
        footer.extend(count_and_sizes(tot.regions, &tot.sizes));
        t.footer(footer);
        out.write_all(t.render().as_bytes())?;
    } else if r.report.tally.selected > 0 {
        writeln!(out, "\nBy region type and purge state:")?;
        let mut t = Table::new(&[
            ("REGION TYPE", Align::Left),
            ("PURGE", Align::Left),
            ("REGIONS", Align::Right),
            ("VSIZE", Align::Right),
            ("RESIDENT", Align::Right),
            ("DIRTY", Align::Right),
            ("SWAP", Align::Right),
        ]);
        for ((rtype, purge), b) in &r.report.tally.breakdown {
            let mut row = vec![rtype.clone(), Purge::from_code(purge).label().into()];
            row.extend(count_and_sizes(b.regions, &b.sizes));
            t.row(row);
        }
        let tot = &r.report.tally.total;
        let mut footer = vec!["total".to_string(), String::new()];
        footer.extend(count_and_sizes(tot.regions, &tot.sizes));
        t.footer(footer);
        out.write_all(t.render().as_bytes())?;
        footprint_table(&r.report.tally.footprint, out)?;
        histograms(r, out)?;
    }
    if r.list_regions && !r.report.regions.is_empty() {
        writeln!(out, "\nRegions:")?;
        let mut t = Table::new(&[
            ("LINE", Align::Right),
            ("REGION TYPE", Align::Left),
            ("START", Align::Left),
            ("END", Align::Left),
            ("VSIZE", Align::Right),
            ("RESIDENT", Align::Right),
            ("DIRTY", Align::Right),
            ("SWAP", Align::Right),
            ("PRT/MAX", Align::Left),
            ("SM", Align::Left),
            ("PURGE", Align::Left),
            ("DETAIL", Align::Left),
        ]);
        for (line, g) in &r.report.regions {
            t.row(vec![
                line.to_string(),
                g.region_type.clone().unwrap_or_default(),
                g.start.map_or("-".into(), |a| format!("{a:x}")),
                g.end.map_or("-".into(), |a| format!("{a:x}")),
                human_opt(g.sizes.size),
                human_opt(g.sizes.rss),
                human_opt(g.sizes.dirty),
                human_opt(g.sizes.swap),
                format!("{}/{}", g.perms, g.max_perms.as_deref().unwrap_or("?")),
                g.share_mode.clone().unwrap_or_default(),
                g.purge.code().into(),
                g.path.clone().unwrap_or_default(),
            ]);
        }
        out.write_all(t.render().as_bytes())?;
    }
    warnings(r, out)
}

fn footprint_table(
    fp: &std::collections::BTreeMap<String, Footprint>,
    out: &mut dyn Write,
) -> io::Result<()> {
    if fp.values().all(|f| f.footprint.is_none()) {
        return Ok(());
    }
    writeln!(out, "\nFootprint (dirty + swapped) per type:")?;
    let mut t = Table::new(&[
        ("REGION TYPE", Align::Left),
        ("REGIONS", Align::Right),
        ("FOOTPRINT", Align::Right),
        ("RECLAIMABLE (V/E)", Align::Right),
        ("VOLATILE VSIZE", Align::Right),
        ("EMPTY VSIZE", Align::Right),
        ("NONVOL VSIZE", Align::Right),
    ]);
    let mut rows: Vec<(&String, &Footprint)> = fp.iter().collect();
    rows.sort_by(|a, b| b.1.footprint.cmp(&a.1.footprint).then(a.0.cmp(b.0)));
    for (k, f) in rows {
        t.row(vec![
            k.clone(),
            f.regions.to_string(),
            human_opt(f.footprint),
            human_opt(f.reclaimable),
            human(f.volatile_vsize),
            human(f.empty_vsize),
            human(f.nonvol_vsize),
        ]);
    }
    out.write_all(t.render().as_bytes())
}

fn histograms(r: &VmmapView, out: &mut dyn Write) -> io::Result<()> {
    for rtype in r.report.tally.exact.keys() {
        let rows: Vec<(String, [u64; 4], u64)> = if r.pow2 {
            r.report.tally.pow2[rtype]
                .iter()
                .map(|(b, (p, bytes))| {
                    let label = if *b <= 1 {
                        format!("<= {b}")
                    } else {
                        format!("{}..{}", human(b / 2 + 1), human(*b))
                    };
                    (label, *p, *bytes)
                })
                .collect()
        } else {
            r.report.tally.exact[rtype]
                .iter()
                .map(|(s, p)| (human(*s), *p, s.saturating_mul(p.iter().sum())))
                .collect()
        };
        let how = if r.pow2 { "power-of-two size buckets" } else { "exact virtual size" };
        writeln!(out, "\nHistogram of {rtype} regions by {how}:")?;
        let max = rows.iter().map(|x| x.2).max().unwrap_or(0);
        let mut t = Table::new(&[
            ("VSIZE", Align::Right),
            ("REGIONS", Align::Right),
            ("N", Align::Right),
            ("V", Align::Right),
            ("E", Align::Right),
            ("-", Align::Right),
            ("TOTAL VSIZE", Align::Right),
            ("", Align::Left),
        ]);
        for (label, p, bytes) in rows {
            let bar = if max > 0 { (40u128 * bytes as u128 / max as u128) as usize } else { 0 };
            t.row(vec![
                label,
                p.iter().sum::<u64>().to_string(),
                p[0].to_string(),
                p[1].to_string(),
                p[2].to_string(),
                p[3].to_string(),
                human(bytes),
                "*".repeat(bar),
            ]);
        }
        out.write_all(t.render().as_bytes())?;
    }
    Ok(())
}

fn warnings(r: &VmmapView, out: &mut dyn Write) -> io::Result<()> {
    let d = &r.report.doc.diagnostics;
    let mut lines: Vec<String> = Vec::new();
    if r.report.tally.overcommits > 0 {
        let s = &r.report.tally.overcommit_samples[0];
        lines.push(format!(
            "{} region(s) report dirty + swap above their virtual size (first: line {}, {} {} dirty + {} swap > {} vsize)",
            r.report.tally.overcommits,
            s.line,
            s.region_type,
            human(s.dirty),
            human(s.swap),
            human(s.vsize)
        ));
    }
    for m in &r.report.mismatches {
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
    lines.extend(d.notes.iter().cloned());
    if !lines.is_empty() {
        writeln!(out, "\nWarnings:")?;
        for l in lines {
            writeln!(out, "  {l}")?;
        }
    }
    Ok(())
}
