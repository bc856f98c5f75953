//! `memtally diff A B`: what grew and what shrank between two snapshots.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use memtally_core::analyze::diff::{DiffOptions, DiffSort};
use memtally_core::usecase::diff::diff_files;
use memtally_core::Result;

use crate::cli::choice::choice;
use crate::render::diff::DiffView;
use crate::render::{print, Format, Screen};

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The earlier snapshot (`memtally snapshot`, `show --format json`, or vmmap output).
    pub before: PathBuf,
    /// The later one.
    pub after: PathBuf,

    /// Sort by the growth of these figures (comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "FIELD")]
    #[arg(default_value = "dirty,pss", value_parser = choice::<DiffSort>())]
    pub sort: Vec<DiffSort>,

    /// Hide rows whose largest change is smaller than this (bytes, or with K, M, G: `1M`).
    #[arg(long, value_name = "SIZE", default_value = "1", value_parser = parse_size)]
    pub min_delta: u64,

    /// Rows per section in the table.
    #[arg(long, value_name = "N", default_value_t = 15)]
    pub top: usize,

    /// Regions that appeared or vanished listed at most, the largest (in every
    /// format); the rest are counted and summed in one row.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub regions: usize,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// `4096`, `512K`, `1.5M`, `2G`, `1T` (binary units) in bytes.
pub fn parse_size(s: &str) -> std::result::Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let mult: u64 = match c.to_ascii_uppercase() {
                'B' => 1,
                'K' => 1 << 10,
                'M' => 1 << 20,
                'G' => 1 << 30,
                'T' => 1 << 40,
                _ => return Err(format!("{s:?}: unknown unit {c:?} (use B, K, M, G or T)")),
            };
            (&t[..i], mult)
        }
        _ => (t, 1),
    };
    let v: f64 =
        num.trim().parse().map_err(|_| format!("{s:?}: not a size (e.g. 4096, 512K, 1.5M)"))?;
    if !(v >= 0.0 && v.is_finite()) {
        return Err(format!("{s:?}: not a size"));
    }
    Ok((v * mult as f64) as u64)
}

pub fn run(args: &DiffArgs, screen: Screen, out: &mut dyn Write) -> Result<()> {
    let opts = DiffOptions::default()
        .with_sort(args.sort.clone())
        .with_min_delta(args.min_delta)
        .with_regions(args.regions);
    let diff = diff_files(&args.before, &args.after, &opts)?;
    print(&DiffView { diff: &diff, limit: args.top }, args.format, screen, out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(super::parse_size("4096"), Ok(4096));
        assert_eq!(super::parse_size("512K"), Ok(512 << 10));
        assert_eq!(super::parse_size("1.5M"), Ok(3 << 19));
        assert_eq!(super::parse_size("2g"), Ok(2 << 30));
        assert!(super::parse_size("12Q").is_err());
        assert!(super::parse_size("lots").is_err());
    }
}
