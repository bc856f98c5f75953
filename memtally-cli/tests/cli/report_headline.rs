//! The page leads with one line (PSS, its dirty share, the three largest
//! programs) and the treemap; the notes and the machine's waterfall
//! follow it. The first screen in a browser is checked in
//! `report::the_first_screen_shows_the_treemap_and_the_waterfall_follows`.

use regex::Regex;

use crate::support::copied_fixture;

/// The recorded chromium beside a copy of it as another program, with
/// half its PSS (one mapping's worth less).
fn tree() -> (tempfile::TempDir, String) {
    let (tmp, dir) = copied_fixture("chromium-browser");
    let (from, to) = (dir.join("11672"), dir.join("5000"));
    std::fs::create_dir_all(&to).unwrap();
    for f in std::fs::read_dir(&from).unwrap() {
        let f = f.unwrap();
        std::fs::copy(f.path(), to.join(f.file_name())).unwrap();
    }
    std::fs::write(to.join("comm"), "other\n").unwrap();
    std::fs::write(to.join("cmdline"), "/usr/bin/other\0").unwrap();
    (tmp, dir.to_str().unwrap().to_string())
}

#[test]
fn the_headline_and_the_treemap_come_first() {
    let (_tmp, root) = tree();
    let dir = tempfile::tempdir().unwrap();
    let page = crate::report::report(dir.path(), "first.html", &["--proc-root", &root]);
    let html = std::fs::read_to_string(&page).unwrap();
    let json = crate::report::embedded(&page);
    let at = |needle: &str| html.find(needle).unwrap_or_else(|| panic!("{needle} on the page"));
    let (head, map) = (at(r#"<p id="headline">"#), at(r#"<section id="map">"#));
    assert!(at("</header>") < head && head < map, "the headline, then the treemap");
    assert!(map < at(r#"<p class="note">"#), "the notes follow the treemap");
    assert!(map < at(r#"<section id="machine">"#), "the waterfall follows the treemap");
    let line = Regex::new(r#"<p id="headline">(.*?)</p>"#).unwrap().captures(&html).unwrap()[1]
        .to_string();
    // PSS and the dirty share of the snapshot's totals; both programs.
    let pss = json["totals"]["pss"].as_u64().unwrap();
    let dirty = json["totals"]["pss_dirty"].as_u64().unwrap();
    assert_eq!(pss, 2 * 130_001_920, "two processes of the recorded rollup's PSS");
    assert!(line.starts_with("<b>PSS 248M</b> in 2 processes"), "{line}");
    let share = format!("{:.0}% dirty (PSS DIRTY ", 100.0 * dirty as f64 / pss as f64);
    assert!(line.contains(&share), "{line}");
    assert!(line.contains("largest programs: chromium 124M (50%), other 124M (50%)"), "{line}");
}
