//! `plot` of a large document in memory bounded by the work (issue 35,
//! item 2): a vmmap report's histogram and a snapshot's category bars are
//! counted as the regions are read, never from a list of them, so the peak
//! does not grow with the input, and every region is still counted. Saved
//! vmmap text and its JSON, a snapshot file and a one-object snapshot of
//! a vmmap report, and `show`'s JSON of a process.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::bounded_inputs::{write_regions, MemCgroup};
use crate::support::svg_data;

/// How the document plotted is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Doc {
    /// Saved vmmap text ([`write_regions`]).
    Text,
    /// The same report as `memtally vmmap --format json` prints it.
    Json,
    /// A snapshot file (JSON Lines) of a vmmap report.
    Lines,
    /// A snapshot of one object (format 1) of a vmmap report.
    Object,
    /// `show --format json` of one Linux process.
    Show,
}

/// 5,000 and 60,000 regions (0.6 and 7 MB of text; the JSON twice that):
/// the second in the peak of the first.
#[test]
fn plot_of_large_vmmap_text_counts_every_region_in_flat_memory() {
    plotted(&[5_000, 60_000], Doc::Text);
}

#[test]
fn plot_of_large_vmmap_json_counts_every_region_in_flat_memory() {
    plotted(&[5_000, 60_000], Doc::Json);
}

#[test]
fn plot_of_a_large_snapshot_file_counts_every_region_in_flat_memory() {
    plotted(&[5_000, 60_000], Doc::Lines);
}

#[test]
fn plot_of_a_large_one_object_snapshot_counts_every_region_in_flat_memory() {
    plotted(&[5_000, 60_000], Doc::Object);
}

#[test]
fn plot_of_large_show_json_sums_every_region_in_flat_memory() {
    plotted(&[5_000, 60_000], Doc::Show);
}

/// Each kind at 60,000 and 480,000 regions (up to 110 MB of JSON).
#[test]
#[ignore = "stress: generated inputs of up to 110 MB; scripts/stress/run.sh runs it"]
fn stress_plot_of_large_documents_stays_flat() {
    for doc in [Doc::Text, Doc::Json, Doc::Lines, Doc::Object, Doc::Show] {
        plotted(&[60_000, 480_000], doc);
    }
}

/// A bar drawn: its label, value and dark part.
type Bar = (&'static str, u64, u64);

/// `n` divided by `k`, rounded up: how many of `0..n` are multiples of `k`.
fn multiples(n: u64, k: u64) -> u64 {
    n.div_ceil(k)
}

/// `plot` of a document of each number of regions in `sizes`, written as
/// `doc` says: its bars' figures (every region counted), and with two
/// sizes, the second's peak within 8 MiB of the first's.
fn plotted(sizes: &[u64], doc: Doc) {
    let name = format!("plot-{doc:?}-{}", sizes[0]).to_lowercase();
    let Some(cg) = MemCgroup::new(&name, 1 << 30) else { return };
    let tmp = tempfile::tempdir().unwrap();
    let mut peaks = Vec::new();
    for &n in sizes {
        let (input, types, want) = write_doc(tmp.path(), n, doc);
        let svg = tmp.path().join(format!("{n}.svg"));
        let mut args = vec!["plot", input.to_str().unwrap(), "-o", svg.to_str().unwrap()];
        if let Some(types) = types {
            args.extend(["--types", types]);
        }
        let (code, err, peak) = cg.run(&args, &tmp.path().join(format!("{n}.out")));
        assert_eq!(code, 0, "{err}");
        let (_, data) = svg_data(&svg);
        let bars: Vec<(String, u64, u64)> = data["bars"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| {
                let label = b["label"].as_str().unwrap().to_string();
                (label, b["value"].as_u64().unwrap(), b["part"].as_u64().unwrap_or(0))
            })
            .collect();
        let got: Vec<(&str, u64, u64)> =
            bars.iter().map(|(l, v, p)| (l.as_str(), *v, *p)).collect();
        assert_eq!(got, want, "{doc:?} of {n} regions");
        let size = std::fs::metadata(&input).unwrap().len();
        eprintln!("plot of {doc:?}, {n} regions ({size} bytes): peak {peak} KiB");
        peaks.push((size, peak));
    }
    let [(small, small_peak), (big, big_peak)] = peaks[..] else { return };
    let grew_kib = big_peak.saturating_sub(small_peak);
    assert!(
        grew_kib < 8 << 10,
        "{doc:?}: from {small} to {big} bytes of input the peak grew by {grew_kib} KiB ({small_peak} to {big_peak} KiB)"
    );
}

/// Writes the document of `n` regions in `dir`: its path, the `--types`
/// plotted, and the bars it must draw (label, value, dark part).
fn write_doc(dir: &Path, n: u64, doc: Doc) -> (PathBuf, Option<&'static str>, Vec<Bar>) {
    let text = dir.join(format!("{n}.txt"));
    match doc {
        Doc::Text | Doc::Json => {
            // Every region 64K; a sixth MALLOC_SMALL, a region in eight volatile.
            write_regions(&text, n as usize);
            let input = match doc {
                Doc::Text => text,
                _ => vmmap_json(&text),
            };
            let want = vec![("≤ 64.0K", multiples(n, 6), multiples(n, 24))];
            (input, Some("MALLOC"), want)
        }
        Doc::Lines | Doc::Object => {
            let path = dir.join(format!("{n}.snap"));
            write_vmmap_snapshot(&path, n, doc == Doc::Lines);
            // Sizes of 16K to 128K in turn; the volatile ones all 16K.
            let quarter = |i: u64| n / 4 + u64::from(n % 4 > i);
            let want = vec![
                ("≤ 16.0K", quarter(0), multiples(n, 8)),
                ("≤ 32.0K", quarter(1), 0),
                ("≤ 64.0K", quarter(2), 0),
                ("≤ 128K", quarter(3), 0),
            ];
            (path, None, want)
        }
        Doc::Show => {
            let path = dir.join(format!("{n}.json"));
            write_show(&path, n);
            // Heap: every other region, 8K of PSS each (4K dirty); file code 4K, clean.
            let heap = multiples(n, 2);
            let want = vec![
                ("heap / anon rw", heap * 8192, heap * 4096),
                ("file code", (n - heap) * 4096, 0),
            ];
            (path, None, want)
        }
    }
}

/// The JSON of the vmmap report at `text`, beside it.
fn vmmap_json(text: &Path) -> PathBuf {
    let json = text.with_extension("json");
    let out = Command::new(env!("CARGO_BIN_EXE_memtally"))
        .args(["vmmap", "--format", "json", text.to_str().unwrap()])
        .stdout(std::fs::File::create(&json).unwrap())
        .status()
        .unwrap();
    assert!(out.success(), "memtally vmmap --format json {}", text.display());
    json
}

/// Writes a snapshot of a vmmap report of `n` regions, as a snapshot file
/// (`lines`, a dropped line taking back its first two regions) or as one
/// object: region `i` of 16K << (i % 4), one in eight volatile.
fn write_vmmap_snapshot(path: &Path, n: u64, lines: bool) {
    const TYPES: [&str; 3] = ["MALLOC_SMALL", "IOSurface", "Stack"];
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let head = r#""kind":"vmmap","time":null,"unix_time":null,"host":null,"kernel":null,"proc_root":null,"machine":null"#;
    let process = r#""pid":4242,"ppid":null,"user":null,"comm":"Big","command":"Big","source":"vmmap","totals":{},"categories":[]"#;
    let region = |i: u64| {
        let (size, start) = (16384u64 << (i % 4), 0x1_0000_0000 + i * 0x100000);
        let purge = if i.is_multiple_of(8) { "V" } else { "N" };
        let t = TYPES[(i % 3) as usize];
        format!(
            r#"{{"start":{start},"end":{},"perms":"rw-","path":null,"category":"{t}","region_type":"{t}","purge":"{purge}","size":{size},"rss":4096,"dirty":4096}}"#,
            start + size
        )
    };
    if lines {
        writeln!(f, r#"{{"memtally_snapshot":2,{head}}}"#).unwrap();
        for i in 0..2 {
            writeln!(f, r#"{{"region":{}}}"#, region(i + 1)).unwrap();
        }
        writeln!(f, r#"{{"dropped":{{"regions":2}}}}"#).unwrap();
        for i in 0..n {
            writeln!(f, r#"{{"region":{}}}"#, region(i)).unwrap();
        }
        writeln!(f, r#"{{"process":{{{process}}}}}"#).unwrap();
        let end =
            r#"{"end":{"processes":1,"totals":{},"categories":[],"notes":[],"shmem_swap":[null]}}"#;
        writeln!(f, "{end}").unwrap();
    } else {
        write!(f, r#"{{"memtally_snapshot":1,{head},"processes":[{{{process},"regions":["#)
            .unwrap();
        for i in 0..n {
            let comma = if i == 0 { "" } else { "," };
            write!(f, "{comma}{}", region(i)).unwrap();
        }
        writeln!(f, r#"]}}],"totals":{{}},"categories":[],"notes":[]}}"#).unwrap();
    }
    f.flush().unwrap();
}

/// Writes `show --format json` of one process of `n` regions: every other
/// one heap (8K of PSS, 4K of it dirty), the rest file code (4K, clean).
fn write_show(path: &Path, n: u64) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    write!(
        f,
        r#"{{"pid":7,"comm":"big","command":"big","source":"smaps","totals":{{}},"regions":["#
    )
    .unwrap();
    for i in 0..n {
        let comma = if i == 0 { "" } else { "," };
        let start = 0x1000_0000 + i * 0x10000;
        let (category, path, pss, dirty) = match i % 2 {
            0 => ("heap", "null".to_string(), 8192, 4096),
            _ => ("file_code", format!(r#""/usr/lib/lib{}.so""#, i % 300), 4096, 0),
        };
        write!(
            f,
            r#"{comma}{{"start":{start},"end":{},"perms":"rw-p","path":{path},"category":"{category}","size":{pss},"rss":{pss},"pss":{pss},"pss_dirty":{dirty}}}"#,
            start + pss
        )
        .unwrap();
    }
    writeln!(f, "]}}").unwrap();
    f.flush().unwrap();
}
