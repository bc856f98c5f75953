//! Prints the cgroup view: each cgroup's charge, limits and memory.stat
//! beside its processes' PSS, and the difference named by its parts.

use std::io::Write;
use std::path::Path;

use serde::Serialize;

use memtally_core::analyze::cgroup::CgroupRow;
use memtally_core::analyze::cgroup::CgroupView;

use crate::render::blocks::{write_text, Block};
use crate::render::json;
use crate::render::table::{csv_text, Align, Cut, Table};
use crate::render::units::{human, human_opt};
use crate::render::{Printer, Screen};

/// The JSON document (docs/json.md, "cgroup").
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(crate) struct CgroupJson<'a> {
    layout: Option<LayoutJson<'a>>,
    processes: usize,
    restricted: usize,
    rows: Vec<CgroupRowJson<'a>>,
}

/// Which cgroup hierarchy was read: `v1` or `v2`, and where.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct LayoutJson<'a> {
    version: u8,
    dir: &'a Path,
}

/// A row: the library's own (path, processes, memory, working set,
/// parts) and its processes' PSS figures.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct CgroupRowJson<'a> {
    #[serde(flatten)]
    row: &'a CgroupRow,
    pss: Option<u64>,
    uss: Option<u64>,
    pss_anon: Option<u64>,
    pss_file: Option<u64>,
    pss_shmem: Option<u64>,
}

impl CgroupRowJson<'_> {
    fn of(r: &CgroupRow) -> CgroupRowJson<'_> {
        CgroupRowJson {
            row: r,
            pss: r.sizes.pss,
            uss: r.sizes.uss(),
            pss_anon: r.sizes.pss_anon,
            pss_file: r.sizes.pss_file,
            pss_shmem: r.sizes.pss_shmem,
        }
    }
}

/// Declares the memory figures of a cgroup row once: the variant, its
/// CSV name, and how it is read from the row `r` and its memory `m`.
macro_rules! cgroup_figures {
    (($m:ident, $r:ident) $( $variant:ident = $name:literal, $read:expr; )*) => {
        /// A memory figure of a cgroup row.
        #[derive(Clone, Copy)]
        enum CgroupFigure {
            $( $variant, )*
        }

        impl CgroupFigure {
            /// Every figure, in CSV order.
            const ALL: &'static [CgroupFigure] = &[ $( CgroupFigure::$variant, )* ];

            fn name(self) -> &'static str {
                match self {
                    $( CgroupFigure::$variant => $name, )*
                }
            }

            /// The figure of a row; `None` where its memory files were not read.
            fn of(self, $r: &CgroupRow) -> Option<u64> {
                let $m = $r.memory.as_ref()?;
                match self {
                    $( CgroupFigure::$variant => $read, )*
                }
            }
        }
    };
}

cgroup_figures! {
    (m, r)
    Usage = "usage", m.usage;
    Limit = "limit", m.limit;
    High = "high", m.high;
    Peak = "peak", m.peak;
    WorkingSet = "working_set", r.working_set;
    Swap = "swap", m.swap;
    Anon = "anon", m.anon;
    File = "file", m.file;
    ActiveFile = "active_file", m.active_file;
    InactiveFile = "inactive_file", m.inactive_file;
    Shmem = "shmem", m.shmem;
    Kernel = "kernel", m.kernel;
    Sock = "sock", m.sock;
}

/// The table's memory columns.
const COLUMNS: &[(&str, CgroupFigure)] = &[
    ("USAGE", CgroupFigure::Usage),
    ("LIMIT", CgroupFigure::Limit),
    ("HIGH", CgroupFigure::High),
    ("PEAK", CgroupFigure::Peak),
    ("WSET", CgroupFigure::WorkingSet),
    ("ANON", CgroupFigure::Anon),
    ("FILE", CgroupFigure::File),
    ("SHMEM", CgroupFigure::Shmem),
    ("KERNEL", CgroupFigure::Kernel),
    ("SWAP", CgroupFigure::Swap),
];

/// `PATH: usage U = PSS P + part + part − beyond_usage X`, then
/// what stands beside the usage (the v1 root's kernel memory) in
/// parentheses: every figure printed is 0 or more, a part below 0 is
/// subtracted by its name.
fn sum_line(r: &CgroupRow) -> String {
    let usage = CgroupFigure::Usage.of(r).unwrap_or(0);
    if r.pss_unknown > 0 {
        return format!(
            "{}: usage {}, PSS unknown: {} of its {} could not be read (smaps takes the process's own user or root), so the usage is not split",
            crate::render::table::escape_controls(r.path.clone()),
            human(usage),
            r.pss_unknown,
            crate::render::units::plural(r.processes, "process", "processes"),
        );
    }
    let mut line = format!(
        "{}: usage {} = PSS {}",
        crate::render::table::escape_controls(r.path.clone()),
        human(usage),
        human(r.sizes.pss.unwrap_or(0)),
    );
    for p in r.parts.iter().filter(|p| p.bytes != 0) {
        let sign = if p.bytes < 0 { '-' } else { '+' };
        line.push_str(&format!(" {sign} {} {}", p.name, human(p.bytes.unsigned_abs())));
    }
    let beside: Vec<String> =
        r.beside.iter().map(|p| format!("{} {}", p.name, human(p.bytes.unsigned_abs()))).collect();
    if !beside.is_empty() {
        line.push_str(&format!(
            " (not in this usage, which is rss + cache on the v1 root: {})",
            beside.join(", ")
        ));
    }
    line
}

/// The table view: which hierarchy, a row per cgroup, each difference
/// between usage and PSS named, and what USAGE and WSET mean.
pub(crate) fn blocks(view: &CgroupView) -> Vec<Block> {
    let heading = match &view.layout {
        Some((v, dir)) => format!("cgroups (v{v} memory controller at {})", dir.display()),
        None => "cgroups (no hierarchy with the memory controller: processes' PSS only)".into(),
    };
    if view.rows.is_empty() {
        // Rather than a header over nothing: what there was to read.
        let why = match view.layout {
            Some(_) => "no cgroup to show: no process read names one in its cgroup file",
            None => "no cgroup to show: no process read has a cgroup file (PID/cgroup) and no hierarchy has the memory controller",
        };
        return vec![Block::Heading(heading), Block::Line(why.into())];
    }
    let mut headers = vec![("CGROUP", Align::Left), ("PROCS", Align::Right), ("PSS", Align::Right)];
    headers.extend(COLUMNS.iter().map(|(h, _)| (*h, Align::Right)));
    let mut t = Table::new(&headers);
    // Cut from the left: the leaf tells the rows apart.
    t.cut_as(0, Cut::Leaf);
    for r in &view.rows {
        let mut cells = vec![r.path.clone(), r.processes.to_string(), human_opt(r.sizes.pss)];
        cells.extend(COLUMNS.iter().map(|(_, f)| human_opt(f.of(r))));
        t.row(cells);
    }
    let mut blocks = vec![Block::Heading(heading), Block::Table(t), Block::Blank];
    for r in view.rows.iter().filter(|r| !r.parts.is_empty() || r.pss_unknown > 0) {
        blocks.push(Block::Line(sum_line(r)));
    }
    blocks.push(Block::Note("USAGE is what the kernel charges the cgroup (memory.current, v1 memory.usage_in_bytes) and what LIMIT and the OOM killer act on; PSS counts only the processes' mapped pages. WSET = USAGE - inactive file pages, the working set kubelet and cAdvisor report and evict by. Rows include the cgroups below them.".into()));
    blocks
}

impl Printer for CgroupView {
    fn table(&self, out: &mut dyn Write, screen: Screen) -> std::io::Result<()> {
        let width = screen.width;
        write_text(blocks(self), width, out)
    }

    fn json(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let doc = CgroupJson {
            layout: self
                .layout
                .as_ref()
                .map(|(version, dir)| LayoutJson { version: *version, dir }),
            processes: self.processes,
            restricted: self.restricted,
            rows: self.rows.iter().map(CgroupRowJson::of).collect(),
        };
        json::line(out, &doc)
    }

    fn csv(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let mut w = csv::Writer::from_writer(out);
        let mut header = vec!["cgroup", "processes", "pss"];
        header.extend(CgroupFigure::ALL.iter().map(|f| f.name()));
        w.write_record(&header)?;
        let cell = |v: Option<u64>| v.map_or(String::new(), |v| v.to_string());
        for r in &self.rows {
            let mut rec =
                vec![csv_text(r.path.clone()), r.processes.to_string(), cell(r.sizes.pss)];
            rec.extend(CgroupFigure::ALL.iter().map(|f| cell(f.of(r))));
            w.write_record(&rec)?;
        }
        w.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memtally_core::model::{CgroupMemory, Sizes};

    /// Issue 37, item 15: where processes' PSS could not be read (no
    /// privileges), the line says PSS is unknown and why, never `PSS 0`
    /// with the processes' own pages called `anon_not_in_pss`.
    #[test]
    fn an_unknown_pss_is_said_not_printed_as_zero() {
        let row = CgroupRow {
            path: "/user.slice".into(),
            processes: 3,
            pss_unknown: 2,
            sizes: Sizes::default(),
            memory: Some(CgroupMemory { usage: Some(8 << 20), ..Default::default() }),
            working_set: None,
            parts: Vec::new(),
            beside: Vec::new(),
        };
        let line = sum_line(&row);
        assert_eq!(
            line,
            "/user.slice: usage 8.0M, PSS unknown: 2 of its 3 processes could not be read (smaps takes the process's own user or root), so the usage is not split"
        );
        assert!(!line.contains("PSS 0") && !line.contains("anon_not_in_pss"));
    }
}
