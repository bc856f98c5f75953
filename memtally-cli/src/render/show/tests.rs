//! The streamed printers print what the in-memory ones print.

use serde_json::Value;

use memtally_core::analyze::group::GroupSort;
use memtally_core::analyze::show::{build, finish, Fold, ShowBy, ShowReport};
use memtally_core::model::{Backing, Figure, Flow, Named, Process, Region, RegionSink, SizeSource};
use memtally_core::source::{ProcRoot, ReadPlan};

use memtally_core::analyze::categorize;
use memtally_core::model::region_json::{RegionRef, RegionWriter, ShowRegion};

use super::json::{json_value, region_json};
use super::stream::Printing;
use super::{csv, table, RegionStream};

fn slow(report: &ShowReport) -> Value {
    json_value(report).unwrap()
}

/// The streamed JSON of a one-process report, parsed back.
fn fast(report: &ShowReport) -> Value {
    let mut out = Vec::new();
    let mut stream = RegionStream::new(crate::render::Format::Json, false, Default::default());
    for p in &report.processes {
        for r in &p.regions {
            stream.region(p, r, &mut out).unwrap();
        }
    }
    stream.finish(report, &mut out).unwrap();
    serde_json::from_slice(&out).unwrap()
}

/// Streams a recorded process the way `show PID` does.
fn streamed(
    root: &ProcRoot,
    pid: u32,
    by: ShowBy,
    format: crate::render::Format,
    regions: bool,
) -> Vec<u8> {
    /// The view's fold, then the printer, as `show` chains them.
    struct Both<'a> {
        fold: &'a mut Fold,
        print: Printing<'a>,
    }
    impl RegionSink for Both<'_> {
        fn begin(&mut self, p: &Process) -> Flow {
            self.print.begin(p)
        }
        fn region(&mut self, line: usize, r: &Region) -> Flow {
            self.fold.add(r);
            self.print.region(line, r)
        }
    }
    let (mut out, mut printed) = (Vec::new(), Vec::new());
    let mut stream = RegionStream::new(format, regions, Default::default());
    let mut fold = Fold::new(by);
    let both = &mut Both { fold: &mut fold, print: stream.to(&mut printed) };
    let p = root.process(pid, ReadPlan::default(), both).unwrap();
    let report = finish(
        vec![p],
        fold,
        &[GroupSort::Figure(Figure::Dirty), GroupSort::Figure(Figure::Rss)],
        Some(5),
    );
    stream.finish(&report, &mut out).unwrap();
    printed.extend(out);
    printed
}

#[test]
fn streaming_prints_what_the_in_memory_view_prints() {
    let Some(dir) = crate::testdata::testdata("fixtures/linux") else { return };
    let mut seen = 0;
    for tree in std::fs::read_dir(dir).unwrap() {
        let root = ProcRoot::new(tree.unwrap().path().join("proc"));
        let Ok(pids) = root.pids() else { continue };
        for pid in pids {
            let mut regions = Vec::new();
            let mut p = root.process(pid, ReadPlan::default(), &mut regions).unwrap();
            (p.regions, p.streamed) = (regions, None);
            let p = [p];
            for by in [ShowBy::Category, ShowBy::Path, ShowBy::Perms] {
                let report = build(
                    p.to_vec(),
                    by,
                    &[GroupSort::Figure(Figure::Dirty), GroupSort::Figure(Figure::Rss)],
                    Some(5),
                );
                // JSON: the same document (keys in another order).
                let got: Value = serde_json::from_slice(&streamed(
                    &root,
                    pid,
                    by,
                    crate::render::Format::Json,
                    false,
                ))
                .unwrap();
                assert_eq!(got, json_value(&report).unwrap(), "pid {pid} by {}", by.name());
                // Grouped table and CSV: the same bytes.
                let mut want = Vec::new();
                table(&report, None, &mut want).unwrap();
                assert_eq!(streamed(&root, pid, by, crate::render::Format::Table, false), want);
                let mut want = Vec::new();
                csv(&report, false, &mut want).unwrap();
                assert_eq!(streamed(&root, pid, by, crate::render::Format::Csv, false), want);
                let mut want = Vec::new();
                csv(&report, true, &mut want).unwrap();
                assert_eq!(streamed(&root, pid, by, crate::render::Format::Csv, true), want);
            }
            let text = String::from_utf8(streamed(
                &root,
                pid,
                ShowBy::Category,
                crate::render::Format::Table,
                true,
            ))
            .unwrap();
            // Heading, header, a line per region, then the rounding row
            // (where the rows need one), the total and where it comes from.
            let regions = text
                .lines()
                .skip(2)
                .take_while(|l| !l.starts_with("rounding ") && !l.starts_with("total "))
                .count();
            assert_eq!(regions, p[0].regions.len(), "a line per region");
            assert!(text.lines().any(|l| l.starts_with("total ")), "a total row");
            assert!(text.lines().nth(1).unwrap().starts_with("ADDRESS"));
            seen += 1;
        }
    }
    assert!(seen >= 4, "recorded trees found: {seen}");
}

#[test]
fn streamed_json_handles_every_region_shape() {
    let mut regions = Vec::new();
    for i in 0..40u64 {
        let mut r = Region::new(if i % 2 == 0 { Backing::File } else { Backing::Anonymous });
        r.start = Some(0x1000 * i);
        r.end = if i % 7 == 0 { None } else { Some(0x1000 * (i + 1)) };
        r.perms = "rw-p".into();
        r.device = (i % 3 != 0).then(|| "08:01".into());
        r.inode = Some(i);
        r.path = match i % 5 {
            0 => None,
            1 => Some("/tmp/a \"quoted\" name\\with\tcontrol\u{1}".into()),
            2 => Some("/tmp/caf\u{e9} \u{fffd}".into()),
            _ => Some("[anon:glibc: malloc arena]".into()),
        };
        r.vm_flags = (i % 4 != 0).then(|| "rd wr mr mw me ac".into());
        r.sizes.size = Some(4096);
        if i % 3 == 1 {
            r.sizes.rss = Some(4096 * i);
            r.sizes.swap_pss = Some(0);
        }
        if i % 6 == 2 {
            r.sizes.extra.push(("new_kernel_key".into(), i));
            r.sizes.extra.push(("another".into(), 1));
            // Past the writer's fixed key room: written from its own bytes.
            r.sizes.extra.push(("a_kernel_key_longer_than_thirty_two_bytes".into(), 3));
        }
        if i % 4 == 1 {
            r.attributes.push(("thp_eligible".into(), "1".into()));
            // A kernel key whose name collides with one of ours: the
            // later value wins, as in the map.
            r.attributes.push(("path".into(), "shadow".into()));
        }
        regions.push(r);
    }
    let p = [Process {
        pid: 7,
        comm: "t\"e\\st".into(),
        cmdline: "t a b".into(),
        source: SizeSource::Smaps,
        regions,
        rollup: None,
        streamed: None,
        footprint: None,
    }];
    // Byte for byte, key order included: the fast path's object is the
    // serde one's, sorted.
    let mut writer = RegionWriter::<ShowRegion>::default();
    for r in &p[0].regions {
        let mut fast = Vec::new();
        writer.write(&RegionRef::linux(r, categorize(r).key()), &mut fast);
        let slow = serde_json::to_vec(&crate::render::json::sorted(&region_json(r)).unwrap());
        assert_eq!(String::from_utf8(fast).unwrap(), String::from_utf8(slow.unwrap()).unwrap());
    }
    let report = build(p.to_vec(), ShowBy::Path, &[GroupSort::Figure(Figure::Dirty)], None);
    assert_eq!(fast(&report), slow(&report));
    let mut none = p.clone();
    none[0].regions.clear();
    let empty = build(none.to_vec(), ShowBy::Category, &[], None);
    assert_eq!(fast(&empty), slow(&empty));
    assert_eq!(fast(&empty)["regions"], Value::Array(vec![]));
}
