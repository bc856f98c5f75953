//! `memtally report` pages opened in a real browser: Debian's Chromium,
//! headless (`--dump-dom` after the page's script ran, `--screenshot`).
//! The DOM must hold every process of the input with the figures of the
//! JSON the page embeds, the waterfall must add up to MemTotal, a URL
//! fragment must drill down, nothing may leave the file, and a screenshot
//! must show the picture. Skipped with a printed reason without Chromium.

use std::path::{Path, PathBuf};
use std::process::Command;

use regex::Regex;
use serde_json::Value;

use crate::support::{lone::lone, repo_path, run};

const CHROMIUM_TREE: &str = "testdata/fixtures/linux/chromium-browser/proc";

/// The Chromium binary, or `None` (and why, printed).
pub(crate) fn chromium() -> Option<PathBuf> {
    for name in ["chromium", "chromium-browser"] {
        if let Ok(out) = Command::new("sh").arg("-c").arg(format!("command -v {name}")).output() {
            let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
            if out.status.success() && !path.is_empty() {
                return Some(PathBuf::from(path));
            }
        }
    }
    eprintln!("skipped: no chromium on PATH (Debian: apt-get install chromium)");
    None
}

/// Chromium headless on `url` with `extra` arguments, a fresh profile
/// (removed after), no network services; its standard output.
fn headless(bin: &Path, url: &str, extra: &[&str]) -> String {
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new("timeout")
        .arg("120")
        .arg(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(url)
        .output()
        .expect("chromium runs");
    assert!(out.status.success(), "chromium failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub(crate) fn dump_dom(bin: &Path, url: &str) -> String {
    let dom = headless(bin, url, &["--dump-dom"]);
    assert!(dom.contains("</html>"), "a whole DOM: {}", &dom[..dom.len().min(300)]);
    dom
}

/// Writes the report of `args` into `dir/name` and returns its path.
pub(crate) fn report(dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let page = dir.join(name);
    let mut all = vec!["report", "-o", page.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = run(&all);
    assert!(out.status.success(), "report {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    page
}

/// The snapshot JSON the page embeds, read as a browser would not: the
/// text of the one element that carries it.
pub(crate) fn embedded(page: &Path) -> Value {
    let html = std::fs::read_to_string(page).unwrap();
    let open = r#"<script type="application/json" id="memtally-snapshot">"#;
    let at = html.find(open).expect("the page embeds its snapshot") + open.len();
    let end = html[at..].find("</script>").unwrap() + at;
    serde_json::from_str(&html[at..end]).expect("the embedded snapshot is JSON")
}

pub(crate) fn url(page: &Path, fragment: &str) -> String {
    format!("file://{}{fragment}", page.display())
}

/// Each table row's figure cells by PID: `data-v` values in column order.
pub(crate) fn rows(dom: &str) -> std::collections::HashMap<u64, Vec<i64>> {
    // `(?s)`: a command line may hold newlines (python3 -c "...").
    let row = Regex::new(r#"(?s)<tr id="p(\d+)"[^>]*>(.*?)</tr>"#).unwrap();
    let v = Regex::new(r#"data-v="(-?\d+)""#).unwrap();
    row.captures_iter(dom)
        .map(|c| {
            let cells = v.captures_iter(&c[2]).map(|m| m[1].parse().unwrap()).collect();
            (c[1].parse().unwrap(), cells)
        })
        .collect()
}

/// Every process of the JSON is a row whose PSS, USS and swap cells are
/// the JSON's figures (columns: pid, PSS, USS, dirty, SWAP PSS, FOOTPRINT
/// PSS, RSS): `swap_pss + shmem_swap` and `pss_anon + swap_pss`, as `top`.
fn assert_rows_match(dom: &str, json: &Value) {
    let rows = rows(dom);
    let procs = json["processes"].as_array().unwrap();
    assert!(!procs.is_empty());
    for p in procs {
        let pid = p["pid"].as_u64().unwrap();
        let cells = rows.get(&pid).unwrap_or_else(|| panic!("pid {pid} has a row"));
        let t = &p["totals"];
        let fig = |k: &str| t[k].as_i64().unwrap_or(-1);
        let uss = match (t["private_clean"].as_i64(), t["private_dirty"].as_i64()) {
            (Some(c), Some(d)) => c + d,
            _ => -1,
        };
        assert_eq!(cells[0], pid as i64);
        assert_eq!(cells[1], fig("pss"), "pid {pid}: PSS");
        assert_eq!(cells[2], uss, "pid {pid}: USS");
        let footprint = match (t["pss_anon"].as_i64(), t["swap_pss"].as_i64()) {
            (Some(a), Some(s)) => a + s,
            _ => -1,
        };
        let swap_pss = match (t["swap_pss"].as_i64(), t["shmem_swap"].as_i64()) {
            (None, None) => -1,
            (a, b) => a.unwrap_or(0) + b.unwrap_or(0),
        };
        assert_eq!(cells[4], swap_pss, "pid {pid}: SWAP PSS");
        assert_eq!(cells[5], footprint, "pid {pid}: footprint");
        assert_eq!(cells[6], fig("rss"), "pid {pid}: RSS");
    }
}

/// The waterfall's parts (their `data-bytes`) add up to the bar's
/// `data-total`, which is the page's MemTotal.
fn assert_waterfall_adds_up(dom: &str, json: &Value) {
    let total: i64 = Regex::new(r#"id="waterfall"[^>]*data-total="(\d+)""#)
        .unwrap()
        .captures(dom)
        .expect("a waterfall")[1]
        .parse()
        .unwrap();
    let parts: Vec<i64> = Regex::new(r#"class="part[^"]*"[^>]*data-bytes="(-?\d+)""#)
        .unwrap()
        .captures_iter(dom)
        .map(|c| c[1].parse().unwrap())
        .collect();
    assert!(parts.len() > 5, "{parts:?}");
    assert_eq!(parts.iter().sum::<i64>(), total, "the parts add up to MemTotal");
    assert_eq!(
        Some(total),
        json["machine"]["MemTotal"].as_i64(),
        "MemTotal of the recorded meminfo"
    );
}

#[test]
fn a_recorded_chromium_tree_is_in_the_dom_with_the_json_s_figures() {
    let Some(bin) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    let page = report(dir.path(), "chromium.html", &["--proc-root", &repo_path(CHROMIUM_TREE)]);
    let json = embedded(&page);
    let dom = dump_dom(&bin, &url(&page, ""));
    assert_rows_match(&dom, &json);
    assert_waterfall_adds_up(&dom, &json);
    // The script ran (the policy let it): the selection line is filled.
    assert!(dom.contains(r#"data-node="n0""#), "the script selected the machine");
}

#[test]
fn a_fragment_drills_down_to_the_process_and_the_path_leads_back() {
    let Some(bin) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    let page = report(dir.path(), "chromium.html", &["--proc-root", &repo_path(CHROMIUM_TREE)]);
    let html = std::fs::read_to_string(&page).unwrap();
    let id = Regex::new(r#"<rect id="(n\d+)" class="k-process"[^>]*data-pid="11672""#)
        .unwrap()
        .captures(&html)
        .expect("the process's box")[1]
        .to_string();
    let dom = dump_dom(&bin, &url(&page, &format!("#{id}")));
    let sel = Regex::new(r#"<p id="sel"[^>]*>([^<]*)</p>"#).unwrap();
    let caps = sel.captures(&dom).expect("the selection line");
    assert!(caps[0].contains(&format!(r#"data-node="{id}""#)), "{}", &caps[0]);
    assert!(caps[1].starts_with("chromium (11672)"), "{}", &caps[1]);
    // Zoomed: the boxes' group is transformed, the labels are the process's categories.
    let g = Regex::new(r#"<g id="tm-all" transform="matrix\(([^)]*)\)""#).unwrap();
    let m = g.captures(&dom).expect("zoomed")[1].to_string();
    assert_ne!(m.split(' ').next(), Some("1"), "{m}");
    let labels = dom.split(r#"<g id="tm-labels">"#).nth(1).unwrap().split("</g>").next().unwrap();
    assert!(labels.contains("file code"), "{labels}");
    let crumbs = Regex::new(r#"<p id="crumbs"[^>]*>(.*?)</p>"#).unwrap().captures(&dom).unwrap()[1]
        .to_string();
    assert!(crumbs.contains(r##"href="#n0""##) && crumbs.contains("all processes"), "{crumbs}");
}

#[test]
fn no_request_leaves_the_page() {
    let dir = tempfile::tempdir().unwrap();
    let page = report(dir.path(), "chromium.html", &["--proc-root", &repo_path(CHROMIUM_TREE)]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains(r#"<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'sha256-"#));
    for bad in ["<link", " src=", "@import", "<iframe", "<img"] {
        assert!(!html.contains(bad), "the page holds {bad}");
    }
    // Every link stays in the page; url() names only the page's own pattern.
    for c in Regex::new(r#"href="([^"]*)""#).unwrap().captures_iter(&html) {
        assert!(c[1].starts_with('#'), "a link out: {}", &c[1]);
    }
    for c in Regex::new(r"url\(([^)]*)\)").unwrap().captures_iter(&html) {
        assert!(c[1].starts_with('#'), "url({})", &c[1]);
    }
    // http(s) addresses only as SVG's namespace name, which is no request.
    for m in Regex::new(r#"https?://[^\s"'<)]*"#).unwrap().find_iter(&html) {
        assert_eq!(m.as_str(), "http://www.w3.org/2000/svg", "an address in the page");
    }
    let Some(bin) = chromium() else { return };
    // The browser shows it with the policy in force: the script's hash
    // matched (it filled the selection); nothing else was loaded.
    let dom = dump_dom(&bin, &url(&page, ""));
    assert!(dom.contains(r#"data-node="n0""#));
}

/// The first screen (1280x800) is the headline and the treemap: its
/// clean and dirty boxes are on it, the waterfall (its free part) is not;
/// the waterfall follows, further down the page.
#[test]
fn the_first_screen_shows_the_treemap_and_the_waterfall_follows() {
    let Some(bin) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    let page = report(dir.path(), "chromium.html", &["--proc-root", &repo_path(CHROMIUM_TREE)]);
    let shot = |name: &str, size: &str| {
        let file = dir.path().join(name);
        headless(
            &bin,
            &url(&page, ""),
            &[&format!("--screenshot={}", file.display()), &format!("--window-size={size}")],
        );
        colours(&file)
    };
    let first = shot("first.png", "1280,800");
    assert!(first.len() > 50, "only {} colours: blank?", first.len());
    for (name, c) in [("clean", (0x8a, 0xb8, 0xe6)), ("dirty", (0xd6, 0x27, 0x28))] {
        assert!(has_colour(&first, c), "no {name} pixel on the first screen");
    }
    let free = (0x8f, 0xd1, 0x9e);
    assert!(!has_colour(&first, free), "the waterfall follows the treemap");
    let whole = shot("whole.png", "1280,2400");
    assert!(has_colour(&whole, free), "no waterfall (free) pixel on the page");
}

/// The distinct colours of a PNG's pixels.
fn colours(png_file: &Path) -> std::collections::HashSet<(u8, u8, u8)> {
    let decoder =
        png::Decoder::new(std::io::BufReader::new(std::fs::File::open(png_file).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let px = info.color_type.samples();
    buf[..info.buffer_size()].chunks(px).map(|p| (p[0], p[1], p[2])).collect()
}

/// Whether a colour within 3 of `c` in each channel is among `colours`.
fn has_colour(colours: &std::collections::HashSet<(u8, u8, u8)>, c: (u8, u8, u8)) -> bool {
    let near = |a: u8, b: u8| a.abs_diff(b) <= 3;
    colours.iter().any(|&(r, g, b)| near(r, c.0) && near(g, c.1) && near(b, c.2))
}

#[test]
fn a_live_child_is_in_the_page_with_its_dirty_heap() {
    let Some(bin) = chromium() else { return };
    let len = 48 << 20;
    let child = lone(len);
    let pid = child.child.0.id().to_string();
    let dir = tempfile::tempdir().unwrap();
    let page = report(dir.path(), "live.html", &["--pid", &pid]);
    let json = embedded(&page);
    let p = &json["processes"][0];
    assert!(p["totals"]["private_dirty"].as_u64().unwrap() >= len as u64, "{}", p["totals"]);
    let dom = dump_dom(&bin, &url(&page, ""));
    assert_rows_match(&dom, &json);
    // Its detail lists the heap mapping it wrote.
    let detail = dom.split(&format!(r#"<section id="d{pid}""#)).nth(1).expect("a detail section");
    assert!(detail.split("</section>").next().unwrap().contains(&format!(r#"data-v="{len}""#)));
}

#[test]
fn the_page_reads_back_and_markup_in_the_data_stays_data() {
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("s.json");
    let out =
        run(&["snapshot", "--proc-root", &repo_path(CHROMIUM_TREE), "-o", snap.to_str().unwrap()]);
    assert!(out.status.success());
    // A variant made here, not a recording: a command line and a user as
    // a hostile or private process would have them.
    let evil =
        "/home/alice/secret-project/app --password hunter2 </script><script>alert(1)</script>";
    let variant = dir.path().join("variant.json");
    let (mut process, mut region) = (true, true);
    crate::support::edit_snapshot(&snap, &variant, |v| {
        if let Some(p) = v.get_mut("process").filter(|_| process) {
            p["command"] = evil.into();
            p["user"] = "alice".into();
            process = false;
        }
        if let Some(r) = v.get_mut("region").filter(|_| region) {
            r["path"] = "/home/alice/.cache/x.so".into();
            region = false;
        }
    });
    let page = report(dir.path(), "plain.html", &["--input", variant.to_str().unwrap()]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("<script").count(), 2, "the data opened no element");
    assert_eq!(embedded(&page)["processes"][0]["command"], evil);
    // `diff` and `report` read the page as the snapshot it carries.
    let d = run(&["diff", variant.to_str().unwrap(), page.to_str().unwrap()]);
    assert!(d.status.success(), "{}", String::from_utf8_lossy(&d.stderr));
    assert!(String::from_utf8_lossy(&d.stdout).contains("processes: no change"));
    let again = report(dir.path(), "again.html", &["--input", page.to_str().unwrap()]);
    assert_eq!(embedded(&again)["processes"], embedded(&page)["processes"]);
    // Redacted: none of the private strings, placeholders instead.
    let red = report(dir.path(), "red.html", &["--input", variant.to_str().unwrap(), "--redact"]);
    let text = std::fs::read_to_string(&red).unwrap();
    for secret in ["alice", "hunter2", "secret-project", "--password"] {
        assert!(!text.contains(secret), "{secret} left in the redacted page");
    }
    assert!(text.contains(r#"data-redacted="yes""#));
    let p = &embedded(&red)["processes"][0];
    assert_eq!(p["user"], "<user1>");
    assert!(
        p["command"].as_str().unwrap().starts_with("~/<path1> <arg1> <arg2>"),
        "{}",
        p["command"]
    );
    assert!(html.contains(r#"data-redacted="no""#));
}

#[test]
fn a_small_budget_folds_boxes_and_says_what_the_embedded_snapshot_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let full = report(dir.path(), "full.html", &["--proc-root", &repo_path(CHROMIUM_TREE)]);
    let page = report(
        dir.path(),
        "small.html",
        &["--proc-root", &repo_path(CHROMIUM_TREE), "--max-size", "150K"],
    );
    let (full_len, len) =
        (std::fs::metadata(&full).unwrap().len(), std::fs::metadata(&page).unwrap().len());
    assert!(len <= 150 << 10 && len < full_len, "{len} bytes (full page {full_len})");
    let html = std::fs::read_to_string(&page).unwrap();
    let smaller = Regex::new(r#"class="k-smaller"[^>]*data-label="(\d+) smaller""#).unwrap();
    let folded: u64 = smaller.captures_iter(&html).map(|c| c[1].parse::<u64>().unwrap()).sum();
    assert!(folded > 100, "{folded} boxes folded");
    let json = embedded(&page);
    assert!(json["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().contains("leaves out the mappings")));
    // Nothing is dropped from the figures: the process keeps its totals.
    assert_eq!(json["processes"][0]["totals"], embedded(&full)["processes"][0]["totals"]);
    // A budget nothing fits in: the page says it is over it.
    let tiny = report(
        dir.path(),
        "tiny.html",
        &["--proc-root", &repo_path(CHROMIUM_TREE), "--max-size", "1K"],
    );
    let text = std::fs::read_to_string(&tiny).unwrap();
    assert!(text.contains("over its size budget of 1.0K"), "the page says it is over budget");
}

#[test]
fn a_vmmap_file_becomes_a_page_of_its_region_types() {
    let Some(shared) = crate::support::shared() else {
        eprintln!("skipped: no ../shared with the published vmmap files");
        return;
    };
    let file = shared.join("fixtures/vmmap/04_macos-10.13.3_vmmap-wide_fsnotifier_complete.txt");
    let dir = tempfile::tempdir().unwrap();
    let page = report(dir.path(), "vmmap.html", &["--input", file.to_str().unwrap()]);
    let html = std::fs::read_to_string(&page).unwrap();
    let json = embedded(&page);
    assert_eq!(json["kind"], "vmmap");
    assert!(html.contains("Area: footprint"));
    // vmmap's own view: the footprint and every type by purgeable state.
    let vm = crate::support::run_json(&["vmmap", file.to_str().unwrap(), "--format", "json"]);
    let fp = vm["footprint_total"]["footprint"].as_u64().expect("a footprint");
    assert!(html.contains(&format!(r#"<table id="vmmap-footprint"><tbody><tr><td>Footprint (dirty + swapped, not volatile or empty)</td><td class="n" data-v="{fp}">"#)), "footprint {fp}");
    assert!(html.contains(r#"<table id="vmmap-purge""#));
    // The region types are the process's boxes (machine n0, group n1, process n2).
    assert!(html.contains(r#"class="k-category" data-parent="n2" data-depth="3""#));
    // Every type with a footprint (those without fold into "N smaller").
    for t in
        vm["footprint"].as_array().unwrap().iter().filter(|t| t["footprint"].as_u64() > Some(0))
    {
        let key = t["region_type"].as_str().unwrap();
        assert!(html.contains(&format!(r#"data-label="{key}""#)), "{key}");
    }
}

#[test]
fn a_diff_page_colours_the_grower_red_and_lists_its_growth() {
    let step = 32 << 20;
    let mut g = crate::support::spawn_grower(step);
    g.grow();
    let pid = g.pid.to_string();
    let dir = tempfile::tempdir().unwrap();
    let snap = |name: &str| {
        let p = dir.path().join(name);
        let out = run(&["snapshot", "--pid", &pid, "-o", p.to_str().unwrap()]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        p
    };
    let a = snap("a.json");
    g.grow();
    let b = snap("b.json");
    let page =
        report(dir.path(), "growth.html", &["--diff", a.to_str().unwrap(), b.to_str().unwrap()]);
    let html = std::fs::read_to_string(&page).unwrap();
    // The growth table's row: Δ dirty, then Δ PSS, each the step it grew.
    let row = Regex::new(&format!(r#"<tr data-pid="{pid}"><td>.*?</tr>"#)).unwrap();
    let row = row.find(&html).expect("the grower's growth row").as_str().to_string();
    let deltas: Vec<i64> = Regex::new(r#"data-v="(-?\d+)""#)
        .unwrap()
        .captures_iter(&row)
        .map(|c| c[1].parse().unwrap())
        .collect();
    // PSS also holds the child's share of libc's clean pages, which moves
    // as other processes map or unmap it between the two snapshots (10 KiB
    // seen in a loaded run); dirty is the child's own and exact.
    assert!(deltas[0] >= step as i64 && (deltas[1] - step as i64).abs() <= 64 << 10, "{row}");
    // Its box is red: it grew by half of what it has.
    let rect = Regex::new(&format!(
        r#"<rect id="n\d+" class="k-process"[^>]*data-pid="{pid}"[^>]*fill="\#([0-9a-f]{{6}})""#
    ))
    .unwrap();
    let fill = rect.captures(&html).expect("the grower's box")[1].to_string();
    let (r, gr) = (
        u8::from_str_radix(&fill[0..2], 16).unwrap(),
        u8::from_str_radix(&fill[2..4], 16).unwrap(),
    );
    assert!(r > 200 && gr < 80, "fill #{fill}");
    // The page carries B: diff B page finds no change.
    let d = run(&["diff", b.to_str().unwrap(), page.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&d.stdout).contains("processes: no change"));
    if let Some(bin) = chromium() {
        let dom = dump_dom(&bin, &url(&page, ""));
        assert!(dom.contains(r#"data-node="n0""#));
        assert!(dom.contains(r#"id="growth-processes""#));
    }
}

#[test]
fn by_cgroup_the_page_groups_by_cgroup_and_has_cgroup_s_rows() {
    let child = lone(8 << 20);
    let pid = child.child.0.id();
    let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap();
    // The path `top --by cgroup` uses: the memory controller's (v1, or a
    // hybrid's), else v2's.
    let line = text
        .lines()
        .find(|l| l.split(':').nth(1).is_some_and(|c| c.split(',').any(|c| c == "memory")))
        .or_else(|| text.lines().find(|l| l.starts_with("0::")));
    let Some(path) = line.and_then(|l| l.splitn(3, ':').nth(2)) else {
        eprintln!("skipped: pid {pid} has no memory cgroup");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let page = report(dir.path(), "cg.html", &["--pid", &pid.to_string(), "--by", "cgroup"]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains(r#"class="k-group" data-parent="n0" data-depth="1" data-v="#),
        "a group box"
    );
    assert!(html.contains(&format!(r#"data-label="{path}""#)), "the group is the cgroup {path}");
    assert!(html.contains(r#"<table id="cgroup-rows""#), "the cgroup section");
    assert!(html.contains(&format!("<td><code>{path}</code></td>")), "{path} has a row");
}

#[test]
fn a_watch_series_page_has_small_multiples_and_the_growth_verdict() {
    // 2 MiB every 100 ms: steady growth by any measure.
    let child =
        crate::support::spawn_steady_grower(2 << 20, std::time::Duration::from_millis(100), 60);
    let pid = child.pid.to_string();
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("series.csv");
    let out =
        run(&["watch", &pid, "--interval", "200ms", "--count", "8", "-o", csv.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let page = report(dir.path(), "series.html", &["--input", csv.to_str().unwrap()]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains(&format!(r#"<p id="verdict-text">memory grows steadily in pid {pid} "#)),
        "{}",
        &html[html.find("verdict-text").unwrap_or(0)..][..200]
    );
    assert!(
        html.contains(&format!(r#"<figure class="multiple" data-key="{pid}" data-steady="true">"#))
    );
    assert!(html.contains(r#"<figure class="multiple" data-key="total""#));
    // No snapshot in a series' page, and diff says so.
    let d = run(&["diff", page.to_str().unwrap(), page.to_str().unwrap()]);
    assert!(!d.status.success());
    assert!(
        String::from_utf8_lossy(&d.stderr).contains("without an embedded memtally snapshot"),
        "{}",
        String::from_utf8_lossy(&d.stderr)
    );
    // A series has no boxes for a faults section: said, not dropped.
    let csv = csv.to_str().unwrap();
    let f = run(&["report", "--input", csv, "--faults-input", csv]);
    assert_eq!(f.status.code(), Some(2), "{}", String::from_utf8_lossy(&f.stderr));
    assert!(String::from_utf8_lossy(&f.stderr).contains("a watch series' page has no treemap"));
}

#[test]
fn with_scripts_off_the_page_still_reads_and_it_prints() {
    let Some(bin) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    let page = report(dir.path(), "chromium.html", &["--proc-root", &repo_path(CHROMIUM_TREE)]);
    let json = embedded(&page);
    // Without a script the page is its markup (Chromium's --dump-dom needs
    // scripts on, so the file is read): the figures, the waterfall and the
    // treemap's labels are all in it.
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("data-node="), "nothing the script writes");
    assert_rows_match(&html, &json);
    assert_waterfall_adds_up(&html, &json);
    let labels = html.split(r#"<g id="tm-labels">"#).nth(1).unwrap().split("</g>").next().unwrap();
    assert!(labels.contains("chromium (11672)"), "{labels}");
    // (Chromium's headless --screenshot and --dump-dom write nothing with
    // scripts switched off, so the markup is what is checked.)
    let pdf = dir.path().join("page.pdf");
    headless(
        &bin,
        &url(&page, ""),
        &[&format!("--print-to-pdf={}", pdf.display()), "--no-pdf-header-footer"],
    );
    let bytes = std::fs::read(&pdf).unwrap();
    assert!(bytes.starts_with(b"%PDF") && bytes.len() > 20_000, "{} bytes of PDF", bytes.len());
}

#[test]
fn detail_reads_the_largest_in_full_and_says_the_rest_are_rollup_totals() {
    let (big, small) = (lone(24 << 20), lone(4 << 20));
    let (b, s) = (big.child.0.id(), small.child.0.id());
    let dir = tempfile::tempdir().unwrap();
    let pids = format!("{b},{s}");
    let page = report(dir.path(), "detail.html", &["--pid", &pids, "--detail", "1"]);
    let json = embedded(&page);
    let by_pid = |pid: u32| {
        json["processes"].as_array().unwrap().iter().find(|p| p["pid"] == pid).cloned().unwrap()
    };
    let (full, rolled) = (by_pid(b), by_pid(s));
    assert_eq!(full["source"], "smaps");
    assert!(!full["regions"].as_array().unwrap().is_empty());
    assert_eq!(rolled["source"], "smaps_rollup");
    assert!(rolled["regions"].as_array().unwrap().is_empty());
    assert!(rolled["totals"]["private_dirty"].as_u64().unwrap() >= 4 << 20);
    let note = "1 process was read in full (smaps: categories and mappings), the largest by PSS; the other 1 process are";
    assert!(
        json["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().starts_with(note)),
        "{}",
        json["notes"]
    );
    // Two read in full (on two threads, where the machine has them), one not.
    let mid = lone(12 << 20);
    let three = format!("{b},{s},{}", mid.child.0.id());
    let two = embedded(&report(dir.path(), "two.html", &["--pid", &three, "--detail", "2"]));
    let sources: Vec<(u64, &str)> = two["processes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["pid"].as_u64().unwrap(), p["source"].as_str().unwrap()))
        .collect();
    let want =
        [(b as u64, "smaps"), (mid.child.0.id() as u64, "smaps"), (s as u64, "smaps_rollup")];
    assert_eq!(sources, want, "the largest first, in full");
    let all = report(dir.path(), "all.html", &["--pid", &pids, "--detail", "all"]);
    assert!(embedded(&all)["processes"].as_array().unwrap().iter().all(|p| p["source"] == "smaps"));
}

/// The waterfall's parts by line: (class, data-bytes, x, width).
fn waterfall_parts(html: &str) -> std::collections::HashMap<String, (String, i64, f64, f64)> {
    let svg = &html[html.find(r#"<svg id="waterfall""#).expect("a waterfall")..];
    let svg = &svg[..svg.find("</svg>").unwrap()];
    Regex::new(
        r#"<rect class="(part[^"]*)" data-line="([^"]+)" data-group="[^"]*" data-bytes="(-?\d+)" x="([\d.]+)" y="0" width="([\d.]+)""#,
    )
    .unwrap()
    .captures_iter(svg)
    .map(|c| {
        (c[2].to_string(), (c[1].to_string(), c[3].parse().unwrap(), c[4].parse().unwrap(), c[5].parse().unwrap()))
    })
    .collect()
}

/// A recorded tree with a zram device (mm_stat) and a zswap pool, whose
/// lines push `unexplained` below zero (python3-mmap's tree leaves 96 MiB
/// unexplained; the device holds 110 MiB, zswap 2 MiB): zram and zswap
/// are parts one can see (zswap is a ten-thousandth of MemTotal), the
/// negative remainder is a hatched box as wide as the overflow with a
/// sentence saying it, and the parts still add up to MemTotal. The
/// process rows carry `footprint_pss` (Pss_Anon + SwapPss) of the JSON.
#[test]
fn recorded_zram_and_zswap_are_seen_and_a_negative_remainder_is_marked() {
    let (_a, with, _b, without) = crate::machine_swap::swap_tree();
    let m = crate::support::run_json(&["--proc-root", &with, "machine", "--format", "json"]);
    let unexplained = m["unexplained"].as_i64().unwrap();
    assert!(unexplained < 0, "the variant's remainder is negative: {unexplained}");
    let dir = tempfile::tempdir().unwrap();
    let page = report(dir.path(), "swap.html", &["--proc-root", &with]);
    let html = std::fs::read_to_string(&page).unwrap();
    let parts = waterfall_parts(&html);
    let (_, zram, _, zram_w) = &parts["zram"];
    assert_eq!(*zram, 115343360, "the zram line is mm_stat's mem_used_total");
    assert!(*zram_w >= 2.0, "zram drawn {zram_w} wide");
    let (_, zswap, _, zswap_w) = &parts["zswap"];
    assert_eq!(*zswap, 2048 * 1024);
    assert!(*zswap_w >= 2.0, "zswap drawn {zswap_w} wide, not a sliver");
    let (class, bytes, x, w) = &parts["unexplained"];
    assert_eq!(*bytes, unexplained);
    assert_eq!(class, "part over", "the negative remainder is the overflow box");
    let end: f64 = parts.values().filter(|p| p.0 == "part").map(|p| p.3).sum::<f64>();
    assert!((end - 1200.0).abs() < 0.1, "the positive parts fill the bar: {end}");
    // As wide as the overflow at the bar's scale (16 MiB of 24 GiB: less
    // than a unit, so the narrowest a part is drawn), at its end.
    let drawn: i64 = parts.values().map(|p| p.1.max(0)).sum();
    let want = (unexplained.unsigned_abs() as f64 / drawn as f64 * 1200.0).max(2.0);
    assert!((w - want).abs() < want * 0.05 + 0.5, "overflow {w} wide, want {want}");
    assert!((x + w - 1200.0).abs() < 0.1, "at the bar's end: x {x} width {w}");
    assert!(html.contains(r#"<p class="over" id="waterfall-over">"#), "the overflow said");
    let total: i64 = parts.values().map(|p| p.1).sum();
    assert_eq!(total, m["total"].as_i64().unwrap(), "the parts add up to MemTotal");

    // Without the device there is no zram part, and no overflow.
    let plain = report(dir.path(), "plain.html", &["--proc-root", &without]);
    let plain = std::fs::read_to_string(&plain).unwrap();
    let parts = waterfall_parts(&plain);
    assert!(!parts.contains_key("zram"));
    assert!(parts["unexplained"].1 > 0 && parts["unexplained"].0 == "part");
    assert!(!plain.contains("waterfall-over"));

    // The footprint column is the JSON's pss_anon + swap_pss.
    let json = embedded(&page);
    let rows = rows(&html);
    let mut seen = 0;
    for p in json["processes"].as_array().unwrap() {
        let t = &p["totals"];
        let (Some(a), Some(s)) = (t["pss_anon"].as_i64(), t["swap_pss"].as_i64()) else { continue };
        let pid = p["pid"].as_u64().unwrap();
        let cells = rows.get(&pid).unwrap_or_else(|| panic!("{pid} has a row: {:?}", rows.keys()));
        assert_eq!(cells[5], a + s, "footprint of {}", p["pid"]);
        seen += 1;
    }
    assert!(seen > 0, "a process with Pss_Anon and SwapPss");
}

/// The default `--detail auto`: the largest process is read in full even
/// of 3,000 mappings (more than the 2,000 the budget holds): it is the
/// one a user opens the page for; the budget cuts the tail after it, so
/// the smaller one is left to its rollup. `--detail 2` reads both,
/// whatever they cost.
#[test]
fn the_default_detail_reads_the_largest_in_full_and_cuts_the_tail() {
    let many = crate::support::lone::spawn_mapper(3000, None);
    let small = lone(4 << 20);
    let (m, s) = (many.child.0.id(), small.child.0.id());
    let maps = std::fs::read_to_string(format!("/proc/{m}/maps")).unwrap().lines().count();
    assert!(maps > 3000, "{maps} mappings");
    let dir = tempfile::tempdir().unwrap();
    // The two by their command lines (their programs' temporary
    // directories): processes named by PID are all read in full.
    let exe = |pid: u32| std::fs::read_link(format!("/proc/{pid}/exe")).unwrap();
    let name = format!(
        "^({}|{}) ",
        regex::escape(exe(m).to_str().unwrap()),
        regex::escape(exe(s).to_str().unwrap())
    );
    let pids = format!("{m},{s}");
    let sources = |page: &Path| -> Vec<(u64, String, u64)> {
        let json = embedded(page);
        json["processes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["pid"].as_u64().unwrap(),
                    p["source"].as_str().unwrap().to_string(),
                    p["totals"]["pss"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let auto = sources(&report(dir.path(), "auto.html", &["--name", &name]));
    assert_eq!(auto.len(), 2, "the two: {auto:?}");
    let by =
        |v: &[(u64, String, u64)], pid: u32| v.iter().find(|p| p.0 == pid as u64).cloned().unwrap();
    let (big, little) = (by(&auto, m), by(&auto, s));
    assert!(big.2 > little.2, "the mapper is the larger: {auto:?}");
    assert_eq!(big.1, "smaps", "the largest, read in full: {auto:?}");
    assert_eq!(little.1, "smaps_rollup", "past the budget: {auto:?}");
    let both = sources(&report(dir.path(), "both.html", &["--name", &name, "--detail", "2"]));
    assert!(both.iter().all(|p| p.1 == "smaps"), "{both:?}");
    let named = sources(&report(dir.path(), "named.html", &["--pid", &pids]));
    assert!(named.iter().all(|p| p.1 == "smaps"), "named by PID, read in full: {named:?}");
}

/// A document given through a pipe (`/dev/stdin`) makes the page its file
/// makes: the page reads its input more than once (the head, the faults a
/// page carries, the regions twice), so a pipe is copied to a file first.
/// Before, the first read took the head: a vmmap page lost its header
/// (kernel, footprint) and a snapshot was "neither JSON nor vmmap output".
#[test]
fn a_piped_document_makes_the_page_its_file_makes() {
    let tmp = tempfile::tempdir().unwrap();
    let inputs = [
        repo_path("testdata/fixtures/vmmap/04_modern_gpu_purge.txt"),
        repo_path("testdata/snapshots/format1/a.json"),
        repo_path("testdata/snapshots/format1/report-a.html"),
    ];
    for (i, input) in inputs.iter().enumerate() {
        let name = input.as_str();
        let from_file = report(tmp.path(), &format!("{i}-file.html"), &["--input", name]);
        let piped = tmp.path().join(format!("{i}-pipe.html"));
        let out = Command::new(env!("CARGO_BIN_EXE_memtally"))
            .args(["report", "--input", "/dev/stdin", "-o", piped.to_str().unwrap()])
            .stdin(piped_file(Path::new(input)))
            .output()
            .unwrap();
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        let piped = std::fs::read_to_string(&piped).unwrap().replace("/dev/stdin", name);
        assert!(piped == std::fs::read_to_string(&from_file).unwrap(), "{name}: pages differ");
    }
}

/// `path`'s bytes through a pipe, written by a thread.
pub(crate) fn piped_file(path: &Path) -> std::process::Stdio {
    let (reader, mut writer) = std::io::pipe().unwrap();
    let mut file = std::fs::File::open(path).unwrap();
    std::thread::spawn(move || std::io::copy(&mut file, &mut writer));
    std::process::Stdio::from(reader)
}
