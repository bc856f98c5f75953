//! The seed tool's three reports, byte for byte, from memtally's figures.
//!
//! `--seed-view` is a compatibility format: it is never fitted to the
//! output's width (no `COLUMNS`, no terminal width, no `…`), so its bytes
//! stay the seed's whatever the terminal; the CLI writes it straight to
//! standard output, not through `render::print`'s fitting.

use std::io::{self, Write};

use memtally_core::analyze::vmmap::SeedView;
use memtally_core::model::Purge;

fn mb(n: u64) -> String {
    format!("{:7.2} MB", n as f64 / (1024.0 * 1024.0))
}

/// The seed's output, byte for byte, from memtally's figures.
pub fn seed(view: &SeedView, out: &mut dyn Write) -> io::Result<()> {
    for m in &view.mismatches {
        writeln!(out, "memtally: seed parity mismatch at {m}")?;
    }
    if !view.summaries.is_empty() {
        writeln!(out, "=== vmmap Summary Table ===")?;
        writeln!(
            out,
            "{:<26} | {:>5} | {:>10} | {:>10} | {:>10} | {:>10} | {:>10} | {:>10} | {:>10}",
            "REGION TYPE",
            "COUNT",
            "VIRTUAL",
            "RESIDENT",
            "DIRTY",
            "SWAPPED",
            "VOLATILE",
            "NONVOL",
            "EMPTY"
        )?;
        writeln!(out, "{}", "-".repeat(123))?;
        for s in &view.summaries {
            let f = s.figures;
            writeln!(
                out,
                "{:<26} | {:5} | {} | {} | {} | {} | {} | {} | {}",
                s.region_type,
                s.count,
                mb(f[0]),
                mb(f[1]),
                mb(f[2]),
                mb(f[3]),
                mb(f[4]),
                mb(f[5]),
                mb(f[6])
            )?;
        }
        writeln!(out)?;
    }
    if view.entries == 0 {
        return Ok(());
    }
    writeln!(out, "=== Per-Region Purgeability Breakdown ===")?;
    writeln!(
        out,
        "{:<26} | {:<22} | {:>5} | {:>10} | {:>10} | {:>10}",
        "REGION TYPE", "PURGE STATE", "COUNT", "VSIZE", "RSDNT+SWAP", "DIRTY"
    )?;
    writeln!(out, "{}", "-".repeat(98))?;
    let (mut rs, mut dirty, mut v, mut e, mut n) = (0u64, 0u64, 0u64, 0u64, 0u64);
    for ((rtype, purge), b) in &view.breakdown {
        writeln!(
            out,
            "{:<26} | {:<22} | {:5} | {} | {} | {}",
            rtype,
            purge.label(),
            b[0],
            mb(b[1]),
            mb(b[2]),
            mb(b[3])
        )?;
        rs += b[2];
        dirty += b[3];
        match purge {
            Purge::Volatile => v += b[1],
            Purge::Empty => e += b[1],
            Purge::NonVolatile => n += b[1],
            Purge::Unmarked => {}
        }
    }
    writeln!(out, "{}", "-".repeat(98))?;
    writeln!(
        out,
        "Total entries: {} | Resident+Swap: {} | Dirty: {} | Volatile VSIZE (V): {} | Empty/Purged VSIZE (E): {} | Non-Volatile VSIZE (N): {}",
        view.entries,
        mb(rs).trim(),
        mb(dirty).trim(),
        mb(v).trim(),
        mb(e).trim(),
        mb(n).trim()
    )?;
    for (rtype, sizes) in &view.hist {
        writeln!(out, "\n=== Histogram of {rtype} Regions by Virtual Size Bucket ===")?;
        let max = sizes.iter().map(|(s, c)| s * c.iter().sum::<u64>()).max().unwrap_or(0);
        for (size, p) in sizes {
            let count: u64 = p.iter().sum();
            let bucket_mem = size * count;
            let bar_len = if max > 0 {
                ((40u128 * bucket_mem as u128) as f64 / max as f64) as usize
            } else {
                0
            };
            writeln!(
                out,
                "{:8.1} KB | {:4} entries (N:{:4} V:{:4} E:{:4} -:{:4}) | {:7.2} MB | {}",
                *size as f64 / 1024.0,
                count,
                p[0],
                p[1],
                p[2],
                p[3],
                bucket_mem as f64 / (1024.0 * 1024.0),
                "*".repeat(bar_len)
            )?;
        }
    }
    Ok(())
}
