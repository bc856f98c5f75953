//! One process's memory by category, read from a recorded `/proc` tree
//! (or the live `/proc`): where its bytes are, dirty first.
//!
//!     cargo run -p memtally-core --example categories -- [PROC_ROOT PID]
//!
//! With no arguments it reads the python3 recording in
//! `testdata/fixtures/linux/python3-mmap/proc` (process 11364); give
//! `/proc $$` for this shell.

use std::io::Write;

use memtally_core::analyze::Category;
use memtally_core::source::ProcRoot;
use memtally_core::usecase::show::{show, ShowOptions, ShowView};
use memtally_core::usecase::Silent;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Written with `?`, so a closed pipe (`| head`) ends the example quietly.
    let mut out = std::io::stdout().lock();
    let mut args = std::env::args().skip(1);
    let (root, pid) = match (args.next(), args.next()) {
        (Some(root), Some(pid)) => (ProcRoot::new(root), pid.parse()?),
        _ => {
            let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
            (ProcRoot::new(repo.join("testdata/fixtures/linux/python3-mmap/proc")), 11364)
        }
    };
    // Regions are summed as they are read and not kept: any smaps size
    // runs in the same memory.
    let view = ShowView::Process(pid);
    let shown = show(&root, &view, &ShowOptions::default(), &mut (), &Silent)?;
    let report = shown.into_regions().ok_or("a process's view is its regions")?;
    let kib = |v: Option<u64>| v.map_or("-".to_string(), |b| format!("{} KiB", b / 1024));
    writeln!(out, "pid {pid}: {}", report.processes[0].command().replace('\n', "\\n"))?;
    writeln!(
        out,
        "{:<22} {:>8} {:>12} {:>12} {:>12}",
        "CATEGORY", "REGIONS", "PRIV DIRTY", "PSS", "RSS"
    )?;
    for (category, group) in &report.categories {
        writeln!(
            out,
            "{:<22} {:>8} {:>12} {:>12} {:>12}",
            category.label(),
            group.regions,
            kib(group.sizes.private_dirty),
            kib(group.sizes.pss),
            kib(group.sizes.rss),
        )?;
    }
    let t = &report.totals;
    writeln!(
        out,
        "{:<22} {:>8} {:>12} {:>12} {:>12}",
        "total",
        report.region_count,
        kib(t.private_dirty),
        kib(t.pss),
        kib(t.rss)
    )?;
    let heap = report.categories.iter().find(|(c, _)| *c == Category::Heap);
    if let Some((_, g)) = heap {
        writeln!(
            out,
            "heap: {} of private dirty memory in {} regions",
            kib(g.sizes.private_dirty),
            g.regions
        )?;
    }
    Ok(())
}
