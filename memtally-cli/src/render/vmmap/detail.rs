//! The parts of the `memtally vmmap` table printed on request:
//! histograms by virtual size (`--histograms`, `--pow2`) and the region
//! list (`--regions`).

use super::VmmapView;
use crate::render::blocks::{section, Block};
use crate::render::table::{Align, Table};
use crate::render::units::{human, human_opt};
use crate::render::width;

/// The histograms `--histograms` asks for: every selected type, or the
/// types containing one of the given names; the bars fill what `width`
/// leaves beside the figures.
pub(super) fn histograms(r: &VmmapView, width: Option<usize>, out: &mut Vec<Block>) {
    let Some(want) = &r.histograms else { return };
    let wanted = |t: &str| want.is_empty() || want.iter().any(|w| t.contains(w.as_str()));
    for rtype in r.report.tally.exact.keys().filter(|t| wanted(t)) {
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
        section(out, format!("Histogram of {rtype} regions by {how}:"));
        let max = rows.iter().map(|x| x.2).max().unwrap_or(0);
        const HEADERS: [(&str, Align); 8] = [
            ("VSIZE", Align::Right),
            ("REGIONS", Align::Right),
            ("N", Align::Right),
            ("V", Align::Right),
            ("E", Align::Right),
            ("-", Align::Right),
            ("TOTAL VSIZE", Align::Right),
            ("", Align::Left),
        ];
        let cells: Vec<Vec<String>> = rows
            .iter()
            .map(|(label, p, bytes)| {
                let mut c = vec![label.clone(), p.iter().sum::<u64>().to_string()];
                c.extend(p.iter().map(u64::to_string));
                c.push(human(*bytes));
                c
            })
            .collect();
        let bar_max = bar_room(&HEADERS, &cells, width);
        let mut t = Table::new(&HEADERS);
        for (mut c, (_, _, bytes)) in cells.into_iter().zip(&rows) {
            let bar =
                if max > 0 { (bar_max as u128 * *bytes as u128 / max as u128) as usize } else { 0 };
            c.push("*".repeat(bar));
            t.row(c);
        }
        out.push(Block::Table(t));
    }
}

/// The longest bar: 40 stars, or what is left of the output's width after
/// the figures (at least 10: narrower, the table cuts the bars).
fn bar_room(headers: &[(&str, Align)], cells: &[Vec<String>], fit: Option<usize>) -> usize {
    let Some(fit) = fit else { return 40 };
    let figures: usize = (0..headers.len() - 1)
        .map(|i| {
            let cell = |c: &Vec<String>| width::columns(&c[i]);
            cells.iter().map(cell).max().unwrap_or(0).max(width::columns(headers[i].0)) + 2
        })
        .sum();
    fit.saturating_sub(figures).clamp(10, 40)
}

/// `--regions`: every selected region.
pub(super) fn region_list(r: &VmmapView, out: &mut Vec<Block>) {
    if r.list_regions && !r.report.regions.is_empty() {
        section(out, "Regions:".into());
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
        // Addresses, protections, share mode and purge code stay whole:
        // the type and the detail narrow.
        for column in [2, 3, 8, 9, 10] {
            t.keep_whole(column);
        }
        out.push(Block::Table(t));
    }
}
