//! How `memtally plot`'s charts look, read from their SVG geometry and
//! from ImageMagick's rendering: the legend sits on no line, a total
//! equal to its one process stays visible (dashed, and named so), grid
//! lines carry no `opacity` (ImageMagick drew those solid black), stacked
//! category areas add up to the total, and value axes leave headroom.

use std::path::{Path, PathBuf};
use std::process::Command;

use roxmltree::{Document, Node};

use crate::support::{repo, run, svg_data};

/// A recorded process: one python3 (its rollup and smaps agree exactly).
const PID: &str = "11364";

fn root() -> PathBuf {
    repo().join("testdata/fixtures/linux/python3-mmap/proc")
}

/// A watch series of the recorded process (three samples, categories too).
fn series(dir: &Path) -> PathBuf {
    let csv = dir.join("s.csv");
    let r = root();
    let out = run(&[
        "--proc-root",
        r.to_str().unwrap(),
        "watch",
        PID,
        "--interval",
        "10ms",
        "--count",
        "3",
        "--categories",
        "-o",
        csv.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    csv
}

fn plot(input: &Path, svg: &Path, extra: &[&str]) {
    let mut args = vec!["plot", input.to_str().unwrap(), "-o", svg.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = run(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

fn num(n: Node, name: &str) -> f64 {
    n.attribute(name).and_then(|v| v.parse().ok()).unwrap_or(f64::NAN)
}

fn points(n: Node) -> Vec<(f64, f64)> {
    n.attribute("points")
        .unwrap_or("")
        .split_whitespace()
        .filter_map(|p| p.split_once(','))
        .map(|(x, y)| (x.parse().unwrap(), y.parse().unwrap()))
        .collect()
}

/// Whether the segment a–b, drawn 2 pixels wide, touches the inside of
/// the rectangle (x0, y0, x1, y1): sampled every quarter pixel.
fn crosses(a: (f64, f64), b: (f64, f64), r: (f64, f64, f64, f64)) -> bool {
    let steps = ((b.0 - a.0).hypot(b.1 - a.1) * 4.0).ceil().max(1.0) as usize;
    (0..=steps).any(|i| {
        let t = i as f64 / steps as f64;
        let (x, y) = (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t);
        x > r.0 - 1.0 && x < r.2 + 1.0 && y > r.1 - 1.0 && y < r.3 + 1.0
    })
}

/// The data lines: polylines in colour or the black total drawn 2 wide
/// (the axes and ticks are 1 wide), but for the legend's own samples
/// (wholly inside its frame).
fn data_lines<'a>(doc: &'a Document) -> Vec<Node<'a, 'a>> {
    let f = legend_frame(doc);
    let inside = |p: &(f64, f64)| p.0 >= f.0 && p.0 <= f.2 && p.1 >= f.1 && p.1 <= f.3;
    doc.descendants()
        .filter(|n| n.has_tag_name("polyline") && n.attribute("stroke-width") == Some("2"))
        .filter(|n| !points(*n).iter().all(inside))
        .collect()
}

/// The legend's frame: the one unfilled, black-stroked rectangle.
fn legend_frame(doc: &Document) -> (f64, f64, f64, f64) {
    let frames: Vec<Node> = doc
        .descendants()
        .filter(|n| {
            n.has_tag_name("rect")
                && n.attribute("fill") == Some("none")
                && n.attribute("stroke") == Some("#000000")
        })
        .collect();
    assert_eq!(frames.len(), 1, "one legend frame");
    let f = frames[0];
    let (x, y) = (num(f, "x"), num(f, "y"));
    (x, y, x + num(f, "width"), y + num(f, "height"))
}

/// The y pixel of the top tick and its value: the axis' end.
fn top_tick(doc: &Document) -> f64 {
    doc.descendants()
        .filter(|n| n.has_tag_name("text") && n.attribute("text-anchor") == Some("end"))
        .filter_map(|n| n.text().and_then(|t| t.trim().parse::<f64>().ok()))
        .fold(0.0, f64::max)
}

#[test]
fn a_lone_process_total_is_dashed_named_and_no_legend_sits_on_a_line() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("l.svg");
    plot(&series(dir.path()), &svg, &[]);
    let (text, data) = svg_data(&svg);
    let doc = Document::parse(&text).unwrap();
    let lines = data_lines(&doc);
    // The total is black and dashed (one line with a dash pattern), drawn
    // after (over) the process's one line of another colour.
    let total: Vec<&Node> =
        lines.iter().filter(|n| n.attribute("stroke") == Some("#000000")).collect();
    let others: Vec<&Node> =
        lines.iter().filter(|n| n.attribute("stroke") != Some("#000000")).collect();
    assert_eq!(total.len(), 1, "one total line");
    assert_eq!(total[0].attribute("stroke-dasharray"), Some("7 4"), "the total is dashed");
    assert!(others.len() == 1, "one process line: {}", others.len());
    let last_process = lines.iter().rposition(|n| n.attribute("stroke") != Some("#000000"));
    let first_total = lines.iter().position(|n| n.attribute("stroke") == Some("#000000"));
    assert!(first_total > last_process, "the total is drawn over the process");
    let labels: Vec<&str> =
        data["lines"].as_array().unwrap().iter().map(|l| l["label"].as_str().unwrap()).collect();
    assert_eq!(labels[0], format!("total pss (= process {PID}, the only one)"));
    assert!(text.contains(labels[0]), "the legend names it");
    // No data segment runs through the legend's box.
    let frame = legend_frame(&doc);
    for l in &lines {
        for w in points(*l).windows(2) {
            assert!(!crosses(w[0], w[1], frame), "segment {w:?} crosses the legend {frame:?}");
        }
    }
    // The PSS axis ends at a round number at least 5% above the data.
    let max = data["lines"][0]["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p[1].as_f64().unwrap() / 1048576.0)
        .fold(0.0, f64::max);
    let top = top_tick(&doc);
    assert!(top >= max * 1.05, "axis end {top} MiB for {max} MiB");
    assert_eq!(top, top.round(), "a round end: {top}");
    // Grid lines (and everything else) without `opacity`: ImageMagick
    // applies it to the fill and draws them black.
    let with_opacity = doc.descendants().filter(|n| n.attribute("opacity").is_some()).count();
    assert_eq!(with_opacity, 0, "elements with opacity=");
}

/// The plotting area's edges: the vertical grid lines' ends (top,
/// bottom) and the horizontal ones' (left, right).
fn area(doc: &Document) -> (f64, f64, f64, f64) {
    let lines: Vec<Node> = doc.descendants().filter(|n| n.has_tag_name("line")).collect();
    let vertical = lines.iter().filter(|l| num(**l, "x1") == num(**l, "x2"));
    let horizontal = lines.iter().filter(|l| num(**l, "y1") == num(**l, "y2"));
    let top = vertical.clone().map(|l| num(*l, "y1").min(num(*l, "y2"))).fold(f64::MAX, f64::min);
    let bottom = vertical.map(|l| num(*l, "y1").max(num(*l, "y2"))).fold(0.0, f64::max);
    let left =
        horizontal.clone().map(|l| num(*l, "x1").min(num(*l, "x2"))).fold(f64::MAX, f64::min);
    let right = horizontal.map(|l| num(*l, "x1").max(num(*l, "x2"))).fold(0.0, f64::max);
    (left, top, right, bottom)
}

/// No font rides in the file: text is set in the viewer's sans-serif.
fn no_font(doc: &Document, text: &str) {
    assert!(!text.contains("font-face") && !text.contains("base64"), "an embedded font");
    assert!(!doc.descendants().any(|n| n.has_tag_name("font") || n.has_tag_name("style")));
    let texts: Vec<Node> = doc.descendants().filter(|n| n.has_tag_name("text")).collect();
    assert!(texts.len() > 5, "texts: {}", texts.len());
    assert!(texts.iter().all(|n| n.attribute("font-family") == Some("sans-serif")));
}

/// The chart of a recorded process's series is XML whose lines pass
/// exactly through the series' samples (the CSV's, on the drawn axes),
/// with the labels as text and no font embedded.
#[test]
fn a_series_chart_draws_the_samples_and_labels_and_embeds_no_font() {
    let dir = tempfile::tempdir().unwrap();
    let csv = series(dir.path());
    let svg = dir.path().join("l.svg");
    plot(&csv, &svg, &[]);
    let text = std::fs::read_to_string(&svg).unwrap();
    let doc = Document::parse(&text).expect("well-formed XML");
    no_font(&doc, &text);
    // The samples as `watch` wrote them: the total's and the process's.
    let csv = std::fs::read_to_string(&csv).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    // Counted from the end: the label before the figures is quoted and
    // holds commas.
    let from_end = header.len() - header.iter().position(|h| *h == "pss").unwrap();
    let samples = |scope: &str| -> Vec<(f64, f64)> {
        csv.lines()
            .map(|l| l.split(',').collect::<Vec<_>>())
            .filter(|f| f[1] == scope)
            .map(|f| (f[0].parse().unwrap(), f[f.len() - from_end].parse::<f64>().unwrap()))
            .map(|(t, v)| (t, v / 1048576.0))
            .collect()
    };
    let (total, process) = (samples("total"), samples("process"));
    assert_eq!(total.len(), 3);
    assert_eq!(process.len(), 3);
    let (left, top, right, bottom) = area(&doc);
    let t_max = total.iter().map(|p| p.0).fold(0.0, f64::max);
    let y_end = top_tick(&doc);
    let at = |(t, v): (f64, f64)| {
        (left + t / t_max * (right - left), bottom - v / y_end * (bottom - top))
    };
    let lines = data_lines(&doc);
    for (colour, want) in [(true, &total), (false, &process)] {
        let line = lines
            .iter()
            .find(|n| (n.attribute("stroke") == Some("#000000")) == colour)
            .expect("the line");
        let drawn = points(*line);
        assert_eq!(drawn.len(), want.len());
        for (d, w) in drawn.iter().zip(want.iter()) {
            let (x, y) = at(*w);
            assert!((d.0 - x).abs() < 0.01 && (d.1 - y).abs() < 0.01, "{d:?} for {w:?} at {x},{y}");
        }
    }
    let texts: Vec<&str> =
        doc.descendants().filter(|n| n.has_tag_name("text")).filter_map(|n| n.text()).collect();
    for label in [format!("total pss (= process {PID}, the only one)"), format!("{PID} python3")] {
        assert!(texts.iter().any(|t| t.starts_with(&label)), "{label:?} in {texts:?}");
    }
    assert!(texts.contains(&"seconds") && texts.contains(&"MiB"), "axis names: {texts:?}");
}

/// The bars of a recorded snapshot (format 1's `a.json`) are as long as
/// their values on the drawn axis, each labelled, no font embedded.
#[test]
fn snapshot_bars_are_as_long_as_their_values_and_labelled() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("b.svg");
    plot(&repo().join("testdata/snapshots/format1/a.json"), &svg, &[]);
    let (text, data) = svg_data(&svg);
    let doc = Document::parse(&text).unwrap();
    no_font(&doc, &text);
    // The value axis: its grid lines from 0 (left) to its end (right).
    let grid = doc.descendants().filter(|n| n.has_tag_name("line")).map(|l| num(l, "x1"));
    let (left, right) = (grid.clone().fold(f64::MAX, f64::min), grid.fold(0.0, f64::max));
    let end = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().and_then(|t| t.trim().parse::<f64>().ok()))
        .fold(0.0, f64::max);
    let light: Vec<Node> =
        doc.descendants().filter(|n| n.attribute("fill") == Some("#9ECAE1")).collect();
    let texts: Vec<&str> = doc.descendants().filter_map(|n| n.text()).collect();
    let bars = data["bars"].as_array().unwrap();
    assert_eq!(bars.len(), 6);
    for (i, b) in bars.iter().enumerate() {
        let label = b["label"].as_str().unwrap();
        assert!(texts.contains(&label), "{label:?} drawn");
        let mib = b["value"].as_f64().unwrap() / 1048576.0;
        let width = num(light[i], "width");
        let want = mib / end * (right - left);
        assert!((width - want).abs() < 0.01, "{label}: {width} px for {mib} MiB (want {want})");
        assert_eq!(num(light[i], "x"), left);
    }
}

/// A snapshot's bars end under a round axis end at least 5% past the largest.
#[test]
fn snapshot_bars_leave_headroom_and_keep_their_legend_off_the_bars() {
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("s.json");
    let r = root();
    let out = run(&[
        "--proc-root",
        r.to_str().unwrap(),
        "snapshot",
        "--pid",
        PID,
        "-o",
        snap.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let svg = dir.path().join("b.svg");
    plot(&snap, &svg, &[]);
    let (text, data) = svg_data(&svg);
    let doc = Document::parse(&text).unwrap();
    let max = data["bars"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["value"].as_f64().unwrap() / 1048576.0)
        .fold(0.0, f64::max);
    let top = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().and_then(|t| t.trim().parse::<f64>().ok()))
        .fold(0.0, f64::max);
    assert!(top >= max * 1.05, "axis end {top} MiB for {max} MiB");
    let frame = legend_frame(&doc);
    for bar in
        doc.descendants().filter(|n| n.has_tag_name("rect") && n.attribute("fill") != Some("none"))
    {
        let (x, y) = (num(bar, "x"), num(bar, "y"));
        let (x1, y1) = (x + num(bar, "width"), y + num(bar, "height"));
        let inside_legend = x >= frame.0 && x1 <= frame.2 && y >= frame.1 && y1 <= frame.3;
        let apart = x1 <= frame.0 || x >= frame.2 || y1 <= frame.1 || y >= frame.3;
        assert!(inside_legend || apart || (x == 0.0 && y == 0.0), "bar {x},{y} under the legend");
    }
}

#[test]
fn stacked_categories_add_up_to_the_total() {
    let dir = tempfile::tempdir().unwrap();
    let csv = series(dir.path());
    let svg = dir.path().join("st.svg");
    // USS adds up exactly (whole kB per mapping, as the rollup's sum).
    plot(&csv, &svg, &["--stack", "category", "--figure", "uss"]);
    let (text, data) = svg_data(&svg);
    assert_eq!(data["kind"], "stack");
    let bands = data["bands"].as_array().unwrap();
    assert!(bands.len() >= 4, "{bands:?}");
    let total = data["total"].as_array().unwrap();
    let times = data["times"].as_array().unwrap();
    assert_eq!(total.len(), times.len());
    for (i, t) in total.iter().enumerate() {
        let sum: u64 = bands.iter().map(|b| b["values"][i].as_u64().unwrap()).sum();
        assert_eq!(sum, t[1].as_u64().unwrap(), "sample {i}: the bands add up to the total");
    }
    // Drawn so: the top of the highest area meets the total's line.
    let doc = Document::parse(&text).unwrap();
    let tops: Vec<(f64, f64)> =
        doc.descendants().filter(|n| n.has_tag_name("polygon")).flat_map(points).collect();
    // Areas without outlines (ImageMagick drew a missing stroke black).
    let polygons = doc.descendants().filter(|n| n.has_tag_name("polygon"));
    assert!(polygons.clone().all(|n| n.attribute("stroke") == Some("none")), "unoutlined areas");
    assert_eq!(polygons.count(), bands.len(), "one area per band");
    let line = data_lines(&doc)
        .into_iter()
        .find(|n| n.attribute("stroke") == Some("#000000"))
        .expect("the total's line");
    let pts = points(line);
    assert_eq!(pts.len(), times.len());
    for (x, y) in pts {
        let top =
            tops.iter().filter(|p| (p.0 - x).abs() < 0.5).map(|p| p.1).fold(f64::MAX, f64::min);
        assert!((top - y).abs() <= 1.0, "at x {x}: areas' top {top}, total {y}");
    }
    // A series without category rows says what is missing.
    let bare = dir.path().join("bare.csv");
    let kept: String = std::fs::read_to_string(&csv)
        .unwrap()
        .lines()
        .filter(|l| !l.contains(",category,"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&bare, kept).unwrap();
    let out =
        run(&["plot", bare.to_str().unwrap(), "--stack", "category", "-o", svg.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no pss figures of categories"), "{err}");
}

/// The real ImageMagick (not a stand-in that only converts PNGs), if any.
fn imagemagick() -> Option<&'static str> {
    ["/usr/bin/convert", "convert"].into_iter().find(|c| {
        Command::new(c).arg("-version").output().is_ok_and(|o| {
            o.status.success() && String::from_utf8_lossy(&o.stdout).contains("ImageMagick")
        })
    })
}

/// A binary PPM (P6): width, height, RGB bytes.
fn ppm(bytes: &[u8]) -> (usize, usize, &[u8]) {
    let mut fields = Vec::new();
    let mut at = 0;
    while fields.len() < 4 {
        while bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        let start = at;
        while !bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        fields.push(String::from_utf8_lossy(&bytes[start..at]).into_owned());
    }
    assert_eq!(fields[0], "P6");
    let (w, h): (usize, usize) = (fields[1].parse().unwrap(), fields[2].parse().unwrap());
    (w, h, &bytes[at + 1..])
}

/// ImageMagick draws the grid grey, not black, and the lines without a fill.
#[test]
fn imagemagick_draws_the_grid_grey() {
    let Some(convert) = imagemagick() else {
        eprintln!("skipped: ImageMagick's convert is not installed (apt-get install imagemagick)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("l.svg");
    plot(&series(dir.path()), &svg, &[]);
    let out = Command::new(convert)
        .arg(&svg)
        .args(["-background", "white", "-flatten", "ppm:-"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (w, h, rgb) = ppm(&out.stdout);
    let text = std::fs::read_to_string(&svg).unwrap();
    let doc = Document::parse(&text).unwrap();
    let size = doc.root_element();
    let (sw, sh) = (num(size, "width"), num(size, "height"));
    // Pixels on the vertical grid lines, in the plot's lower half (under
    // the recorded process's flat line near the top).
    let mut dark = 0;
    let mut seen = 0;
    for l in doc.descendants().filter(|n| n.has_tag_name("line") && num(*n, "x1") == num(*n, "x2"))
    {
        let x = (num(l, "x1") * w as f64 / sw) as usize;
        let (y0, y1) = (num(l, "y1").min(num(l, "y2")), num(l, "y1").max(num(l, "y2")));
        for k in 6..9 {
            let y = ((y0 + (y1 - y0) * k as f64 / 10.0) * h as f64 / sh) as usize;
            let p = &rgb[(y * w + x) * 3..][..3];
            seen += 1;
            dark += usize::from(p.iter().all(|&c| c < 128));
        }
    }
    assert!(seen > 30, "grid pixels looked at: {seen}");
    assert_eq!(dark, 0, "{dark} of {seen} grid pixels are black");
}
