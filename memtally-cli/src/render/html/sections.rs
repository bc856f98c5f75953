//! The page's GPU and cgroup sections: what `memtally gpu` and `memtally
//! cgroup` show, as tables (their figures as the use cases return them).

use std::fmt::Write as _;

use memtally_core::analyze::cgroup::CgroupView;
use memtally_core::analyze::gpu::GpuReport;
use memtally_core::analyze::vmmap::VmmapReport;

use super::esc;
use super::tables::cell;
use crate::render::notes::words;
use crate::render::units::{human_opt, signed};

/// GPU memory per process and per device, as `memtally gpu` counts it
/// (shared clients and dma-bufs once).
pub fn gpu(g: &Result<GpuReport, String>) -> String {
    let mut s = String::from(r#"<section id="gpu"><h2>GPU memory</h2>"#);
    let g = match g {
        Ok(g) => g,
        Err(e) => {
            let _ = write!(
                s,
                r#"<p class="note">GPU memory could not be read: {}</p></section>"#,
                esc(e)
            );
            return s;
        }
    };
    let _ = write!(
        s,
        r#"<p>Σ of the processes shown: {} (memtally gpu gives the same, with every client and buffer).</p><table id="gpu-processes" class="sortable"><thead><tr><th class="n">PID</th><th>Name</th><th class="n">GPU</th><th class="n">Mapped</th><th class="n">Reclaimable</th><th class="n">DRM clients</th><th>Command</th></tr></thead><tbody>"#,
        human_opt(Some(g.proportional))
    );
    for p in &g.processes {
        let _ = write!(
            s,
            r#"<tr data-pid="{0}"><td class="n" data-v="{0}">{0}</td><td>{1}</td>{2}{3}{4}<td class="n" data-v="{5}">{5}</td><td><code>{6}</code></td></tr>"#,
            p.pid,
            esc(&p.comm),
            cell(Some(p.proportional)),
            cell(p.mapped),
            cell(p.reclaimable),
            p.drm_clients,
            esc(&p.command)
        );
    }
    s.push_str(r#"</tbody></table><table id="gpu-devices"><thead><tr><th>Device</th><th>Driver</th><th>Region</th><th class="n">Clients</th><th class="n">Proportional</th></tr></thead><tbody>"#);
    for t in &g.totals {
        let _ = write!(
            s,
            r#"<tr><td>{}</td><td>{}</td><td>{}</td><td class="n">{}</td>{}</tr>"#,
            esc(&t.device),
            esc(&t.driver),
            esc(&t.region),
            t.clients,
            cell(t.proportional)
        );
    }
    s.push_str("</tbody></table>");
    for n in words(&g.notes) {
        let _ = write!(s, r#"<p class="note">{}</p>"#, esc(&n));
    }
    s.push_str("</section>");
    s
}

/// Each cgroup's charge beside its processes' PSS, and the difference
/// taken apart, as `memtally cgroup` shows it.
pub fn cgroups(c: &Result<CgroupView, String>) -> String {
    let mut s = String::from(r#"<section id="cgroups"><h2>Cgroups</h2>"#);
    let v = match c {
        Ok(v) => v,
        Err(e) => {
            let _ = write!(
                s,
                r#"<p class="note">The cgroups could not be read: {}</p></section>"#,
                esc(e)
            );
            return s;
        }
    };
    match &v.layout {
        Some((version, at)) => {
            let _ = write!(s, "<p>cgroup v{version} at <code>{}</code>; {} processes read, {} from status only.</p>", esc(&at.display().to_string()), v.processes, v.restricted);
        }
        None => s.push_str("<p>No cgroup hierarchy has the memory controller.</p>"),
    }
    s.push_str(r#"<table id="cgroup-rows" class="sortable"><thead><tr><th>Cgroup</th><th class="n">Processes</th><th class="n">Σ PSS</th><th class="n">Usage</th><th class="n">Limit</th><th class="n">Working set</th><th>Usage − Σ PSS</th></tr></thead><tbody>"#);
    for r in &v.rows {
        let m = r.memory.as_ref();
        let parts: Vec<String> = r
            .parts
            .iter()
            .filter(|p| p.bytes != 0)
            .map(|p| format!("{} {}", p.name, signed(p.bytes)))
            .collect();
        let _ = write!(
            s,
            r#"<tr><td><code>{}</code></td><td class="n" data-v="{}">{}</td>{}{}{}{}<td>{}</td></tr>"#,
            esc(&r.path),
            r.processes,
            r.processes,
            cell(r.sizes.pss),
            cell(m.and_then(|m| m.usage)),
            cell(m.and_then(|m| m.limit)),
            cell(r.working_set),
            esc(&parts.join(", "))
        );
    }
    s.push_str("</tbody></table></section>");
    s
}

/// A vmmap report's own view: its footprint, and every region type by
/// purgeable state (the seed's GPU view: IOSurface, IOAccelerator and
/// the other GPU types by N/V/E), as `memtally vmmap` shows them.
pub fn vmmap(v: &VmmapReport) -> String {
    let f = &v.tally.footprint_total;
    let mut s = format!(
        r#"<section id="vmmap"><h2>vmmap: footprint and purgeable state</h2><table id="vmmap-footprint"><tbody><tr><td>Footprint (dirty + swapped, not volatile or empty)</td>{}</tr><tr><td>Reclaimable (resident, volatile or empty)</td>{}</tr><tr><td>Volatile virtual</td>{}</tr><tr><td>Empty virtual</td>{}</tr><tr><td>Non-volatile virtual</td>{}</tr></tbody></table><p>Footprint from the {}.</p>"#,
        cell(f.footprint),
        cell(f.reclaimable),
        cell(Some(f.volatile_vsize)),
        cell(Some(f.empty_vsize)),
        cell(Some(f.nonvol_vsize)),
        v.footprint_from.name()
    );
    // The header's figure beside memtally's own, as `memtally vmmap`
    // prints them.
    if let Some(p) = v.doc.header.physical_footprint {
        let _ = write!(
            s,
            r#"<p id="vmmap-physical">vmmap's physical footprint (whole process): <span data-v="{p}">{}</span>.</p>"#,
            human_opt(Some(p))
        );
    }
    if let Some(c) = &v.footprint_check {
        let _ = write!(
            s,
            r#"<p id="vmmap-check" data-agrees="{}">{}.</p>"#,
            c.agrees,
            esc(&crate::render::vmmap::footprint_check_line(c))
        );
    }
    s.push_str(r#"<table id="vmmap-purge" class="sortable"><thead><tr><th>Region type</th><th>Purge</th><th class="n">Regions</th><th class="n">Virtual</th><th class="n">Resident</th><th class="n">Dirty</th><th class="n">Swap</th></tr></thead><tbody>"#);
    for ((ty, purge), b) in &v.tally.breakdown {
        let _ = write!(
            s,
            r#"<tr><td>{}</td><td>{}</td><td class="n" data-v="{}">{}</td>{}{}{}{}</tr>"#,
            esc(ty),
            purge.code(),
            b.regions,
            b.regions,
            cell(b.sizes.size),
            cell(b.sizes.rss),
            cell(b.sizes.dirty),
            cell(b.sizes.swap)
        );
    }
    s.push_str("</tbody></table></section>");
    s
}
