//! GPU memory of a macOS process by purgeable state, from saved
//! `vmmap -noCoalesce PID` output: the IOAccelerator and IOSurface regions
//! added up per (type, N/V/E/-), as the Chromium seed tool reports them.
//!
//!     cargo run -p memtally-core --example vmmap_gpu -- [FILE]
//!
//! With no argument it reads `testdata/fixtures/vmmap/04_modern_gpu_purge.txt`.

use std::path::PathBuf;

use std::io::Write;

use memtally_core::usecase::vmmap::{read, VmmapInput, VmmapOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Written with `?`, so a closed pipe (`| head`) ends the example quietly.
    let mut out = std::io::stdout().lock();
    let file = std::env::args().nth(1).map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../testdata/fixtures/vmmap/04_modern_gpu_purge.txt")
    });
    let opts = VmmapOptions::default().with_types(vec!["IOAccelerator".into(), "IOSurface".into()]);
    // Streams the file: only the sums are kept.
    let report = read(&VmmapInput::File(file), &opts, &mut ())?;
    let mib =
        |v: Option<u64>| v.map_or("-".to_string(), |b| format!("{:.2} MiB", b as f64 / 1048576.0));
    writeln!(
        out,
        "{:<26} {:<6} {:>7} {:>12} {:>12} {:>12}",
        "REGION TYPE", "PURGE", "REGIONS", "VSIZE", "RESIDENT", "DIRTY"
    )?;
    for ((region_type, purge), bucket) in &report.tally.breakdown {
        let s = &bucket.sizes;
        writeln!(
            out,
            "{:<26} {:<6} {:>7} {:>12} {:>12} {:>12}",
            region_type,
            purge.code(),
            bucket.regions,
            mib(s.size),
            mib(s.rss),
            mib(s.dirty)
        )?;
    }
    let t = &report.tally.total;
    writeln!(
        out,
        "{} of {} regions are GPU memory; {} resident, {} dirty",
        t.regions,
        report.tally.regions_read,
        mib(t.sizes.rss),
        mib(t.sizes.dirty)
    )?;
    // Apple's footprint: dirty + swapped outside volatile purgeable regions,
    // whose resident bytes are reclaimable instead (docs/vmmap-json.md).
    let f = &report.footprint;
    writeln!(
        out,
        "GPU footprint {}, reclaimable {} (volatile purgeable)",
        mib(f.footprint),
        mib(f.reclaimable)
    )?;
    if report.partial() {
        writeln!(out, "partial: some lines of the input could not be read")?;
    }
    Ok(())
}
