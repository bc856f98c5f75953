//! A saved vmmap text's page: the treemap's area is the footprint (as
//! `memtally vmmap` counts it, not resident bytes: a volatile IOSurface of
//! 1.5T resident drew over everything), the header's `Physical
//! footprint:` and memtally's check of it are on the page, and the
//! parse's warnings are its notes (not "every process was read in full").

use regex::Regex;

use crate::support::{repo_path, run_json};

const GPU_PURGE: &str = "testdata/fixtures/vmmap/04_modern_gpu_purge.txt";

#[test]
fn a_vmmap_page_draws_the_footprint_and_says_what_the_parse_found() {
    let file = repo_path(GPU_PURGE);
    let dir = tempfile::tempdir().unwrap();
    let page = crate::report::report(dir.path(), "vmmap.html", &["--input", &file]);
    let html = std::fs::read_to_string(&page).unwrap();
    let vm = run_json(&["vmmap", &file, "--format", "json"]);
    let footprint = vm["footprint_total"]["footprint"].as_u64().unwrap();
    let root: u64 = Regex::new(r#"<rect id="n0" [^>]*data-v="(\d+)""#)
        .unwrap()
        .captures(&html)
        .expect("the treemap's root")[1]
        .parse()
        .unwrap();
    assert_eq!(root, footprint, "the treemap's area is vmmap's footprint");
    // Each type's box is its footprint (the largest, IOSurface: 6.0M).
    let by_type: Vec<(String, u64)> = vm["footprint"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["region_type"].as_str().unwrap().into(), t["footprint"].as_u64().unwrap()))
        .collect();
    let (ty, fp) = by_type.iter().max_by_key(|t| t.1).unwrap();
    assert!(
        html.contains(&format!(
            r#"class="k-category" data-parent="n2" data-depth="3" data-v="{fp}" data-label="{ty}""#
        )),
        "{ty} drawn as {fp}"
    );
    // The header's figure and the check, in the headline and the section.
    let header = vm["header"]["physical_footprint"].as_u64().unwrap();
    let line = Regex::new(r#"<p id="headline">(.*?)</p>"#).unwrap().captures(&html).unwrap()[1]
        .to_string();
    assert!(line.starts_with("<b>Footprint 12.2M</b> in 1 process"), "{line}");
    assert!(
        line.contains("Physical footprint (vmmap's header) 135M, memtally's 123M less"),
        "{line}"
    );
    assert!(html.contains(&format!(r#"<p id="vmmap-physical">vmmap's physical footprint (whole process): <span data-v="{header}">"#)));
    assert!(html.contains(r#"<p id="vmmap-check" data-agrees="false">memtally&#39;s of every type (the region lines): 12.2M"#));
    // The warnings `vmmap` prints are the notes.
    let notes =
        html.split(r#"<section id="notes">"#).nth(1).unwrap().split("</section>").next().unwrap();
    assert!(!notes.contains("read in full"), "{notes}");
    assert!(
        notes.contains("1 region(s) report dirty + swap above their virtual size (first: line 49"),
        "{notes}"
    );
    assert!(
        notes.contains("__FONT_DATA: 0 region line(s), but the summary table counts 1"),
        "{notes}"
    );
}
