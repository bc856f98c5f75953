//! The structure of `memtally plot`'s SVGs: bars with gaps between them,
//! no empty slot above the first bar, a legend (not a note in the title),
//! whole ticks for counts ending at the data's round ceiling, and series
//! labels that tell processes of one program apart.

use std::path::Path;

use roxmltree::{Document, Node};

use crate::support::{repo, run, svg_data};

/// The light (whole bar) and dark (part) fills.
const LIGHT: &str = "#9ECAE1";
const DARK: &str = "#2171B5";

fn attr(n: Node, name: &str) -> f64 {
    n.attribute(name).and_then(|v| v.parse().ok()).unwrap_or(f64::NAN)
}

struct Chart {
    /// (y, height) of each whole bar, top to bottom.
    bars: Vec<(f64, f64)>,
    /// The plotting area's top and bottom (the vertical mesh lines' ends).
    area: (f64, f64),
    /// The value axis' tick labels, left to right.
    ticks: Vec<String>,
    /// The tick labels left of the area (a line chart's values), bottom up.
    left_ticks: Vec<String>,
    /// Every text drawn.
    texts: Vec<String>,
    /// Rectangles of the dark fill away from the bars (legend swatches).
    dark_swatches: usize,
}

fn chart(svg: &Path) -> Chart {
    let text = std::fs::read_to_string(svg).unwrap();
    let doc = Document::parse(&text).unwrap();
    let rects: Vec<Node> = doc.descendants().filter(|n| n.has_tag_name("rect")).collect();
    let light: Vec<Node> =
        rects.iter().copied().filter(|r| r.attribute("fill") == Some(LIGHT)).collect();
    let axis_x = light.iter().map(|r| attr(*r, "x")).fold(f64::INFINITY, f64::min);
    let mut bars: Vec<(f64, f64)> = light
        .iter()
        .filter(|r| attr(**r, "x") == axis_x)
        .map(|r| (attr(*r, "y"), attr(*r, "height")))
        .collect();
    bars.sort_by(|a, b| a.0.total_cmp(&b.0));
    let dark_swatches = rects
        .iter()
        .filter(|r| r.attribute("fill") == Some(DARK) && attr(**r, "x") != axis_x)
        .count();
    // Vertical mesh lines span the plotting area.
    let verticals: Vec<Node> = doc
        .descendants()
        .filter(|n| n.has_tag_name("line") && attr(*n, "x1") == attr(*n, "x2"))
        .collect();
    let top =
        verticals.iter().map(|l| attr(*l, "y1").min(attr(*l, "y2"))).fold(f64::INFINITY, f64::min);
    let bottom = verticals.iter().map(|l| attr(*l, "y1").max(attr(*l, "y2"))).fold(0.0, f64::max);
    let texts: Vec<(Node, String)> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| (n, n.text().unwrap_or("").trim().to_string()))
        .collect();
    let mut ticks: Vec<(f64, String)> = texts
        .iter()
        .filter(|(n, t)| attr(*n, "y") > bottom && t.parse::<f64>().is_ok())
        .map(|(n, t)| (attr(*n, "x"), t.clone()))
        .collect();
    ticks.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut left: Vec<(f64, String)> = texts
        .iter()
        .filter(|(n, t)| n.attribute("text-anchor") == Some("end") && t.parse::<f64>().is_ok())
        .map(|(n, t)| (-attr(*n, "y"), t.clone()))
        .collect();
    left.sort_by(|a, b| a.0.total_cmp(&b.0));
    Chart {
        left_ticks: left.into_iter().map(|t| t.1).collect(),
        bars,
        area: (top, bottom),
        ticks: ticks.into_iter().map(|t| t.1).collect(),
        texts: texts.into_iter().map(|t| t.1).collect(),
        dark_swatches,
    }
}

/// Bars apart, the first bar at the top of the area and the last at its
/// bottom (no empty slot), a legend naming both fills.
fn check_bars(c: &Chart, n: usize, legend: [&str; 2]) {
    assert_eq!(c.bars.len(), n, "one whole bar per bar");
    for w in c.bars.windows(2) {
        let gap = w[1].0 - (w[0].0 + w[0].1);
        assert!(gap >= 3.0, "bars {:?} and {:?} touch (gap {gap})", w[0], w[1]);
    }
    let slot = (c.area.1 - c.area.0) / n as f64;
    let above = c.bars[0].0 - c.area.0;
    let below = c.area.1 - (c.bars[n - 1].0 + c.bars[n - 1].1);
    assert!(above < slot / 2.0, "an empty slot above the first bar: {above} px, slot {slot}");
    assert!(below < slot / 2.0, "empty space under the last bar: {below} px, slot {slot}");
    for l in legend {
        assert!(c.texts.iter().any(|t| t == l), "legend entry {l:?} in {:?}", c.texts);
    }
    assert!(c.dark_swatches >= 1, "a legend swatch of the dark fill");
    assert!(!c.texts.iter().any(|t| t.contains("dark =")), "the title explains no colours");
}

fn tick_values(c: &Chart) -> Vec<f64> {
    c.ticks.iter().map(|t| t.parse().unwrap()).collect()
}

#[test]
fn histogram_bars_have_gaps_a_legend_and_whole_ticks_up_to_the_ceiling() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("h.svg");
    let input = repo().join("testdata/fixtures/vmmap/04_modern_gpu_purge.txt");
    let out = run(&["plot", input.to_str().unwrap(), "-o", svg.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (_, data) = svg_data(&svg);
    let counts: Vec<u64> =
        data["bars"].as_array().unwrap().iter().map(|b| b["value"].as_u64().unwrap()).collect();
    let c = chart(&svg);
    check_bars(&c, counts.len(), ["regions", "purgeable: volatile or empty"]);
    // Counts: every tick a whole number, written without decimals.
    assert!(c.ticks.iter().all(|t| t.parse::<u64>().is_ok()), "ticks {:?}", c.ticks);
    let ticks = tick_values(&c);
    let max = *counts.iter().max().unwrap() as f64;
    let step = ticks[1] - ticks[0];
    let top = *ticks.last().unwrap();
    // A round ceiling with 5% headroom above the largest bar, no more.
    let room = max * 1.05;
    assert!(
        top >= room && top - step < room,
        "top tick {top} (step {step}) for a largest bar of {max}"
    );
}

#[test]
fn category_bars_have_gaps_a_legend_and_end_at_a_round_ceiling() {
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("s.json");
    let root = repo().join("testdata/fixtures/linux/python3-mmap/proc");
    let out = run(&[
        "--proc-root",
        root.to_str().unwrap(),
        "snapshot",
        "--pid",
        "11364",
        "-o",
        snap.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let svg = dir.path().join("s.svg");
    assert!(run(&["plot", snap.to_str().unwrap(), "-o", svg.to_str().unwrap()]).status.success());
    let (_, data) = svg_data(&svg);
    let values: Vec<u64> =
        data["bars"].as_array().unwrap().iter().map(|b| b["value"].as_u64().unwrap()).collect();
    let c = chart(&svg);
    check_bars(&c, values.len(), ["pss", "dirty (Pss_Dirty)"]);
    let ticks = tick_values(&c);
    let max = *values.iter().max().unwrap() as f64 / (1024.0 * 1024.0);
    let step = ticks[1] - ticks[0];
    let top = *ticks.last().unwrap();
    let room = max * 1.05;
    assert!(top >= room && top - step < room, "top tick {top} MiB (step {step}) for {max} MiB");
    // The largest bar fills its share of the axis: nothing past the ceiling.
    assert_eq!(c.ticks.last().map(String::as_str), Some(format!("{top}").as_str()));
}

/// Two processes of one program, told apart only by an option deep in
/// their command lines: the labels show the pid, the program and that
/// option, within 48 columns.
#[test]
fn series_labels_tell_processes_of_one_program_apart() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("s.csv");
    let prefix = "/opt/vendor/platform/releases/2026.11/bin/worker-daemon --config=/etc/vendor/platform/common.conf";
    let mut text =
        "elapsed_s,scope,key,label,rss,pss,uss,dirty,private_dirty,shared_dirty,swap_pss\n"
            .to_string();
    for t in 0..4 {
        let grow = t * 1048576;
        text.push_str(&format!("{t}.000,total,,,{0},{0},{0},0,0,0,0\n", 30_000_000 + 2 * grow));
        text.push_str(&format!(
            "{t}.000,process,101,{prefix} --role=indexer,{0},{0},{0},0,0,0,0\n",
            10_000_000 + grow
        ));
        text.push_str(&format!(
            "{t}.000,process,102,{prefix} --role=scheduler,{0},{0},{0},0,0,0,0\n",
            20_000_000 + grow
        ));
    }
    std::fs::write(&csv, text).unwrap();
    let svg = dir.path().join("s.svg");
    let out = run(&["plot", csv.to_str().unwrap(), "-o", svg.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (svg_text, data) = svg_data(&svg);
    let labels: Vec<&str> =
        data["lines"].as_array().unwrap().iter().map(|l| l["label"].as_str().unwrap()).collect();
    assert_eq!(labels[0], "total pss");
    let find = |pid: &str| {
        *labels.iter().find(|l| l.starts_with(pid)).unwrap_or_else(|| panic!("{labels:?}"))
    };
    assert_eq!(find("101 "), "101 worker-daemon --role=indexer --config=/etc/…");
    assert!(find("102 ").starts_with("102 worker-daemon --role=scheduler"), "{labels:?}");
    for l in &labels {
        assert!(l.chars().count() <= 48, "{l:?}");
        assert!(svg_text.contains(l), "the label is drawn: {l:?}");
    }
    // MiB ticks end at the round ceiling above the total's 34.6 MiB.
    let c = chart(&svg);
    assert_eq!(c.left_ticks.last().map(String::as_str), Some("40"), "{:?}", c.left_ticks);
}

/// A document given through a pipe draws the chart its file draws: `plot`
/// reads the head first (a watch series?), so a pipe is copied to a file
/// first. Before, the head was gone and the snapshot refused.
#[test]
fn a_piped_snapshot_draws_the_chart_its_file_draws() {
    let tmp = tempfile::tempdir().unwrap();
    let input = repo().join("testdata/snapshots/format1/a.json");
    let (file, piped) = (tmp.path().join("file.svg"), tmp.path().join("pipe.svg"));
    let out = run(&["plot", input.to_str().unwrap(), "-o", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_memtally"))
        .args(["plot", "/dev/stdin", "-o", piped.to_str().unwrap()])
        .stdin(crate::report::piped_file(&input))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read(&piped).unwrap(), std::fs::read(&file).unwrap());
    assert!(chart(&piped).bars.len() > 1, "a chart of categories");
}
