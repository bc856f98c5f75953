//! Properties of the parsers and analyses over generated input: no panic
//! on any bytes; totals equal the sum of their parts under every grouping;
//! a parsed mapping's figures are the ones written (so a mapping's dirty
//! is never above its resident when the kernel's never is); snapshots
//! round-trip through JSON; a snapshot compared with itself has no change.

use memtally_core::analyze::diff::{diff, DiffOptions, DiffSort};
use memtally_core::analyze::group::GroupSort;
use memtally_core::analyze::show::{build, ShowBy};
use memtally_core::analyze::snapshot::linux_snapshot;
use memtally_core::model::snapshot::Moment;
use memtally_core::model::{Figure, Named, Process, SizeSource, Sizes};
use memtally_core::source::parse::smaps::SmapsReader;
use memtally_core::source::parse::snapshot::parse;
use proptest::prelude::*;

/// One generated mapping: its header fields and kB figures with
/// dirty ≤ resident ≤ size, as the kernel guarantees.
#[derive(Debug, Clone)]
struct GenRegion {
    pages: u64,
    perms: &'static str,
    path: &'static str,
    rss: u64,
    private_dirty: u64,
    shared_dirty: u64,
    swap: u64,
}

fn gen_region() -> impl Strategy<Value = GenRegion> {
    let perms = prop::sample::select(vec!["r-xp", "r--p", "rw-p", "---p", "rwxp", "rw-s", "r--s"]);
    let path = prop::sample::select(vec![
        "",
        "[heap]",
        "[stack]",
        "[anon:glibc: malloc arena]",
        "/usr/lib/x86_64-linux-gnu/libc.so.6",
        "/tmp/a file with spaces (deleted)",
        "/memfd:wayland-shm (deleted)",
        "/dev/dri/renderD128",
        "[vdso]",
    ]);
    (1u64..64, perms, path, 0u64..=100, 0u64..=100, 0u64..=100, 0u64..8).prop_map(
        |(pages, perms, path, rss_pct, pd_pct, sd_pct, swap)| {
            let rss = pages * rss_pct / 100;
            let private_dirty = rss * pd_pct / 100;
            let shared_dirty = (rss - private_dirty) * sd_pct / 100;
            GenRegion { pages, perms, path, rss, private_dirty, shared_dirty, swap }
        },
    )
}

/// smaps text for the regions, 4 kB pages, addresses one after another.
fn smaps_text(regions: &[GenRegion]) -> String {
    let mut out = String::new();
    let mut addr = 0x5555_0000_0000u64;
    for r in regions {
        let end = addr + r.pages * 4096;
        let (dev, inode) = if r.path.starts_with('/') { ("fe:00", 77) } else { ("00:00", 0) };
        out.push_str(&format!(
            "{addr:x}-{end:x} {} 00000000 {dev} {inode}    {}\n",
            r.perms, r.path
        ));
        let kb = |pages: u64| pages * 4;
        let clean = r.rss - r.private_dirty - r.shared_dirty;
        for (k, v) in [
            ("Size", kb(r.pages)),
            ("Rss", kb(r.rss)),
            ("Pss", kb(r.rss)),
            ("Shared_Clean", 0),
            ("Shared_Dirty", kb(r.shared_dirty)),
            ("Private_Clean", kb(clean)),
            ("Private_Dirty", kb(r.private_dirty)),
            ("Swap", kb(r.swap)),
            ("SwapPss", kb(r.swap)),
            ("Locked", 0),
        ] {
            out.push_str(&format!("{k}: {v:>8} kB\n"));
        }
        out.push_str("VmFlags: rd wr mr mw me ac \n");
        addr = end + 4096;
    }
    out
}

fn process(regions: Vec<memtally_core::model::Region>) -> Process {
    Process {
        pid: 42,
        comm: "gen".into(),
        cmdline: "gen --x".into(),
        source: SizeSource::Smaps,
        regions,
        rollup: None,
        streamed: None,
        footprint: None,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn smaps_parser_never_panics_on_any_bytes(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        let mut reader = SmapsReader::new(&bytes[..]);
        while let Ok(Some(_)) = reader.next_region() {}
    }

    #[test]
    fn smaps_parser_never_panics_on_damaged_smaps(
        regions in prop::collection::vec(gen_region(), 1..20),
        cut in any::<prop::sample::Index>(),
        flip in any::<prop::sample::Index>(),
        byte in any::<u8>(),
    ) {
        let mut text = smaps_text(&regions).into_bytes();
        let i = flip.index(text.len());
        text[i] = byte;
        text.truncate(cut.index(text.len() + 1));
        let _ = SmapsReader::new(&text[..]).read_all();
    }

    #[test]
    fn parsed_figures_are_the_written_ones_and_dirty_stays_within_resident(
        regions in prop::collection::vec(gen_region(), 1..40)
    ) {
        let parsed = SmapsReader::new(smaps_text(&regions).as_bytes()).read_all().unwrap();
        prop_assert_eq!(parsed.len(), regions.len());
        for (g, r) in regions.iter().zip(&parsed) {
            prop_assert_eq!(r.sizes.size, Some(g.pages * 4096));
            prop_assert_eq!(r.sizes.rss, Some(g.rss * 4096));
            prop_assert_eq!(r.sizes.private_dirty, Some(g.private_dirty * 4096));
            prop_assert!(r.sizes.dirty().unwrap() <= r.sizes.rss.unwrap());
            prop_assert!(r.sizes.rss.unwrap() <= r.sizes.size.unwrap());
            prop_assert_eq!(r.path.as_deref().unwrap_or(""), g.path);
        }
    }

    #[test]
    fn every_grouping_adds_up_to_the_totals(regions in prop::collection::vec(gen_region(), 0..40)) {
        let parsed = SmapsReader::new(smaps_text(&regions).as_bytes()).read_all().unwrap();
        let ps = [process(parsed)];
        for by in [ShowBy::Category, ShowBy::Path, ShowBy::Perms] {
            let report = build(ps.to_vec(), by, &[GroupSort::Figure(Figure::Dirty)], None);
            let mut sum = Sizes::default();
            let mut count = 0;
            for row in &report.rows {
                sum.add(&row.sizes);
                count += row.regions;
            }
            prop_assert_eq!(count, regions.len());
            for f in [
                Figure::Size,
                Figure::Rss,
                Figure::Pss,
                Figure::PrivateDirty,
                Figure::SharedDirty,
                Figure::Swap,
                Figure::Dirty,
                Figure::Uss,
            ] {
                prop_assert_eq!(sum.figure(f), report.totals.figure(f), "{} by {}", f.name(), by.name());
            }
            let mut cats = Sizes::default();
            for (_, g) in &report.categories {
                cats.add(&g.sizes);
            }
            prop_assert_eq!(cats.figure(Figure::Rss), report.totals.figure(Figure::Rss));
        }
    }

    #[test]
    fn snapshots_round_trip_and_equal_themselves(regions in prop::collection::vec(gen_region(), 0..30)) {
        let parsed = SmapsReader::new(smaps_text(&regions).as_bytes()).read_all().unwrap();
        let snap = linux_snapshot(&[process(parsed)], Moment::default());
        let json = serde_json::to_value(&snap).unwrap();
        let back = parse(&serde_json::to_vec(&snap).unwrap()).unwrap();
        prop_assert_eq!(serde_json::to_value(&back).unwrap(), json);
        let d = diff(&snap, &back, &DiffOptions::default().with_sort(vec![DiffSort(Figure::Dirty)]).with_min_delta(0));
        prop_assert!(d.processes.is_empty() && d.categories.is_empty() && d.regions.is_empty());
        // No regions, no resident figure at all: unknown, not zero.
        let want = if regions.is_empty() { None } else { Some(0) };
        prop_assert_eq!(d.totals.delta(Figure::Rss), want);
    }

    #[test]
    fn a_diff_splits_the_total_change_over_processes(
        a in prop::collection::vec(gen_region(), 1..15),
        b in prop::collection::vec(gen_region(), 1..15),
    ) {
        let parse = |g: &[GenRegion]| SmapsReader::new(smaps_text(g).as_bytes()).read_all().unwrap();
        let mut pa = process(parse(&a));
        let mut pb = process(parse(&b));
        pb.pid = 43;
        let before = linux_snapshot(&[pa.clone()], Moment::default());
        pa.regions = parse(&b);
        let after = linux_snapshot(&[pa, pb], Moment::default());
        let d = diff(&before, &after, &DiffOptions::default().with_sort(vec![DiffSort(Figure::Rss)]).with_min_delta(0));
        // The figures a sum over processes keeps (model::summable) split
        // exactly; the full-count ones are no total of two processes.
        for f in [Figure::Pss, Figure::PrivateDirty, Figure::Uss, Figure::Size] {
            let parts: i128 = d.processes.iter().filter_map(|p| p.delta(f)).sum();
            prop_assert_eq!(Some(parts), d.totals.delta(f), "{}", f.name());
        }
        for f in [Figure::Rss, Figure::Dirty] {
            prop_assert!(d.totals.after.as_ref().is_some_and(|s| s.figure(f).is_none()), "{}", f.name());
        }
    }
}
